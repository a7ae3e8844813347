// The window's pure rules (docs/reference-behaviour.md#window-route): the route with its window
// key, the window-key control message, the choice of the upstream address with the own-listener
// rule, and the header rules for the request going up and the answer coming back.
//   /k/<window key>/model/<grant id><rest>      rest: empty, or starts with '/' or '?'
// Only decide_window_answers() creates a WindowEndpoint: the connector dials nothing else
// (docs/decisions.md#dial-only-what-was-approved).
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "policy/address.h"
#include "policy/control_messages.h"
#include "policy/decision.h"
#include "policy/ranges.h"
#include "policy/result.h"
#include "policy/secret.h"

namespace policy {

// The window key: 32 random bytes as 64 lower-case hex digits (the host makes it).
inline constexpr std::size_t kWindowKeyHexLength = 64;
inline constexpr std::string_view kMsgBadWindowKey = "the window key is 64 hex digits";
// Journal hosts of window refusals that have no upstream to name
// (docs/reference-behaviour.md#window-route).
inline constexpr std::string_view kHostUnknownGrant = "unknown-grant";
inline constexpr std::string_view kHostGrantPath = "grant-path";
inline constexpr std::string_view kHostWindowKey = "window-key";
inline constexpr std::string_view kHostRequestFraming = "request-framing";

// POST /window-key {"key":"<64 hex>"}: the key lower-cased, held as a Secret.
Result<Secret> parse_window_key_request(std::string_view body);

// The request target split at the route. `key` is whatever stood in the key segment (compared by
// the caller in constant time); `grant_id` is set only when the part after the key has the shape
// /model/<id>[/?...].
struct WindowRoute {
  bool has_key_segment = false;  // target starts with "/k/<segment>/"
  std::string_view key;
  std::optional<std::string_view> grant_id;
  std::string_view rest;  // after the grant id, query included
};
WindowRoute split_window_route(std::string_view target);

// Outgoing target: the upstream's path without one trailing '/', then rest verbatim
// (docs/reference-behaviour.md#window-route).
std::string upstream_target(const UpstreamUrl& upstream, std::string_view rest);

// "host[:port]" for the Host header: port omitted when it is the scheme's default; IPv6 bracketed.
std::string upstream_authority(const UpstreamUrl& upstream);

// The gatekeeper's own listeners, for the own-listener rule
// (docs/reference-behaviour.md#window-grants).
struct OwnListeners {
  std::span<const Address> addresses;      // every interface address
  std::span<const std::uint16_t> ports;    // corridor, window, control as bound
};

struct WindowAnswerDecision;

class WindowEndpoint {
 public:
  [[nodiscard]] const Address& address() const noexcept { return address_; }
  [[nodiscard]] std::uint16_t port() const noexcept { return port_; }

 private:
  friend struct WindowAnswerDecision;
  friend WindowAnswerDecision decide_window_answers(const UpstreamUrl&, bool,
                                                    std::span<const Address>, const OwnListeners&,
                                                    std::span<const Range>);
  WindowEndpoint(Address address, std::uint16_t port) : address_(address), port_(port) {}
  Address address_;
  std::uint16_t port_;
};

struct WindowAnswerDecision {
  Decision decision;  // allow, deny:own-listener, deny:blocked-address, deny:unresolved:no-answer
  std::optional<WindowEndpoint> endpoint;   // set exactly when decision.allowed()
};

// Every answer is judged, as in the corridor (a name that answers with one inside address is
// pointed at the inside on purpose); any refused answer refuses the request:
//   1. the gatekeeper's own address (loopback, unspecified, an interface address): on one of our
//      listener ports deny:own-listener (docs/reference-behaviour.md#window-grants), on any other
//      port deny:blocked-address: it is the gatekeeper's own host either way;
//   2. a cloud endpoint (ranges.h is_cloud_endpoint): deny:blocked-address, always;
//   3. a range the operator blocked (serve --block, POST /blocked; `operator_blocked`), as the
//      corridor refuses it: deny:blocked-address, always (neither the host's private-network
//      word nor an address literal lifts it: the operator said so for this gatekeeper);
//   4. any other blocked row of the corridor's table: deny:blocked-address, unless private
//      networks are allowed and the row is a private network (ranges.h is_private_network).
// Private networks are allowed when the host said `unsafe_private_upstream` for this grant or
// the upstream names an address literal (the host wrote the address itself). No port rule: a
// grant is the user's decision. The address dialled is the first IPv4 answer, else
// the first.
WindowAnswerDecision decide_window_answers(const UpstreamUrl& upstream,
                                           bool unsafe_private_upstream,
                                           std::span<const Address> answers,
                                           const OwnListeners& own,
                                           std::span<const Range> operator_blocked = {});

// An upstream host that is an address literal needs no DNS.
std::optional<Address> upstream_literal(const UpstreamUrl& upstream);
// The grant upstream's host refused by name in every mode, before any query: an always-refused
// name (kDenyAlwaysRefused, docs/reference-behaviour.md#window-grants) or a special-use name
// (kDenySpecialUseName, policy/special_names.h). nullopt: no name rule refuses it.
std::optional<Word> upstream_refused_by_name(const UpstreamUrl& upstream);

// --- header rules --------------------------------------------------------------------------
// A field of a head as read (the parser, appliance/http, bounds how many: kMaxHeaderLines).
struct Header {
  std::string name;  // as sent
  std::string value;
};

// How the request body is framed. Anything else was refused by the framing check.
enum class BodyFraming : std::uint8_t { kNone = 0, kLength, kChunked };

// RFC 9112 §6.1/§6.3 smuggling shapes the window refuses (400, deny:malformed): Content-Length
// with Transfer-Encoding, two Content-Length fields, a Transfer-Encoding other than exactly
// "chunked" (a coding after chunked, or codings we would have to re-frame), Transfer-Encoding in
// an HTTP/1.0 request, a Content-Length that is not plain decimal, and any field whose name is
// not a token (llhttp 8.1 accepts an empty name) or whose value holds CR, LF or NUL. obs-fold is
// found by the parser on the raw bytes.
struct FramingCheck {
  bool ok = false;
  BodyFraming framing = BodyFraming::kNone;
  std::uint64_t length = 0;
};
FramingCheck check_request_framing(std::span<const Header> headers, bool http10);

// The header block sent upstream (each line "name: value\r\n", no final empty line). Removed:
// every row of policy/header_rules.h (credentials the space sent, hop-by-hop fields, Host, the
// body framing fields, Expect, path and method overrides, X-Forwarded-* and Forwarded), the
// fields the Connection field names, and the grant's own header; added: Host, the framing of the
// re-framed body and, for a secret grant, its header.
std::string upstream_request_headers(std::span<const Header> headers, const Grant& grant,
                                     BodyFraming framing, std::uint64_t length);

// The header block sent to the space (no final empty line): hop-by-hop fields and the body
// framing fields removed (the window frames the body itself).
std::string client_response_headers(std::span<const Header> headers);

bool header_name_is(std::string_view name, std::string_view lower);

// The methods the window sends a second time, on a fresh connection, when a kept-alive upstream
// connection closed before any byte of the answer: GET, HEAD, OPTIONS and TRACE, the safe methods
// of RFC 9110 §9.2.1. PUT and DELETE are idempotent (§9.2.2) but the first copy may already have
// changed something the second repeats; POST and PATCH are neither. Exact, case-sensitive
// (RFC 9110 §9.1).
bool may_retry_method(std::string_view method);
bool is_field_name(std::string_view name);    // RFC 9110 §5.1 token
bool is_field_value(std::string_view value);  // no CR, LF or NUL

}  // namespace policy
