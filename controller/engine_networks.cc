#include "controller/engine_networks.h"

#include <algorithm>
#include <optional>
#include <set>
#include <utility>

#include "controller/place.h"
#include "controller/records.h"
#include "controller/subnets.h"
#include "policy/number.h"

namespace controller {

namespace {

// One line of an ID and its subnets: 64 + 1 + 16 × (up to 43 + 1 for an IPv6 network).
constexpr std::size_t kMaxLineBytes = 1024;
constexpr std::size_t kMaxFileBytes = kMaxEngineNetworks * kMaxLineBytes;

std::vector<std::string_view> split_lines(std::string_view text) {
  std::vector<std::string_view> out;
  while (!text.empty()) {
    const std::size_t nl = text.find('\n');
    std::string_view line = text.substr(0, nl);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (!line.empty()) out.push_back(line);
    if (nl == std::string_view::npos) break;
    text.remove_prefix(nl + 1);
  }
  return out;
}

std::vector<std::string_view> split_words(std::string_view line) {
  std::vector<std::string_view> out;
  std::size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && line[i] == ' ') ++i;
    const std::size_t start = i;
    while (i < line.size() && line[i] != ' ') ++i;
    if (i > start) out.push_back(line.substr(start, i - start));
  }
  return out;
}

// A shown piece of external text: at most 40 bytes, control and non-ASCII bytes as '?'.
std::string shown(std::string_view text) {
  std::string out(text.substr(0, 40));
  for (char& c : out) {
    if (static_cast<unsigned char>(c) < 0x20 || static_cast<unsigned char>(c) >= 0x7f) c = '?';
  }
  return text.size() > 40 ? out + "…" : out;
}

bool is_hex(char c) {
  return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

// A line "<id> <subnet>…" into `out`; empty string: fine, else why not.
std::string parse_line(std::string_view line, NetworkSubnets& out) {
  if (line.size() > kMaxLineBytes) {
    return "a line longer than " + std::to_string(kMaxLineBytes) + " bytes";
  }
  const std::vector<std::string_view> words = split_words(line);
  if (words.empty() || !is_network_id(words[0])) {
    return "not a network ID: " + shown(words.empty() ? line : words[0]);
  }
  if (words.size() - 1 > kMaxSubnetsPerNetwork) {
    return "network " + std::string(words[0]) + ": more than " +
           std::to_string(kMaxSubnetsPerNetwork) + " subnets";
  }
  out.id = std::string(words[0]);
  out.subnets.clear();
  for (std::size_t i = 1; i < words.size(); ++i) {
    if (!is_engine_subnet(words[i])) {
      return "network " + out.id + ": not a subnet: " + shown(words[i]);
    }
    out.subnets.emplace_back(words[i]);
  }
  return {};
}

}  // namespace

bool is_network_id(std::string_view text) {
  return text.size() == 64 && std::all_of(text.begin(), text.end(), [](char c) {
           return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
         });
}

bool is_engine_subnet(std::string_view text) {
  if (parse_ipv4_net_loose(text).has_value()) return true;
  const std::size_t slash = text.find('/');
  if (slash == std::string_view::npos || slash == 0 || slash > 45) return false;
  const std::string_view address = text.substr(0, slash), prefix = text.substr(slash + 1);
  if (prefix.size() > 1 && prefix[0] == '0') return false;
  const std::optional<unsigned> bits = policy::parse_number<unsigned>(prefix);
  if (!bits || *bits > 128) return false;
  // IPv6: groups of up to four hex digits between colons, at most one "::", and an optional
  // dotted quad at the end (::ffff:10.0.0.0/104).
  std::size_t colons = 0, group = 0;
  bool dotted = false;
  for (std::size_t i = 0; i < address.size(); ++i) {
    const char c = address[i];
    if (c == ':') {
      ++colons, group = 0;
    } else if (is_hex(c)) {
      if (++group > 4) return false;
    } else if (c == '.') {
      dotted = true, group = 0;
    } else {
      return false;
    }
  }
  if (colons < 2 || colons > 8) return false;
  if (dotted) {
    const std::size_t last = address.rfind(':');
    const std::string quad = std::string(address.substr(last + 1)) + "/32";
    if (!parse_ipv4_net(quad).has_value()) return false;
  }
  const std::size_t first = address.find("::");
  return first == std::string_view::npos || address.find("::", first + 1) == std::string_view::npos;
}

Result<std::vector<std::string>> parse_network_ids(std::string_view text, const std::string& what) {
  std::vector<std::string> out;
  std::set<std::string_view> seen;
  for (const std::string_view line : split_lines(text)) {
    if (!is_network_id(line)) {
      return fail(Code::kCommandFailed, what + ": not a network ID: " + shown(line));
    }
    if (!seen.insert(line).second) continue;
    if (out.size() == kMaxEngineNetworks) {
      return fail(Code::kCommandFailed, what + ": more than " + std::to_string(kMaxEngineNetworks) +
                                            " networks (spacectl reads at most that many)");
    }
    out.emplace_back(line);
  }
  return out;
}

Result<std::vector<NetworkSubnets>> parse_network_subnet_lines(
    std::string_view text, const std::vector<std::string>& asked, const std::string& what) {
  const std::set<std::string_view> wanted(asked.begin(), asked.end());
  std::set<std::string> answered;
  std::vector<NetworkSubnets> out;
  for (const std::string_view line : split_lines(text)) {
    NetworkSubnets n;
    if (const std::string why = parse_line(line, n); !why.empty()) {
      return fail(Code::kCommandFailed, what + ": " + why);
    }
    if (wanted.count(n.id) == 0) {
      return fail(Code::kCommandFailed,
                  what + ": answered for network " + n.id + ", which was not asked for");
    }
    if (!answered.insert(n.id).second) {
      return fail(Code::kCommandFailed, what + ": answered twice for network " + n.id);
    }
    out.push_back(std::move(n));
  }
  return out;
}

std::string network_subnets_text(const std::vector<NetworkSubnets>& networks) {
  std::string out;
  for (const NetworkSubnets& n : networks) {
    out += n.id;
    for (const std::string& s : n.subnets) out += " " + s;
    out += "\n";
  }
  return out;
}

Result<std::map<std::string, std::vector<std::string>>> parse_network_subnets_file(
    std::string_view text) {
  std::map<std::string, std::vector<std::string>> out;
  for (const std::string_view line : split_lines(text)) {
    NetworkSubnets n;
    if (const std::string why = parse_line(line, n); !why.empty()) {
      return fail(Code::kRecordUnreadable, std::string(kNetworkSubnetsFile) + ": " + why);
    }
    if (out.size() == kMaxEngineNetworks) {
      return fail(Code::kRecordUnreadable, std::string(kNetworkSubnetsFile) + ": more than " +
                                               std::to_string(kMaxEngineNetworks) + " networks");
    }
    if (!out.emplace(std::move(n.id), std::move(n.subnets)).second) {
      return fail(Code::kRecordUnreadable, std::string(kNetworkSubnetsFile) + ": a network twice");
    }
  }
  return out;
}

Result<std::vector<std::string>> engine_subnets(Place& place, const std::string& state) {
  Result<std::vector<std::string>> ids = place.network_ids();
  if (!ids) return ids.error();
  // The file only saves engine calls: one that cannot be read or parsed counts as empty.
  std::map<std::string, std::vector<std::string>> known;
  if (Result<std::optional<std::string>> text =
          read_state_file(state, kNetworkSubnetsFile, kMaxFileBytes);
      text && text->has_value()) {
    if (auto parsed = parse_network_subnets_file(**text); parsed) known = std::move(*parsed);
  }
  std::vector<std::string> unknown;
  for (const std::string& id : *ids) {
    if (known.count(id) == 0) unknown.push_back(id);
  }
  if (!unknown.empty()) {
    Result<std::vector<NetworkSubnets>> read = place.network_subnets(unknown);
    if (!read) return read.error();
    for (NetworkSubnets& n : *read) known[n.id] = std::move(n.subnets);
  }
  std::vector<NetworkSubnets> now;
  std::vector<std::string> out;
  for (const std::string& id : *ids) {
    const auto it = known.find(id);
    if (it == known.end()) continue;  // removed between the two calls
    now.push_back({id, it->second});
    out.insert(out.end(), it->second.begin(), it->second.end());
  }
  // Only when something changed; a failed write costs the next allocation some engine calls.
  if (!unknown.empty() || now.size() != known.size()) {
    (void)write_state_file(state, kNetworkSubnetsFile, network_subnets_text(now));
  }
  return out;
}

}  // namespace controller
