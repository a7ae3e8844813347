#include "appliance/serve/interfaces.h"

#include <ifaddrs.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <array>
#include <cerrno>
#include <cstring>
#include <string>

#include "appliance/loop/address.h"
#include "policy/number.h"

namespace appliance::serve {

using policy::Address;
using policy::Error;
using policy::Result;

Result<std::vector<Address>> interface_addresses() {
  ifaddrs* list = nullptr;
  if (getifaddrs(&list) != 0) {
    return Error{std::string("getifaddrs: ") + std::strerror(errno)};
  }
  std::vector<Address> out;
  for (ifaddrs* it = list; it != nullptr; it = it->ifa_next) {
    if (auto a = address_of(it->ifa_addr)) out.push_back(*a);
  }
  freeifaddrs(list);
  return out;
}

namespace {

bool prefix_matches(const Address& a, const Address& prefix, unsigned length) {
  if (a.family() != prefix.family()) return false;
  const auto& x = a.bytes();
  const auto& y = prefix.bytes();
  for (unsigned bit = 0; bit < length; ++bit) {
    const unsigned byte = bit / 8;
    const unsigned mask = 0x80u >> (bit % 8);
    if ((x[byte] & mask) != (y[byte] & mask)) return false;
  }
  return true;
}

}  // namespace

Result<Address> address_in_subnet(std::string_view cidr) {
  const auto slash = cidr.find('/');
  if (slash == std::string_view::npos) {
    return Error{"--inner-subnet '" + std::string(cidr) + "' is not a CIDR (address/length)"};
  }
  auto prefix = policy::parse_answer(cidr.substr(0, slash));
  const std::string_view length_text = cidr.substr(slash + 1);
  const std::optional<unsigned> length = policy::parse_number<unsigned>(length_text);
  const unsigned max_length = prefix && prefix->is_v4() ? 32 : 128;
  if (!prefix || !length || *length > max_length) {
    return Error{"--inner-subnet '" + std::string(cidr) + "' is not a CIDR (address/length)"};
  }
  auto all = interface_addresses();
  if (!all) return all.error();
  std::vector<Address> inside;
  for (const Address& a : *all) {
    if (prefix_matches(a, *prefix, *length)) inside.push_back(a);
  }
  if (inside.empty()) {
    return Error{"no interface address lies inside --inner-subnet " + std::string(cidr)};
  }
  if (inside.size() > 1) {
    return Error{std::to_string(inside.size()) + " interface addresses lie inside --inner-subnet " +
                 std::string(cidr) + "; expected one"};
  }
  return inside.front();
}

Result<Address> own_bind_address(std::string_view text) {
  auto address = policy::parse_answer(text);
  if (!address) return Error{"--bind '" + std::string(text) + "' is not an IP address"};
  const auto& bytes = address->bytes();
  bool all_zero = true;
  for (auto b : bytes) all_zero = all_zero && b == 0;
  if (all_zero) {
    return Error{"--bind '" + std::string(text) + "' is the unspecified address; give one interface's address"};
  }
  auto all = interface_addresses();
  if (!all) return all.error();
  for (const Address& a : *all) {
    if (a == *address) return *address;
  }
  return Error{"--bind '" + std::string(text) + "' is not the address of one interface"};
}

sockaddr_storage socket_address(const policy::Address& address, std::uint16_t port) {
  loop::IpBytes ip;
  ip.v4 = address.is_v4();
  ip.bytes = address.bytes();
  return loop::socket_address(ip, port);
}

std::optional<policy::Address> address_of(const sockaddr* address) {
  const std::optional<loop::IpBytes> ip = loop::ip_of(address);
  if (!ip) return std::nullopt;
  if (!ip->v4) return Address::v6(ip->bytes);
  return Address::v4_bytes({ip->bytes[0], ip->bytes[1], ip->bytes[2], ip->bytes[3]});
}

}  // namespace appliance::serve
