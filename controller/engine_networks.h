// The subnets of every network a place's engine has (anyone's), for the subnet allocation
// (controller/subnets.h), at a cost that does not grow with the number of spaces.
//
// A network's subnets never change after it is made (the engine has no call that changes them)
// and its ID (64 hex digits) is never given to another network. So the subnets read once are
// kept in the state directory (<state>/network-subnets), keyed by ID: an allocation lists the
// IDs (one engine call) and reads the subnets of only the IDs it has not seen (one more call,
// none when there are none), usually the two networks of the space made before it. The Docker
// CLI asks the engine once per network it inspects, so inspecting all of them every time cost
// about 11 ms per network at 270 networks on a busy host.
//
// Everything the engine prints is external input: at most kMaxEngineNetworks IDs, each exactly
// 64 lowercase hex digits, at most kMaxSubnetsPerNetwork subnets each, every subnet an IPv4 or
// IPv6 network in CIDR form; anything else is an error naming the call. The file is spacectl's
// own, read with the same strictness; an unreadable or malformed one is ignored (it only saves
// engine calls) and written anew.
#pragma once

#include <cstddef>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "controller/errors.h"

namespace controller {

class Place;

inline constexpr std::size_t kMaxEngineNetworks = 16384;
inline constexpr std::size_t kMaxSubnetsPerNetwork = 16;
inline constexpr std::string_view kNetworkSubnetsFile = "network-subnets";

// One network and its subnets as the engine has them ("10.213.0.0/29", "fd00::/64").
struct NetworkSubnets {
  std::string id;
  std::vector<std::string> subnets;
};

// 64 lowercase hex digits.
bool is_network_id(std::string_view text);
// An IPv4 network (host bits allowed, as an engine may print them) or an IPv6 one in CIDR form:
// hex digits, colons and at most one embedded dotted quad, prefix 0–128.
bool is_engine_subnet(std::string_view text);

// `<ls> --no-trunc --format {{.ID}}`: one ID a line (empty lines skipped). `what` names the call.
Result<std::vector<std::string>> parse_network_ids(std::string_view text, const std::string& what);
// Lines "<id> <subnet> <subnet> …" (no subnet: a network without addresses). Every ID must be one
// of `asked`, at most once.
Result<std::vector<NetworkSubnets>> parse_network_subnet_lines(
    std::string_view text, const std::vector<std::string>& asked, const std::string& what);

// The file's text for `networks` (one "<id> <subnet>…" line each) and back; a malformed text is
// an error (the caller then ignores the file).
std::string network_subnets_text(const std::vector<NetworkSubnets>& networks);
Result<std::map<std::string, std::vector<std::string>>> parse_network_subnets_file(
    std::string_view text);

// Every subnet of every network `place` has now: network_ids(), then network_subnets() of the
// IDs the file in `state` does not hold; the file is then rewritten with exactly the networks
// listed (a removed network leaves it). A network removed between the two calls is left out.
Result<std::vector<std::string>> engine_subnets(Place& place, const std::string& state);

}  // namespace controller
