#include "policy/control_messages.h"

#include <utility>

#include "policy/address.h"
#include "policy/ascii.h"
#include "policy/header_rules.h"
#include "policy/json.h"
#include "policy/name.h"

namespace policy {
namespace {

constexpr std::uint16_t kHttpDefaultPort = 80;    // RFC 9110 §4.2.1
constexpr std::uint16_t kHttpsDefaultPort = 443;  // RFC 9110 §4.2.2
constexpr std::size_t kMaxUpstreamHostLength = 253;
constexpr std::size_t kMaxUpstreamLabelLength = 63;

constexpr auto lower = ascii::to_lower;
using ascii::is_alpha;
using ascii::is_digit;
using ascii::is_hex;

std::string lowered(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = lower(c);
  return out;
}

// The body of a control request: one JSON object of at most kMaxControlBody bytes.
Result<json::Value> parse_body(std::string_view body) {
  if (body.size() > kMaxControlBody) return Error{std::string(kMsgNotJson)};
  json::Limits limits;
  limits.max_bytes = kMaxControlBody;
  limits.max_depth = kMaxControlDepth;
  limits.max_elements = kMaxControlElements;
  Result<json::Value> value = json::parse(body, limits);
  if (!value) return Error{std::string(kMsgNotJson)};
  if (!value->is_object()) return Error{std::string(kMsgNotObject)};
  return value;
}

// JavaScript's trim() on the ASCII range, as the reference normalises allowlist entries.
std::string_view trimmed(std::string_view s) {
  constexpr std::string_view kSpace = " \t\n\v\f\r";
  const std::size_t first = s.find_first_not_of(kSpace);
  if (first == std::string_view::npos) return {};
  return s.substr(first, s.find_last_not_of(kSpace) - first + 1);
}

// A host name in an upstream URL. Looser than the corridor's name predicate on purpose: a grant
// is the user's decision, and a single label ("upstream", a Docker alias) or an underscore is a
// legitimate upstream. Still refused: a last label that is a number in any spelling ("1.2.3",
// "0x7f000001", "2130706433"), because a resolver may read it as an address that no strict
// parser saw.
bool is_upstream_host_name(std::string_view host) {
  if (host.empty() || host.size() > kMaxUpstreamHostLength) return false;
  std::size_t start = 0;
  std::string_view last;
  for (std::size_t i = 0; i <= host.size(); ++i) {
    if (i < host.size() && host[i] != '.') {
      const char c = host[i];
      if (!is_alpha(c) && !is_digit(c) && c != '-' && c != '_') return false;
      continue;
    }
    const std::string_view label = host.substr(start, i - start);
    if (label.empty() || label.size() > kMaxUpstreamLabelLength) return false;
    last = label;
    start = i + 1;
  }
  bool all_digits = true;
  for (char c : last) all_digits = all_digits && is_digit(c);
  if (all_digits) return false;
  if (last.size() > 2 && last[0] == '0' && lower(last[1]) == 'x') {
    bool all_hex = true;
    for (char c : last.substr(2)) all_hex = all_hex && is_hex(c);
    if (all_hex) return false;
  }
  return true;
}

// RFC 3986 §3.3/§3.4 characters of a path and query (unreserved, sub-delims, ':', '@', '/', '?'
// and '%' followed by two hex digits). Everything else, including '\\' which WHATWG parsers
// turn into '/', is refused rather than silently re-encoded.
bool is_path_and_query(std::string_view s) {
  constexpr std::string_view kAllowed = "-._~!$&'()*+,;=:@/?";
  for (std::size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    if (c == '%') {
      if (i + 2 >= s.size() || !is_hex(s[i + 1]) || !is_hex(s[i + 2])) return false;
      i += 2;
      continue;
    }
    if (!is_alpha(c) && !is_digit(c) && kAllowed.find(c) == std::string_view::npos) return false;
  }
  return true;
}

// 1..5 decimal digits without a leading zero, value 1..65535.
std::optional<std::uint16_t> parse_port(std::string_view text) {
  if (text.empty() || text.size() > 5 || text[0] == '0') return std::nullopt;
  std::uint32_t value = 0;
  for (char c : text) {
    if (!is_digit(c)) return std::nullopt;
    value = value * 10 + static_cast<std::uint32_t>(c - '0');
  }
  if (value > 65535) return std::nullopt;
  return static_cast<std::uint16_t>(value);
}

bool is_header_name(std::string_view name) {
  if (name.empty() || name.size() > kMaxHeaderNameLength) return false;
  for (char c : name) {
    if (!is_alpha(c) && !is_digit(c) && c != '-') return false;
  }
  return true;
}

}  // namespace

std::string not_a_domain_message(std::string_view shown_name) {
  std::string out = "'";
  out += shown_name;
  out += "' is not a domain name. The allowlist holds exact names, no wildcards and no addresses.";
  return out;
}

Result<NetworkPolicy> parse_network_request(std::string_view body) {
  Result<json::Value> parsed = parse_body(body);
  if (!parsed) return parsed.error();
  const json::Value& request = *parsed;

  NetworkPolicy policy;
  const json::Value* mode = request.find("mode");
  std::optional<Mode> chosen;
  if (mode != nullptr && mode->is_string()) chosen = mode_from_text(mode->as_string());
  if (!chosen) return Error{std::string(kMsgBadMode)};
  policy.mode = *chosen;

  // docs/reference-behaviour.md#control-validation: a missing or non-array "domains" is an empty
  // list.
  const json::Value* domains = request.find("domains");
  if (domains == nullptr || !domains->is_array()) return policy;
  if (domains->items().size() > kMaxAllowlistDomains) {
    return Error{std::string(kMsgTooManyDomains)};
  }
  for (const json::Value& entry : domains->items()) {
    // A non-string entry is shown as '' (docs/reference-behaviour.md#control-validation), never as
    // its JSON text.
    const std::string_view raw = entry.is_string() ? trimmed(entry.as_string()) : "";
    std::optional<std::string> name = checked_name(raw);
    if (!name) return Error{not_a_domain_message(normalise_name(raw))};
    policy.domains.insert(std::move(*name));  // duplicates collapse
  }
  return policy;
}

std::string network_request_json(const NetworkPolicy& policy) {
  std::vector<json::Value> domains;
  domains.reserve(policy.domains.size());
  for (const std::string& name : policy.domains) domains.push_back(json::Value::string(name));
  std::map<std::string, json::Value> members;
  members.emplace("mode", json::Value::string(std::string(mode_text(policy.mode))));
  members.emplace("domains", json::Value::array(std::move(domains)));
  return json::Value::object(std::move(members)).dump();
}

Result<std::vector<Range>> parse_blocked_request(std::string_view body) {
  Result<json::Value> parsed = parse_body(body);
  if (!parsed) return parsed.error();
  const json::Value* ranges = parsed->find("ranges");
  if (ranges == nullptr || !ranges->is_array() || ranges->items().size() > kMaxOperatorRanges) {
    return Error{std::string(kMsgBadRanges)};
  }
  std::vector<Range> out;
  for (const json::Value& entry : ranges->items()) {
    std::optional<Range> range = entry.is_string() ? parse_operator_range(entry.as_string()) : std::nullopt;
    if (!range) return Error{std::string(kMsgBadRanges)};
    out.push_back(*range);
  }
  return out;
}

std::string blocked_request_json(std::span<const Range> ranges) {
  std::vector<json::Value> items;
  for (const Range& r : ranges) items.push_back(json::Value::string(range_text(r)));
  std::map<std::string, json::Value> members;
  members.emplace("ranges", json::Value::array(std::move(items)));
  return json::Value::object(std::move(members)).dump();
}

std::string UpstreamUrl::to_string() const {
  std::string out = scheme + "://";
  if (host.find(':') != std::string::npos) {
    out += '[' + host + ']';
  } else {
    out += host;
  }
  const std::uint16_t default_port = scheme == "https" ? kHttpsDefaultPort : kHttpDefaultPort;
  if (port != default_port) out += ':' + std::to_string(port);
  out += path;
  return out;
}

Result<UpstreamUrl> parse_upstream_url(std::string_view text) {
  const Error not_url{std::string(kMsgUpstreamNotUrl)};
  // No whitespace, controls or non-ASCII anywhere: WHATWG parsers strip or re-encode them, and
  // a URL that means something different to two parsers has no place in a grant.
  for (char c : text) {
    const auto b = static_cast<unsigned char>(c);
    if (b <= 0x20 || b >= 0x7f) return not_url;
  }
  // RFC 3986 §3.1: scheme = ALPHA *( ALPHA / DIGIT / "+" / "-" / "." ), case-insensitive.
  const std::size_t colon = text.find(':');
  if (colon == std::string_view::npos || colon == 0 || !is_alpha(text[0])) return not_url;
  for (char c : text.substr(0, colon)) {
    if (!is_alpha(c) && !is_digit(c) && c != '+' && c != '-' && c != '.') return not_url;
  }
  UpstreamUrl url;
  url.scheme = lowered(text.substr(0, colon));
  if (url.scheme == "http") {
    url.port = kHttpDefaultPort;
  } else if (url.scheme == "https") {
    url.port = kHttpsDefaultPort;
  } else {
    return Error{std::string(kMsgUpstreamScheme)};
  }
  std::string_view rest = text.substr(colon + 1);
  if (rest.substr(0, 2) != "//") return not_url;
  rest.remove_prefix(2);
  if (rest.find('#') != std::string_view::npos) return not_url;  // a fragment is never sent

  const std::size_t authority_end = rest.find_first_of("/?");
  const std::string_view authority = rest.substr(0, authority_end);
  const std::string_view path =
      authority_end == std::string_view::npos ? std::string_view() : rest.substr(authority_end);
  // RFC 3986 §3.2.1 user info: never in a grant (it would be a second, visible credential).
  if (authority.find('@') != std::string_view::npos) return not_url;

  std::string_view host;
  std::string_view port_text;
  bool has_port = false;
  if (!authority.empty() && authority[0] == '[') {
    const std::size_t close = authority.find(']');
    if (close == std::string_view::npos) return not_url;
    host = authority.substr(1, close - 1);
    const std::string_view after = authority.substr(close + 1);
    if (!after.empty()) {
      if (after[0] != ':') return not_url;
      has_port = true;
      port_text = after.substr(1);
    }
    if (!parse_ipv6_strict(host)) return not_url;
    url.host = lowered(host);
  } else {
    const std::size_t port_colon = authority.find(':');
    host = authority.substr(0, port_colon);
    if (port_colon != std::string_view::npos) {
      has_port = true;
      port_text = authority.substr(port_colon + 1);
    }
    if (!parse_ipv4_strict(host) && !is_upstream_host_name(host)) return not_url;
    url.host = lowered(host);
  }
  if (has_port) {
    const std::optional<std::uint16_t> port = parse_port(port_text);
    if (!port) return not_url;
    url.port = *port;
  }

  if (!is_path_and_query(path)) return not_url;
  if (path.empty() || path[0] == '?') {
    url.path = "/" + std::string(path);  // WHATWG: an empty path of an http(s) URL is "/"
  } else {
    url.path = std::string(path);
  }
  return url;
}

bool is_grant_id(std::string_view id) {
  if (id.empty() || id.size() > kMaxGrantIdLength) return false;
  for (char c : id) {
    if (!is_alpha(c) && !is_digit(c) && c != '.' && c != '_' && c != '-') return false;
  }
  return true;
}

Result<Grant> parse_grant_request(std::string_view body) {
  Result<json::Value> parsed = parse_body(body);
  if (!parsed) return parsed.error();
  json::Value& request = *parsed;

  Grant grant;
  const json::Value* id = request.find("id");
  if (id == nullptr || !id->is_string() || !is_grant_id(id->as_string())) {
    return Error{std::string(kMsgBadGrantId)};
  }
  grant.id = id->as_string();

  // docs/reference-behaviour.md#control-validation: the presence of either key, even as null, makes
  // this a secret grant, so a typo cannot silently turn a key grant into an open one.
  auto& members = request.members();
  const auto header = members.find("header");
  const auto secret = members.find("secret");
  // The secret leaves the parsed tree at once, into a Secret that wipes it on every path out.
  std::optional<Secret> held;
  if (secret != members.end() && secret->second.is_string()) held.emplace(secret->second.take_string());
  if (header != members.end() || secret != members.end()) {
    if (header == members.end() || !header->second.is_string()) {
      return Error{std::string(kMsgBadHeaderName)};
    }
    std::string name = lowered(header->second.as_string());
    if (!is_header_name(name)) return Error{std::string(kMsgBadHeaderName)};
    if (!grant_header_allowed(name)) return Error{std::string(kMsgHeaderNotInjectable)};
    if (!held || held->size() == 0 || held->size() > kMaxSecretLength) {
      return Error{std::string(kMsgHeaderNeedsSecret)};
    }
    // CR and LF would split the injected header (RFC 9110 §5.5); NUL ends C strings early.
    if (held->reveal_for_upstream().find_first_of(std::string_view("\r\n\0", 3)) != std::string_view::npos) {
      return Error{std::string(kMsgSecretBadBytes)};
    }
    grant.header = std::move(name);
    grant.secret = std::move(held);
  }

  const json::Value* upstream = request.find("upstream");
  if (upstream == nullptr || !upstream->is_string()) return Error{std::string(kMsgUpstreamNotUrl)};
  Result<UpstreamUrl> url = parse_upstream_url(upstream->as_string());
  if (!url) return url.error();
  grant.upstream = std::move(*url);
  if (const json::Value* unsafe = request.find("unsafe_private_upstream")) {
    if (!unsafe->is_bool()) return Error{std::string(kMsgBadUnsafePrivate)};
    grant.unsafe_private_upstream = unsafe->as_bool();
  }
  if (grant.secret && grant.upstream.scheme == "http") {
    const bool literal = parse_ipv4_strict(grant.upstream.host) || parse_ipv6_strict(grant.upstream.host);
    if (!literal || !grant.unsafe_private_upstream) return Error{std::string(kMsgSecretOverHttp)};
  }
  return grant;
}

std::string error_json(std::string_view message) {
  std::string out = "{\"error\":";
  json::append_quoted(out, message);
  out += '}';
  return out;
}

std::string ok_json() { return "{\"ok\":true}"; }

}  // namespace policy
