#include "controller/dispatch/rules.h"

#include <array>
#include <cctype>
#include <string>

namespace controller::dispatch {

namespace {

char lower(char c) { return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c; }

bool iequal(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (lower(a[i]) != lower(b[i])) return false;
  return true;
}

bool istarts(std::string_view s, std::string_view prefix) {
  return s.size() >= prefix.size() && iequal(s.substr(0, prefix.size()), prefix);
}

// `path` is `family` or lies under it, compared by whole segments.
bool under_family(std::string_view path, std::string_view family) {
  if (!istarts(path, family)) return false;
  return path.size() == family.size() || path[family.size()] == '/';
}

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

bool has_escape(std::string_view s) {
  for (std::size_t i = 0; i + 2 < s.size(); ++i)
    if (s[i] == '%' && hex_value(s[i + 1]) >= 0 && hex_value(s[i + 2]) >= 0) return true;
  return false;
}

std::string percent_decode(std::string_view s, bool plus_is_space) {
  std::string out;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '%' && i + 2 < s.size() && hex_value(s[i + 1]) >= 0 && hex_value(s[i + 2]) >= 0) {
      out += static_cast<char>(hex_value(s[i + 1]) * 16 + hex_value(s[i + 2]));
      i += 2;
    } else if (plus_is_space && s[i] == '+') {
      out += ' ';
    } else {
      out += s[i];
    }
  }
  return out;
}

// Query parameters as (decoded name, decoded value).
std::vector<std::pair<std::string, std::string>> query_params(std::string_view query) {
  std::vector<std::pair<std::string, std::string>> out;
  while (!query.empty()) {
    const std::size_t amp = query.find('&');
    const std::string_view part = query.substr(0, amp);
    const std::size_t eq = part.find('=');
    out.emplace_back(percent_decode(part.substr(0, eq), true),
                     eq == std::string_view::npos ? std::string() : percent_decode(part.substr(eq + 1), true));
    if (amp == std::string_view::npos) break;
    query.remove_prefix(amp + 1);
  }
  return out;
}

const std::string* header(const std::vector<HeaderField>& headers, std::string_view name) {
  for (const HeaderField& h : headers)
    if (iequal(h.name, name)) return &h.value;
  return nullptr;
}

// Every directory a request names, decoded.
std::vector<std::string> named_directories(std::string_view query, const std::vector<HeaderField>& headers) {
  std::vector<std::string> out;
  for (auto& [name, value] : query_params(query))
    if (name == "directory" || name == "location[directory]") out.push_back(value);
  for (const HeaderField& h : headers) {
    if (!iequal(h.name, "x-opencode-directory")) continue;
    const std::string* enc = header(headers, "x-opencode-directory-encoding");
    const bool decode = (enc != nullptr && iequal(*enc, "uri")) || has_escape(h.value);
    out.push_back(decode ? percent_decode(h.value, false) : h.value);
  }
  return out;
}

}  // namespace

std::string_view refusal_word(Refusal r) {
  switch (r) {
    case Refusal::kSpaceUnreachable: return "space_unreachable";
    case Refusal::kSpaceNotFound: return "space_not_found";
    case Refusal::kSpaceNotRunning: return "space_not_running";
    case Refusal::kHostOnlyRoute: return "host_only_route";
    case Refusal::kRefusedAcrossBoundary: return "refused_across_boundary";
    case Refusal::kDirectoryOutsideSpace: return "directory_outside_space";
    case Refusal::kDirectoryNeedsPrefix: return "space_directory_needs_prefix";
    case Refusal::kSpaceTokenUnreadable: return "space_token_unreadable";
    case Refusal::kSpaceLoginFailed: return "space_login_failed";
    case Refusal::kSpaceSessionExpired: return "space_session_expired";
    case Refusal::kSpaceRedirected: return "space_redirected";
    case Refusal::kSpaceAnswerUnreadable: return "space_answer_unreadable";
    case Refusal::kRequestUnreadable: return "request_unreadable";
    case Refusal::kSpaceSocketUnknown: return "space_socket_unknown";
    case Refusal::kSpaceSocketLimit: return "space_socket_limit";
    case Refusal::kSpaceSocketRefused: return "space_socket_refused";
    case Refusal::kSpaceBusy: return "space_busy";
    case Refusal::kSpaceAnswerTimeout:
      return "space_answer_timeout";
  }
  return "space_unreachable";
}

int refusal_status(Refusal r) {
  switch (r) {
    case Refusal::kSpaceNotFound:
    case Refusal::kSpaceSocketUnknown: return 404;
    case Refusal::kHostOnlyRoute:
    case Refusal::kRefusedAcrossBoundary: return 403;
    case Refusal::kDirectoryOutsideSpace:
    case Refusal::kDirectoryNeedsPrefix:
    case Refusal::kRequestUnreadable: return 400;
    case Refusal::kSpaceNotRunning:
    case Refusal::kSpaceSessionExpired:
    case Refusal::kSpaceSocketLimit:
    case Refusal::kSpaceBusy: return 503;
    case Refusal::kSpaceUnreachable:
    case Refusal::kSpaceTokenUnreadable:
    case Refusal::kSpaceLoginFailed:
    case Refusal::kSpaceRedirected:
    case Refusal::kSpaceAnswerUnreadable:
    case Refusal::kSpaceSocketRefused: return 502;
    case Refusal::kSpaceAnswerTimeout:
      return 504;
  }
  return 502;
}

namespace {
std::string_view refusal_sentence(Refusal r) {
  switch (r) {
    case Refusal::kSpaceUnreachable: return "the space could not be reached";
    case Refusal::kSpaceNotFound: return "no such space";
    case Refusal::kSpaceNotRunning: return "the space is not running";
    case Refusal::kHostOnlyRoute: return "this route is answered by the host only";
    case Refusal::kRefusedAcrossBoundary: return "this route is refused across the space boundary";
    case Refusal::kDirectoryOutsideSpace: return "the directory is outside the space";
    case Refusal::kDirectoryNeedsPrefix: return "a space's directory needs the /api/spaces/<id>/ prefix";
    case Refusal::kSpaceTokenUnreadable: return "the space's token could not be read";
    case Refusal::kSpaceLoginFailed: return "the space refused the login";
    case Refusal::kSpaceSessionExpired: return "the space's session ended; send the request again";
    case Refusal::kSpaceRedirected: return "the space answered with a redirect, which is refused";
    case Refusal::kSpaceAnswerUnreadable: return "the space's answer was unreadable";
    case Refusal::kRequestUnreadable: return "the request body was unreadable";
    case Refusal::kSpaceSocketUnknown: return "no such socket in the space";
    case Refusal::kSpaceSocketLimit: return "the space has too many open sockets";
    case Refusal::kSpaceSocketRefused: return "the space refused the socket";
    case Refusal::kSpaceBusy: return "the space is busy";
    case Refusal::kSpaceAnswerTimeout:
      return "the space did not answer in time";
  }
  return "the space could not be reached";
}
}  // namespace

std::string refusal_body(Refusal r) {
  return "{\"error\":{\"code\":\"" + std::string(refusal_word(r)) + "\",\"message\":\"" + std::string(refusal_sentence(r)) +
         "\"}}";
}

std::string refusal_answer(Refusal r, bool keep_alive) {
  const std::string body = refusal_body(r);
  const int status = refusal_status(r);
  std::string reason;
  switch (status) {
    case 400: reason = "Bad Request"; break;
    case 403: reason = "Forbidden"; break;
    case 404: reason = "Not Found"; break;
    case 503: reason = "Service Unavailable"; break;
    case 504:
      reason = "Gateway Timeout";
      break;
    default: reason = "Bad Gateway"; break;
  }
  return "HTTP/1.1 " + std::to_string(status) + " " + reason +
         "\r\nContent-Type: application/json\r\nX-Content-Type-Options: nosniff\r\nCache-Control: no-store\r\n"
         "Content-Length: " + std::to_string(body.size()) + "\r\nConnection: " + (keep_alive ? "keep-alive" : "close") +
         "\r\n\r\n" + body;
}

bool is_space_id(std::string_view id) {
  if (id.size() != 12) return false;
  for (char c : id)
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  return true;
}

std::optional<SpaceTarget> parse_space_target(std::string_view target) {
  constexpr std::string_view kPrefix = "/api/spaces/";
  if (target.substr(0, kPrefix.size()) != kPrefix) return std::nullopt;
  std::string_view rest = target.substr(kPrefix.size());
  const std::size_t q = rest.find('?');
  const std::string_view path = rest.substr(0, q);
  const std::string_view query = q == std::string_view::npos ? std::string_view() : rest.substr(q + 1);
  const std::size_t slash = path.find('/');
  if (slash == std::string_view::npos) return std::nullopt;  // the id must be followed by '/'
  const std::string_view id = path.substr(0, slash);
  if (!is_space_id(id)) return std::nullopt;
  return SpaceTarget{std::string(id), "/api" + std::string(path.substr(slash)), std::string(query)};
}

RouteClass route_class(std::string_view inner_path) {
  // Families the host answers itself: its providers and credentials, its settings and
  // integrations, its projects and tunnels. Inside, they would reach a space's copy of them.
  static constexpr std::array<std::string_view, 20> kHostOnly = {
      "/api/provider", "/api/providers", "/api/integration", "/api/credential", "/api/auth",
      "/api/config/settings", "/api/config/themes", "/api/themes", "/api/github", "/api/linear",
      "/api/voice", "/api/tts", "/api/dictation", "/api/guests", "/api/projects",
      "/api/client-auth", "/api/system", "/api/push", "/api/notifications", "/api/openchamber/tunnel"};
  // Routes that would move a space's work onto the host or render the space's files as pages
  // of the application's origin: worktrees and integration touch the host's repository, the
  // previews serve a space's HTML under our origin, a session move leaves the space.
  static constexpr std::array<std::string_view, 7> kAcross = {
      "/api/git/worktrees", "/api/git/worktree-type", "/api/git/integrate", "/api/fs/preview",
      "/api/fs/serve", "/api/preview/proxy", "/api/session"};
  for (std::string_view f : kHostOnly)
    if (under_family(inner_path, f)) return RouteClass::kHostOnly;
  for (std::string_view f : kAcross) {
    if (f == "/api/session") {
      // Only /api/session/<id>/move.
      if (!istarts(inner_path, "/api/session/")) continue;
      std::string_view rest = inner_path.substr(13);
      const std::size_t slash = rest.find('/');
      if (slash != std::string_view::npos && slash > 0 && under_family(rest.substr(slash), "/move"))
        return RouteClass::kRefusedAcrossBoundary;
      continue;
    }
    if (under_family(inner_path, f)) return RouteClass::kRefusedAcrossBoundary;
  }
  return RouteClass::kForward;
}

std::string normalise_directory(std::string_view raw) {
  std::string s(raw);
  for (char& c : s)
    if (c == '\\') c = '/';
  if (s.empty() || s[0] != '/') return {};
  std::vector<std::string> parts;
  std::size_t i = 0;
  while (i <= s.size()) {
    const std::size_t j = s.find('/', i);
    const std::string seg = s.substr(i, j == std::string::npos ? std::string::npos : j - i);
    if (seg == "..") {
      if (!parts.empty()) parts.pop_back();
    } else if (!seg.empty() && seg != ".") {
      parts.push_back(seg);
    }
    if (j == std::string::npos) break;
    i = j + 1;
  }
  std::string out;
  for (const std::string& p : parts) out += "/" + p;
  return out.empty() ? "/" : out;
}

bool directory_outside_space(std::string_view query, const std::vector<HeaderField>& headers, std::string_view id) {
  const std::string root = "/spaces/" + std::string(id);
  for (const std::string& d : named_directories(query, headers)) {
    const std::string n = normalise_directory(d);
    if (n != root && n.rfind(root + "/", 0) != 0) return true;
  }
  return false;
}

bool directory_needs_prefix(std::string_view target, const std::vector<HeaderField>& headers) {
  if (target.substr(0, 5) != "/api/" || target.substr(0, 12) == "/api/spaces/") return false;
  const std::size_t q = target.find('?');
  const std::string_view query = q == std::string_view::npos ? std::string_view() : target.substr(q + 1);
  for (const std::string& d : named_directories(query, headers)) {
    const std::string n = normalise_directory(d);
    if (n == "/spaces" || n.rfind("/spaces/", 0) == 0) return true;
  }
  return false;
}

std::string strip_credential_query(std::string_view query) {
  std::string out;
  while (!query.empty()) {
    const std::size_t amp = query.find('&');
    const std::string_view part = query.substr(0, amp);
    const std::string name = percent_decode(part.substr(0, part.find('=')), true);
    if (name != "oc_url_token" && name != "oc_client_token") {
      if (!out.empty()) out += '&';
      out += part;
    }
    if (amp == std::string_view::npos) break;
    query.remove_prefix(amp + 1);
  }
  return out;
}

bool request_header_dropped(std::string_view name) {
  // cookie/authorization/proxy-authorization: the user's credentials for the host; the space
  // gets its own session instead. host: rewritten to the inner server's. connection, keep-alive,
  // transfer-encoding, te, trailer, upgrade, proxy-connection: hop-by-hop (RFC 9110 §7.6.1); we
  // frame the body ourselves. expect: we never forward 100-continue. origin, referer: the host's
  // page, not the space's business. accept-encoding: the answer must stay readable to our rules
  // (identity is sent). x-forwarded-*, forwarded: the host's network facts. sec-websocket-*:
  // only a WebSocket handshake carries them.
  static constexpr std::array<std::string_view, 15> kDropped = {
      "cookie", "authorization", "proxy-authorization", "host", "connection", "keep-alive", "transfer-encoding",
      "te", "trailer", "upgrade", "expect", "origin", "referer", "accept-encoding", "proxy-connection"};
  for (std::string_view d : kDropped)
    if (iequal(name, d)) return true;
  return istarts(name, "x-forwarded-") || istarts(name, "forwarded") || istarts(name, "sec-websocket-");
}

bool response_header_allowed(std::string_view name) {
  // What a client needs to read a body and cache it; nothing that sets state in the browser
  // (Set-Cookie, Clear-Site-Data, Refresh), moves it (Location), asks for credentials
  // (WWW-Authenticate) or frames the connection (hop-by-hop; we frame it ourselves).
  static constexpr std::array<std::string_view, 14> kAllowed = {
      "content-type", "content-length", "content-disposition", "content-range", "accept-ranges",
      "cache-control", "expires", "pragma", "etag", "last-modified", "vary", "date", "x-accel-buffering",
      "x-next-cursor"};
  for (std::string_view a : kAllowed)
    if (iequal(name, a)) return true;
  return false;
}

ServedType served_content_type(std::string_view inner_path, std::string_view content_type) {
  std::string essence;
  for (char c : content_type.substr(0, content_type.find(';')))
    if (c != ' ' && c != '\t') essence += lower(c);
  const std::size_t slash = essence.find('/');
  const std::string type = essence.substr(0, slash);
  const std::string subtype = slash == std::string::npos ? std::string() : essence.substr(slash + 1);
  if (under_family(inner_path, "/api/fs/raw")) {
    // Raw file bytes: kept only for types a browser shows without running them (images other
    // than SVG, which is a document with scripts, and audio and video).
    static constexpr std::array<std::string_view, 8> kImages = {"png", "jpeg", "gif", "webp", "avif", "bmp", "x-icon",
                                                                "vnd.microsoft.icon"};
    if (type == "image")
      for (std::string_view t : kImages)
        if (subtype == t) return {std::string(content_type), false};
    if ((type == "video" || type == "audio") && !subtype.empty()) return {std::string(content_type), false};
    return {"application/octet-stream", true};
  }
  // Types a browser renders as a page (scripts run under the application's origin), as
  // {type, subtype}.
  static constexpr std::array<std::pair<std::string_view, std::string_view>, 6> kPages = {{
      {"text", "html"}, {"application", "xhtml+xml"}, {"image", "svg+xml"},
      {"text", "xml"}, {"application", "xml"}, {"application", "pdf"}}};
  if (essence.empty()) return {"text/plain; charset=utf-8", false};
  for (const auto& [t, sub] : kPages)
    if (type == t && subtype == sub) return {"text/plain; charset=utf-8", false};
  return {std::string(content_type), false};
}

bool websocket_path_allowed(std::string_view inner_path) {
  for (std::string_view p : {"/api/terminal/ws", "/api/dev-tunnel", "/api/event/ws", "/api/global/event/ws"})
    if (iequal(inner_path, p)) return true;
  return false;
}

bool websocket_answer_header_allowed(std::string_view name) {
  for (std::string_view a : {"upgrade", "connection", "sec-websocket-accept", "sec-websocket-protocol",
                             "sec-websocket-extensions"})
    if (iequal(name, a)) return true;
  return false;
}

bool header_value_unsafe(std::string_view value) {
  return value.find_first_of(std::string_view("\r\n\0", 3)) != std::string_view::npos;
}

std::optional<Session> parse_session_cookie(std::string_view set_cookie) {
  const std::size_t semi = set_cookie.find(';');
  std::string_view pair = set_cookie.substr(0, semi);
  while (!pair.empty() && (pair.front() == ' ' || pair.front() == '\t')) pair.remove_prefix(1);
  while (!pair.empty() && (pair.back() == ' ' || pair.back() == '\t')) pair.remove_suffix(1);
  const std::size_t eq = pair.find('=');
  if (eq == std::string_view::npos || eq == 0 || pair.size() > 4096) return std::nullopt;
  // RFC 6265 §4.1.1: a token name and cookie-octets; nothing that could end the Cookie line.
  for (std::size_t i = 0; i < pair.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(pair[i]);
    if (c <= 0x20 || c >= 0x7f || c == ';' || c == ',' || c == '"' || c == '\\') return std::nullopt;
  }
  Session s{std::string(pair), kDefaultSessionSeconds};
  std::string_view attrs = semi == std::string_view::npos ? std::string_view() : set_cookie.substr(semi + 1);
  while (!attrs.empty()) {
    const std::size_t next = attrs.find(';');
    std::string_view a = attrs.substr(0, next);
    while (!a.empty() && a.front() == ' ') a.remove_prefix(1);
    if (istarts(a, "max-age=")) {
      std::uint64_t v = 0;
      bool ok = a.size() > 8 && a.size() <= 8 + 9;
      for (char c : a.substr(8)) {
        if (c < '0' || c > '9') ok = false;
        else v = v * 10 + static_cast<std::uint64_t>(c - '0');
      }
      if (ok && v > 0) s.max_age_s = v;
    }
    if (next == std::string_view::npos) break;
    attrs.remove_prefix(next + 1);
  }
  return s;
}

}  // namespace controller::dispatch
