// The dispatcher's rules as pure functions: facts in, a decision out (no sockets, no clocks).
// Every table row says why; controller/dispatch/README.md has the whole picture and SECURITY.md
// where this boundary lies.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "controller/dispatch/dispatcher.h"
#include "controller/space_token.h"

namespace controller::dispatch {

// The refusals the client may see: one JSON body {"error": {"code": word, "message": sentence}}
// (serve's error shape, controller/API.md) while nothing was sent. Deny is the zero value: an unset refusal is "space_unreachable", never a pass.
enum class Refusal : std::uint8_t {
  kSpaceUnreachable,       // 502: the bridge, the place or the inner server failed
  kSpaceNotFound,          // 404: not an id of this owner's spaces
  kSpaceNotRunning,        // 503: the space exists but is stopped
  kHostOnlyRoute,          // 403: a route family that only the host may answer
  kRefusedAcrossBoundary,  // 403: a route that would carry a space's work out to the host
  kDirectoryOutsideSpace,  // 400: a directory not under /spaces/<id>
  kDirectoryNeedsPrefix,   // 400: an unprefixed request names a space's directory
  kSpaceTokenUnreadable,   // 502: the token file is missing, malformed or too slow
  kSpaceLoginFailed,       // 502: the inner server refused the token twice
  kSpaceSessionExpired,    // 503: the session ended under a request with a body (resend it)
  kSpaceRedirected,        // 502: the inner server answered 3xx (never followed)
  kSpaceAnswerUnreadable,  // 502: the inner answer broke HTTP framing or our bounds
  kRequestUnreadable,      // 400: the client's request body framing is broken
  kSpaceSocketUnknown,     // 404: an upgrade on a path that is not an allowed socket
  kSpaceSocketLimit,       // 503: the space already has kMaxSocketsPerSpace sockets
  kSpaceSocketRefused,     // the inner server refused the handshake (its status is passed on)
  kSpaceBusy,              // 503: the pool's queue for the space is full
  kSpaceAnswerTimeout,     // 504: the inner server sent no answer head within the deadline
};

std::string_view refusal_word(Refusal r);
int refusal_status(Refusal r);
// {"error":{"code":"<word>","message":"<sentence>"}}: the sentence is ours, never the space's words.
std::string refusal_body(Refusal r);
// A whole HTTP/1.1 answer with the JSON body, nosniff and no-store.
std::string refusal_answer(Refusal r, bool keep_alive);

// /api/spaces/<id>/<rest>?q  ->  id, "/api/<rest>", "q" (query without '?', may be empty).
struct SpaceTarget {
  std::string id;
  std::string inner_path;
  std::string query;
};
// Empty when the target is not under the prefix or the id is not 12 lowercase hex digits
// (which the client learns as space_not_found).
std::optional<SpaceTarget> parse_space_target(std::string_view target);
[[nodiscard]] bool is_space_id(std::string_view id);

enum class RouteClass : std::uint8_t {
  kRefusedAcrossBoundary,  // zero value: refused
  kHostOnly,
  kForward,
};
// Case-insensitive, whole path segments: /api/config/agents forwards, /api/config/settings is
// the host's.
RouteClass route_class(std::string_view inner_path);

// Guard 1: every directory the request names (query `directory` and `location[directory]`,
// header x-opencode-directory, percent-decoded) must be /spaces/<id> or under it after POSIX
// normalisation (backslashes count as slashes, `..` resolved).
[[nodiscard]] bool directory_outside_space(std::string_view query, const std::vector<HeaderField>& headers,
                                           std::string_view id);
// Guard 2 (serve calls it for its own /api/ routes): an unprefixed request naming a directory
// under /spaces/ is a client addressing the wrong side.
[[nodiscard]] bool directory_needs_prefix(std::string_view target, const std::vector<HeaderField>& headers);
// Normalised POSIX path ("" when it is not absolute).
std::string normalise_directory(std::string_view raw);

// The query without oc_url_token / oc_client_token (the user's credentials).
std::string strip_credential_query(std::string_view query);

// Request headers that never go inside (credentials, hop-by-hop, framing we redo, origin).
[[nodiscard]] bool request_header_dropped(std::string_view name);
// Answer headers that may reach the client (allow-list); everything else is dropped.
[[nodiscard]] bool response_header_allowed(std::string_view name);

// The content type the client gets for an answer of `inner_path` with `content_type` (may be
// empty): page-rendering types and a missing type become text/plain; /api/fs/raw keeps only
// images, audio and video, everything else is an attachment.
struct ServedType {
  std::string content_type;
  bool attachment = false;
};
ServedType served_content_type(std::string_view inner_path, std::string_view content_type);

// 3xx except 304: never passed on (a same-origin redirect would replay the user's request to a
// host route the agent chose).
[[nodiscard]] constexpr bool redirect_refused(int status) { return status >= 300 && status < 400 && status != 304; }

// WebSockets: the inner paths a socket may open.
[[nodiscard]] bool websocket_path_allowed(std::string_view inner_path);
inline constexpr std::size_t kMaxSocketsPerSpace = 72;
inline constexpr std::size_t kMaxHandshakeAnswerBytes = 16 * 1024;
inline constexpr std::uint64_t kHandshakeDeadlineMs = 30'000;
// After a socket's stream ends, how long its bridge's exit status is awaited to tell 1012 (the
// inner server closed) from 1011 (the way into the space broke); no status by then: 1011.
inline constexpr std::uint64_t kExitWaitMs = 5'000;
// Answer headers of a 101 the client gets (everything else of the inner handshake is dropped).
[[nodiscard]] bool websocket_answer_header_allowed(std::string_view name);
// A header value with CR or LF (or NUL) is refused before anything is written inside.
[[nodiscard]] bool header_value_unsafe(std::string_view value);

// The per-space token: controller/space_token.h (make_space_token, token_well_formed).

// The session the inner server gives for a login: the first Set-Cookie pair and its Max-Age.
struct Session {
  std::string cookie;        // "name=value"
  std::uint64_t max_age_s = 0;
};
inline constexpr std::uint64_t kDefaultSessionSeconds = 12 * 3600;
// Empty when no usable pair is there (a name or value with bytes a cookie may not hold).
std::optional<Session> parse_session_cookie(std::string_view set_cookie);
// When to renew: at 90 % of the session's life.
[[nodiscard]] constexpr std::uint64_t renew_after_ms(std::uint64_t max_age_s) { return max_age_s * 900; }

// Pool bounds: streams per space, and how long a free stream may wait (closed before the inner
// server's own 5 s keep-alive would close it under a request).
inline constexpr std::size_t kMaxStreamsPerSpace = 8;
inline constexpr std::uint64_t kIdleStreamCloseMs = 4'000;

}  // namespace controller::dispatch
