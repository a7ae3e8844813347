// The subnets of a space's two networks, allocated by spacectl from a pool the user can set
// (docs/subnets.md), instead of from the engine's default address pools, which hold about 31
// bridge networks (15 spaces).
//
// Each network gets the smallest block that holds what it needs (kInnerHosts, kOuterHosts, plus
// the network and broadcast addresses). The allocation is written into the space's record under
// its lock and under the pool lock (<state>/locks/subnets.lock), so two spacectl processes never
// hand out the same block: a block is free when no record holds it and no network of the engine
// (anyone's, ours or not) overlaps it. Removing the record frees it; sweep frees the blocks of
// records nothing at the place carries any more.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "controller/errors.h"

namespace controller {

// 10.213.0.0/16: RFC 1918 (never a public address a space network could shadow), outside the
// engine's default pools (172.17.0.0/16–172.31.0.0/16, 192.168.0.0/16 in /20s) and outside the
// ranges home routers, VPNs, clouds and other container tools use by default (docs/subnets.md
// lists them). 4096 spaces of two /29s.
inline constexpr std::string_view kDefaultSubnetPool = "10.213.0.0/16";

// What each network must hold. Inner: its gateway address (the engine reserves it even when the
// host gets none), the gatekeeper, the space, and one probe of `escape-test`. Outer: its gateway,
// the gatekeeper, and the listener and probe of `escape-test`'s outer-network case.
inline constexpr int kInnerHosts = 4;
inline constexpr int kOuterHosts = 4;
// The largest pool block a space network may get and the smallest pool: a /29 holds 6 hosts.
inline constexpr int kMinPoolPrefix = 8;
inline constexpr int kMaxPoolPrefix = 29;

struct Ipv4Net {
  std::uint32_t base = 0;  // host order, host bits zero
  int prefix = 32;
  [[nodiscard]] std::uint64_t size() const { return std::uint64_t{1} << (32 - prefix); }
  [[nodiscard]] std::uint64_t end() const {
    return std::uint64_t{base} + size();
  }  // one past the last
};

// Strict "a.b.c.d/n": four decimal octets without leading zeros, 0 ≤ n ≤ 32, host bits zero.
std::optional<Ipv4Net> parse_ipv4_net(std::string_view text);
// Like parse_ipv4_net, but host bits may be set (an engine network's subnet, "10.0.0.1/24"): the
// block that holds it.
std::optional<Ipv4Net> parse_ipv4_net_loose(std::string_view text);
std::string to_string(const Ipv4Net& net);
bool overlaps(const Ipv4Net& a, const Ipv4Net& b);
// The longest prefix whose block holds `hosts` addresses besides the network and broadcast ones.
int prefix_for_hosts(int hosts);

// A pool the user may set: an Ipv4Net of prefix kMinPoolPrefix..kMaxPoolPrefix inside RFC 1918
// (10/8, 172.16/12, 192.168/16) or RFC 6598 (100.64/10): a space network in a public range would
// send the host's own traffic for that range into the space's bridge.
Result<Ipv4Net> parse_subnet_pool(std::string_view text);

// The lowest aligned block of `prefix` inside `pool` that overlaps nothing in `used`;
// kInvalidArgument naming the pool when there is none.
Result<Ipv4Net> first_free_block(const Ipv4Net& pool, int prefix, const std::vector<Ipv4Net>& used);

struct SpaceSubnets {
  std::string inner, outer;  // "a.b.c.d/n"
};

// Under the pool lock: the blocks every record in `state` holds plus `engine_subnets` (every
// network of the engine, IPv6 ones ignored) are taken; two free blocks of the pool are written
// into the record of `id` (which must exist: create writes it `preparing` first) and returned.
// The caller holds the space's lock.
Result<SpaceSubnets> allocate_space_subnets(const std::string& state, const std::string& id,
                                            std::string_view pool,
                                            const std::vector<std::string>& engine_subnets);

// Every block the records in `state` hold, with the id holding it ("<id> inner|outer <subnet>").
Result<std::vector<std::pair<std::string, Ipv4Net>>> recorded_subnets(const std::string& state);

}  // namespace controller
