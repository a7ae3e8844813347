// Socket addresses, defined once: built from address bytes for bind and connect, and read back
// (getsockname, getifaddrs, resolver answers). The only sockaddr casts outside libuv's own.
#pragma once

#include <netinet/in.h>
#include <sys/socket.h>
#include <uv.h>

#include <array>
#include <cstdint>
#include <optional>
#include <span>

namespace appliance::loop {

// Address bytes in network order: 4 (IPv4) or 16 (IPv6) of `bytes` are used.
struct IpBytes {
  bool v4 = true;
  std::array<std::uint8_t, 16> bytes{};
};

// The socket address of `ip`:`port` (port in host order), for uv_tcp_bind and uv_tcp_connect.
sockaddr_storage socket_address(const IpBytes& ip, std::uint16_t port) noexcept;
inline const sockaddr* as_sockaddr(const sockaddr_storage& storage) noexcept {
  return reinterpret_cast<const sockaddr*>(&storage);
}

// The address of an AF_INET or AF_INET6 socket address; nullopt for any other family.
std::optional<IpBytes> ip_of(const sockaddr* address) noexcept;
// The port of an AF_INET or AF_INET6 socket address (host order); 0 for any other family.
std::uint16_t port_of(const sockaddr_storage& address) noexcept;

// The local port of a bound TCP handle (port 0 picked one): 0 or a libuv error.
int local_port(const uv_tcp_t* tcp, std::uint16_t& port) noexcept;

}  // namespace appliance::loop
