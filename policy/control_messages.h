// Control-channel messages shared by the appliance (which answers them) and the controller
// (which sends them): POST /network and POST /grants, with the validation messages of
// docs/reference-behaviour.md#control-validation, and the fixed answer texts of
// docs/reference-behaviour.md#control-endpoints.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "policy/corridor.h"
#include "policy/result.h"
#include "policy/secret.h"

namespace policy {

inline constexpr std::size_t kMaxControlBody = 1 << 20;  // 1 MiB
inline constexpr std::size_t kMaxGrantIdLength = 64;
inline constexpr std::size_t kMaxHeaderNameLength = 64;
inline constexpr std::size_t kMaxSecretLength = 8192;  // bytes (API keys are ASCII)
// JSON limits of a control body: a 500-domain list fits; nothing legitimate nests deeper than 2.
inline constexpr std::size_t kMaxControlDepth = 16;
inline constexpr std::size_t kMaxControlElements = 10000;

// Fixed answers (docs/reference-behaviour.md#control-endpoints).
inline constexpr std::string_view kMsgNotJson = "the body is not JSON";
inline constexpr std::string_view kMsgNotObject = "the body is not an object";
inline constexpr std::string_view kMsgNoEndpoint = "no such control endpoint";
inline constexpr std::string_view kMsgNoSuchGrant = "no such grant";  // DELETE /grants/<id>
inline constexpr std::string_view kMsgControlFailed = "the control channel could not serve this request";
// Validation (docs/reference-behaviour.md#control-validation).
inline constexpr std::string_view kMsgBadMode = "mode is \"allowlist\" or \"open\"";
inline constexpr std::string_view kMsgTooManyDomains = "at most 500 domains";
inline constexpr std::string_view kMsgBadGrantId = "a grant id is 1 to 64 letters, digits, dots, dashes or underscores";
inline constexpr std::string_view kMsgBadHeaderName = "a header name is 1 to 64 letters, digits or dashes";
inline constexpr std::string_view kMsgHeaderNeedsSecret = "a grant with a header needs a secret";
// Ours, not the reference's: it let such a secret in and failed each request later
// (docs/reference-behaviour.md#window-headers).
inline constexpr std::string_view kMsgSecretBadBytes = "a secret cannot hold CR, LF or NUL";
inline constexpr std::string_view kMsgUpstreamNotUrl = "the upstream of a grant is a URL";
inline constexpr std::string_view kMsgUpstreamScheme = "the upstream of a grant is http or https";
inline constexpr std::string_view kMsgBadUnsafePrivate = "unsafe_private_upstream is true or false";
inline constexpr std::string_view kMsgHeaderNotInjectable =
    "a grant header cannot be a hop-by-hop, framing or routing field";
inline constexpr std::string_view kMsgSecretOverHttp =
    "a secret goes over https, or over http only to an address literal marked unsafe_private_upstream";
// "'<name>' is not a domain name. The allowlist holds exact names, no wildcards and no addresses."
std::string not_a_domain_message(std::string_view shown_name);

// POST /network {mode, domains}. Result error: the 400 message. Body errors use kMsgNotJson /
// kMsgNotObject.
Result<NetworkPolicy> parse_network_request(std::string_view body);
std::string network_request_json(const NetworkPolicy& policy);

// POST /blocked {"ranges":["203.0.113.7/32", ...]}: the operator's extra blocked ranges, which
// replace the current list (the command line's --block gives the first one). At most
// kMaxOperatorRanges, each parse_operator_range.
inline constexpr std::string_view kMsgBadRanges = "ranges is a list of at most 64 ADDRESS/LENGTH";
Result<std::vector<Range>> parse_blocked_request(std::string_view body);
std::string blocked_request_json(std::span<const Range> ranges);

// A grant upstream: http or https URL with a host (name, IPv4 dotted quad or [IPv6]), an optional
// port and a path (default "/"). No user info, no fragment.
struct UpstreamUrl {
  std::string scheme;   // "http" or "https"
  std::string host;     // lower-cased; IPv6 without brackets
  std::uint16_t port;   // explicit or the scheme's default
  std::string path;     // starts with '/', may carry a query
  [[nodiscard]] std::string to_string() const;
};
Result<UpstreamUrl> parse_upstream_url(std::string_view text);

bool is_grant_id(std::string_view id);

struct Grant {
  std::string id;
  UpstreamUrl upstream;
  std::optional<std::string> header;  // lower-cased header name; set exactly when secret is set
  std::optional<Secret> secret;
  // "unsafe_private_upstream": true. The host's explicit word that this grant's upstream name may
  // resolve into a private network (RFC 1918, RFC 6598, RFC 4193: a model server on the LAN or
  // the Docker host). Without it every DNS answer of the window is classified like the
  // corridor's. Cloud endpoints and the gatekeeper's own addresses stay refused either way.
  bool unsafe_private_upstream = false;
};

// POST /grants {id, upstream, header?, secret?, unsafe_private_upstream?}. If either "header" or
// "secret" is present (even null), both must be valid. A secret with CR, LF or NUL is refused (it
// could split headers). The header may not be one the window strips or sets itself
// (policy/header_rules.h: hop-by-hop, framing, routing). A secret over plain http is refused
// unless the upstream is an address literal and the grant says unsafe_private_upstream: on a
// name, anyone on the path who answers for it reads the key.
Result<Grant> parse_grant_request(std::string_view body);

// Answers the control channel gives.
std::string error_json(std::string_view message);  // {"error":"..."}
std::string ok_json();                              // {"ok":true}

}  // namespace policy
