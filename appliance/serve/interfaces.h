// The gatekeeper's own interface addresses (getifaddrs). They choose where the corridor and the
// window listen, and every one of them is refused as a corridor destination (passed to
// policy::decide_answers as own_addresses).
#pragma once

#include <sys/socket.h>

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "policy/address.h"
#include "policy/result.h"

namespace appliance::serve {

// Every IPv4 and IPv6 address on every interface, loopback included.
policy::Result<std::vector<policy::Address>> interface_addresses();

// The one interface address inside `cidr` ("10.88.0.0/24"). An error when the CIDR is malformed,
// or when no interface address or more than one lies inside it.
policy::Result<policy::Address> address_in_subnet(std::string_view cidr);

// `text` must be the address of an interface and never the unspecified address.
policy::Result<policy::Address> own_bind_address(std::string_view text);

// The socket address of `address`:`port`, for uv_tcp_connect and uv_tcp_bind (loop/address.h).
sockaddr_storage socket_address(const policy::Address& address, std::uint16_t port);
// The address of an AF_INET or AF_INET6 socket address (getifaddrs, resolver answers).
std::optional<policy::Address> address_of(const sockaddr* address);

}  // namespace appliance::serve
