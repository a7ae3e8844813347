#include "appliance/loop/address.h"

#include <cstring>

namespace appliance::loop {

sockaddr_storage socket_address(const IpBytes& ip, std::uint16_t port) noexcept {
  sockaddr_storage storage{};
  if (ip.v4) {
    sockaddr_in sin{};
    sin.sin_family = AF_INET;
    sin.sin_port = htons(port);
    std::memcpy(&sin.sin_addr, ip.bytes.data(), 4);
    std::memcpy(&storage, &sin, sizeof sin);
  } else {
    sockaddr_in6 sin6{};
    sin6.sin6_family = AF_INET6;
    sin6.sin6_port = htons(port);
    std::memcpy(&sin6.sin6_addr, ip.bytes.data(), 16);
    std::memcpy(&storage, &sin6, sizeof sin6);
  }
  return storage;
}

std::optional<IpBytes> ip_of(const sockaddr* address) noexcept {
  if (address == nullptr) return std::nullopt;
  IpBytes ip;
  if (address->sa_family == AF_INET) {
    sockaddr_in sin{};
    std::memcpy(&sin, address, sizeof sin);
    std::memcpy(ip.bytes.data(), &sin.sin_addr, 4);
    return ip;
  }
  if (address->sa_family == AF_INET6) {
    sockaddr_in6 sin6{};
    std::memcpy(&sin6, address, sizeof sin6);
    ip.v4 = false;
    std::memcpy(ip.bytes.data(), &sin6.sin6_addr, 16);
    return ip;
  }
  return std::nullopt;
}

std::uint16_t port_of(const sockaddr_storage& address) noexcept {
  if (address.ss_family == AF_INET) {
    sockaddr_in sin{};
    std::memcpy(&sin, &address, sizeof sin);
    return ntohs(sin.sin_port);
  }
  if (address.ss_family == AF_INET6) {
    sockaddr_in6 sin6{};
    std::memcpy(&sin6, &address, sizeof sin6);
    return ntohs(sin6.sin6_port);
  }
  return 0;
}

int local_port(const uv_tcp_t* tcp, std::uint16_t& port) noexcept {
  sockaddr_storage bound{};
  int length = sizeof bound;
  const int rc = uv_tcp_getsockname(tcp, reinterpret_cast<sockaddr*>(&bound), &length);
  if (rc != 0) return rc;
  port = port_of(bound);
  return 0;
}

}  // namespace appliance::loop
