#include "policy/window.h"

#include <array>

#include "policy/ascii.h"
#include "policy/corridor.h"
#include "policy/header_rules.h"
#include "policy/json.h"
#include "policy/name.h"
#include "policy/ranges.h"
#include "policy/special_names.h"

namespace policy {
namespace {

constexpr std::string_view kKeyPrefix = "/k/";
constexpr std::string_view kModelPrefix = "/model/";

constexpr auto lower = ascii::to_lower;
using ascii::is_hex;

bool is_grant_char(char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' ||
         c == '_' || c == '-';
}

std::string_view trim_ows(std::string_view v) {
  // RFC 9110 §5.6.3: OWS is SP / HTAB.
  while (!v.empty() && (v.front() == ' ' || v.front() == '\t')) v.remove_prefix(1);
  while (!v.empty() && (v.back() == ' ' || v.back() == '\t')) v.remove_suffix(1);
  return v;
}

bool iequals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (lower(a[i]) != lower(b[i])) return false;
  }
  return true;
}

// Tokens listed in every Connection field (RFC 9110 §7.6.1).
std::vector<std::string> connection_options(std::span<const Header> headers) {
  std::vector<std::string> out;
  for (const Header& h : headers) {
    if (!iequals(h.name, "connection")) continue;
    std::string_view v = h.value;
    while (!v.empty()) {
      const std::size_t comma = v.find(',');
      const std::string_view token = trim_ows(v.substr(0, comma));
      if (!token.empty()) out.emplace_back(token);
      if (comma == std::string_view::npos) break;
      v.remove_prefix(comma + 1);
    }
  }
  return out;
}

bool named_by_connection(std::string_view name, const std::vector<std::string>& options) {
  for (const std::string& o : options) {
    if (iequals(name, o)) return true;
  }
  return false;
}

bool is_loopback_or_unspecified(const Address& a) {
  const auto& b = a.bytes();
  if (a.is_v4()) return b[0] == 127 || b[0] == 0;  // RFC 1122 §3.2.1.3: 127/8 and 0/8 are this host
  bool zero_prefix = true;
  for (std::size_t i = 0; i < 15; ++i) zero_prefix = zero_prefix && b[i] == 0;
  if (zero_prefix && (b[15] == 0 || b[15] == 1)) return true;  // RFC 4291 §2.5.2/§2.5.3: :: and ::1
  // RFC 4291 §2.5.5.2 IPv4-mapped ::ffff:0:0/96 of 127/8 or 0/8 reaches this host too.
  bool mapped = true;
  for (std::size_t i = 0; i < 10; ++i) mapped = mapped && b[i] == 0;
  mapped = mapped && b[10] == 0xff && b[11] == 0xff;
  return mapped && (b[12] == 127 || b[12] == 0);
}

}  // namespace

bool header_name_is(std::string_view name, std::string_view lower_name) { return iequals(name, lower_name); }

bool may_retry_method(std::string_view method) {
  return method == "GET" || method == "HEAD" || method == "OPTIONS" || method == "TRACE";
}

Result<Secret> parse_window_key_request(std::string_view body) {
  const Error bad{std::string(kMsgBadWindowKey)};
  auto parsed = json::parse(body, json::Limits{kMaxControlBody, kMaxControlDepth, kMaxControlElements});
  if (!parsed) return Error{std::string(kMsgNotJson)};
  json::Value& value = parsed.value();
  if (!value.is_object()) return Error{std::string(kMsgNotObject)};
  auto found = value.members().find("key");
  if (found == value.members().end() || !found->second.is_string()) return bad;
  std::string key = found->second.take_string();
  bool ok = key.size() == kWindowKeyHexLength;
  for (char& c : key) {
    ok = ok && is_hex(c);
    c = lower(c);
  }
  Secret secret(std::move(key));  // wiped on every path out
  if (!ok) return bad;
  return secret;
}

WindowRoute split_window_route(std::string_view target) {
  WindowRoute route;
  if (target.substr(0, kKeyPrefix.size()) != kKeyPrefix) return route;
  const std::string_view after_prefix = target.substr(kKeyPrefix.size());
  const std::size_t slash = after_prefix.find('/');
  if (slash == std::string_view::npos) return route;
  route.has_key_segment = true;
  route.key = after_prefix.substr(0, slash);
  const std::string_view after_key = after_prefix.substr(slash);
  if (after_key.substr(0, kModelPrefix.size()) != kModelPrefix) return route;
  const std::string_view id_and_rest = after_key.substr(kModelPrefix.size());
  std::size_t id_end = 0;
  while (id_end < id_and_rest.size() && is_grant_char(id_and_rest[id_end])) ++id_end;
  const std::string_view id = id_and_rest.substr(0, id_end);
  const std::string_view rest = id_and_rest.substr(id_end);
  // docs/reference-behaviour.md#window-route: ^/model/([A-Za-z0-9._-]{1,64})([/?][^]*)?$
  if (id.empty() || id.size() > kMaxGrantIdLength) return route;
  if (!rest.empty() && rest[0] != '/' && rest[0] != '?') return route;
  route.grant_id = id;
  route.rest = rest;
  return route;
}

std::string upstream_target(const UpstreamUrl& upstream, std::string_view rest) {
  // The reference used URL.pathname: the upstream's own query is not part of the prefix.
  std::string_view path = upstream.path;
  path = path.substr(0, path.find('?'));
  if (!path.empty() && path.back() == '/') path.remove_suffix(1);
  std::string out(path);
  out += rest;
  if (out.empty() || out[0] != '/') out.insert(out.begin(), '/');  // origin-form, RFC 9112 §3.2.1
  return out;
}

std::string upstream_authority(const UpstreamUrl& upstream) {
  std::string out = upstream.host.find(':') != std::string::npos ? "[" + upstream.host + "]" : upstream.host;
  const std::uint16_t default_port = upstream.scheme == "https" ? 443 : 80;
  if (upstream.port != default_port) out += ":" + std::to_string(upstream.port);
  return out;
}

std::optional<Address> upstream_literal(const UpstreamUrl& upstream) {
  if (auto v4 = parse_ipv4_strict(upstream.host)) return v4;
  return parse_ipv6_strict(upstream.host);
}

std::optional<Word> upstream_refused_by_name(const UpstreamUrl& upstream) {
  const std::string normalised = normalise_name(upstream.host);
  for (std::string_view refused : always_refused_names()) {
    if (normalised == refused) return Word::kDenyAlwaysRefused;
  }
  if (special_use_row(normalised) != nullptr) return Word::kDenySpecialUseName;
  return std::nullopt;
}

WindowAnswerDecision decide_window_answers(const UpstreamUrl& upstream,
                                           bool unsafe_private_upstream,
                                           std::span<const Address> answers,
                                           const OwnListeners& own,
                                           std::span<const Range> operator_blocked) {
  WindowAnswerDecision out;
  if (answers.empty()) {
    out.decision = Decision::with_detail(Word::kDenyUnresolved, "no-answer");
    return out;
  }
  const bool private_allowed = unsafe_private_upstream || upstream_literal(upstream).has_value();
  bool own_port = false;
  for (std::uint16_t p : own.ports) own_port = own_port || p == upstream.port;
  const Address* chosen = nullptr;
  for (const Address& a : answers) {
    bool own_address = is_loopback_or_unspecified(a);
    for (const Address& o : own.addresses) own_address = own_address || o == a;
    if (own_address) {
      // Feeding the window into itself would eat its own sockets (docs/reference-behaviour.md#window-grants);
      // any other port of the gatekeeper's own host is not an upstream either.
      out.decision = Decision::of(own_port ? Word::kDenyOwnListener : Word::kDenyBlockedAddress);
      return out;
    }
    if (in_any_range(operator_blocked, a) || is_cloud_endpoint(a) ||
        (classify(a).blocked && !(private_allowed && is_private_network(a)))) {
      out.decision = Decision::of(Word::kDenyBlockedAddress);
      return out;
    }
    if (chosen == nullptr && a.is_v4()) chosen = &a;
  }
  if (chosen == nullptr) chosen = &answers.front();
  out.decision = Decision::of(Word::kAllow);
  out.endpoint = WindowEndpoint(*chosen, upstream.port);
  return out;
}

bool is_field_name(std::string_view name) {
  // RFC 9110 §5.1: field-name = token = 1*tchar.
  if (name.empty()) return false;
  for (char c : name) {
    const bool tchar = (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                       std::string_view("!#$%&'*+-.^_`|~").find(c) != std::string_view::npos;
    if (!tchar) return false;
  }
  return true;
}

bool is_field_value(std::string_view value) {
  // RFC 9110 §5.5: no CR, LF or NUL in a value (they would split or end a header line).
  return value.find_first_of(std::string_view("\r\n\0", 3)) == std::string_view::npos;
}

FramingCheck check_request_framing(std::span<const Header> headers, bool http10) {
  FramingCheck out;
  int lengths = 0;
  int encodings = 0;
  std::string_view length_text;
  std::string_view encoding_text;
  for (const Header& h : headers) {
    // A field the upstream could read differently from us (llhttp 8.1 takes an empty name) is
    // refused as a framing shape: nothing unparsable by the upstream leaves the window.
    if (!is_field_name(h.name) || !is_field_value(h.value)) return out;
    if (iequals(h.name, "content-length")) {
      ++lengths;
      length_text = trim_ows(h.value);
    } else if (iequals(h.name, "transfer-encoding")) {
      ++encodings;
      encoding_text = trim_ows(h.value);
    }
  }
  // RFC 9112 §6.3 item 3: both present is a smuggling shape; §6.3 item 5: several differing
  // lengths are unrecoverable. We refuse any second Content-Length field, equal or not.
  if (lengths > 1 || (lengths == 1 && encodings > 0)) return out;
  if (encodings > 0) {
    // RFC 9112 §6.1: chunked must be the final coding, and a 1.0 request with Transfer-Encoding
    // has faulty framing. Other codings would reach the upstream re-framed, so only exactly
    // "chunked" (one field) passes.
    if (http10 || encodings > 1 || !iequals(encoding_text, "chunked")) return out;
    out.ok = true;
    out.framing = BodyFraming::kChunked;
    return out;
  }
  if (lengths == 1) {
    // RFC 9110 §8.6: 1*DIGIT. Bounded to 15 digits so it fits without overflow.
    if (length_text.empty() || length_text.size() > 15) return out;
    std::uint64_t n = 0;
    for (char c : length_text) {
      if (c < '0' || c > '9') return out;
      n = n * 10 + static_cast<std::uint64_t>(c - '0');
    }
    out.ok = true;
    out.framing = n == 0 ? BodyFraming::kNone : BodyFraming::kLength;
    out.length = n;
    return out;
  }
  out.ok = true;
  return out;
}

std::string upstream_request_headers(std::span<const Header> headers, const Grant& grant,
                                     BodyFraming framing, std::uint64_t length) {
  const std::vector<std::string> options = connection_options(headers);
  std::string out = "Host: " + upstream_authority(grant.upstream) + "\r\n";
  for (const Header& h : headers) {
    // Not a well-formed field (refused before by check_request_framing): never written.
    if (!is_field_name(h.name) || !is_field_value(h.value)) continue;
    // policy/header_rules.h: one row per field, with its reason.
    if (stripped_request_header(h.name) != nullptr || named_by_connection(h.name, options)) continue;
    if (grant.header && iequals(h.name, *grant.header)) continue;
    out += h.name + ": " + h.value + "\r\n";
  }
  switch (framing) {
    case BodyFraming::kNone: break;
    case BodyFraming::kLength: out += "Content-Length: " + std::to_string(length) + "\r\n"; break;
    case BodyFraming::kChunked: out += "Transfer-Encoding: chunked\r\n"; break;
  }
  if (grant.header && grant.secret) {
    // One reservation before the secret goes in: no reallocation leaves a copy in freed memory.
    out.reserve(out.size() + grant.header->size() + grant.secret->size() + 16);
    out += *grant.header;
    out += ": ";
    if (*grant.header == "authorization") out += "Bearer ";
    out += grant.secret->reveal_for_upstream();
    out += "\r\n";
  }
  return out;
}

std::string client_response_headers(std::span<const Header> headers) {
  const std::vector<std::string> options = connection_options(headers);
  std::string out;
  for (const Header& h : headers) {
    // A field the space's client could read differently (an empty name from a lax upstream) is
    // dropped; the rest of the answer passes.
    if (!is_field_name(h.name) || !is_field_value(h.value)) continue;
    if (is_hop_by_hop(h.name) || named_by_connection(h.name, options) ||
        iequals(h.name, "transfer-encoding") || iequals(h.name, "content-length")) {
      continue;
    }
    out += h.name + ": " + h.value + "\r\n";
  }
  return out;
}

}  // namespace policy
