// dispatch-inner-server's HTTP mode: the contract of a space's inner server, for tests only.
//
// Login: POST /auth/session {"password":"<token>"} -> 200 + Set-Cookie
// oc_ui_session_<port>=<sid>; Max-Age=<session-seconds>; a wrong password -> 401. Every other
// route needs that cookie (else 401). Routes (the dispatcher's inner paths):
//   /api/echo...            200 text/plain: request line, every header as received, body length
//                           and sha256 (tests see exactly what arrived)
//   /api/bytes?n=N          N pattern bytes with Content-Length; /api/chunked?n=N the same chunked
//   /api/sse?events=K       text/event-stream, K events "data: <i>", then the end
//   /api/redirect           302 Location: /api/provider
//   /api/not-modified       304
//   /api/type?ct=<type>     that Content-Type (percent-decoded) over an HTML body
//   /api/headers            an answer full of headers the client must never see
//   /api/expire-sessions    forgets every session (the next request meets 401)
//   /api/die                closes the connection without an answer
//   /api/hang               never answers; holds the connection until the peer closes it
//   /api/stats              "logins <n>\n" (how many logins it served)
//   /api/terminal/ws        WebSocket echo (Origin and Host must be http://127.0.0.1:<port>)
//   /api/event/ws           WebSocket that ends right after the handshake
//   /api/dev-tunnel         403 (the refusal passes through)
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <mutex>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "appliance/http/parser.h"
#include "controller/dispatch/testing/inner_http.h"
#include "controller/dispatch/testing/pattern.h"
#include "escape-suite/sha256.h"
#include "policy/number.h"

namespace controller::dispatch::testing {

namespace {

using appliance::http::MessageParser;

std::mutex g_mutex;
std::set<std::string> g_sessions;
std::atomic<int> g_logins{0};
std::string g_token_file;
int g_session_seconds = 3600;
int g_port = 0;

bool send_all(int fd, std::string_view data) {
  while (!data.empty()) {
    const ssize_t n = ::send(fd, data.data(), data.size(), MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    data.remove_prefix(static_cast<std::size_t>(n));
  }
  return true;
}

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

std::string param(const std::string& url, const std::string& name) {
  const std::size_t q = url.find('?');
  if (q == std::string::npos) return {};
  std::string query = url.substr(q + 1);
  std::size_t at = 0;
  while (at <= query.size()) {
    const std::size_t amp = query.find('&', at);
    const std::string part = query.substr(at, amp == std::string::npos ? std::string::npos : amp - at);
    if (part.rfind(name + "=", 0) == 0) {
      std::string v = part.substr(name.size() + 1), out;
      for (std::size_t i = 0; i < v.size(); ++i) {
        const std::optional<unsigned> byte =
            v[i] == '%' && i + 2 < v.size() ? policy::parse_number<unsigned>(v.substr(i + 1, 2), 16)
                                            : std::nullopt;
        if (byte) {
          out += static_cast<char>(*byte);
          i += 2;
        } else {
          out += v[i];
        }
      }
      return out;
    }
    if (amp == std::string::npos) break;
    at = amp + 1;
  }
  return {};
}

std::string answer(int status, const std::string& type, const std::string& body, const std::string& extra = {}) {
  return "HTTP/1.1 " + std::to_string(status) + " X\r\nContent-Type: " + type + "\r\nContent-Length: " +
         std::to_string(body.size()) + "\r\n" + extra + "\r\n" + body;
}

// SHA-1 (FIPS 180-4) for the WebSocket accept key only.
std::string sha1(const std::string& in) {
  std::uint32_t h[5] = {0x67452301, 0xEFCDAB89, 0x98BADCFE, 0x10325476, 0xC3D2E1F0};
  std::string m = in;
  const std::uint64_t bits = static_cast<std::uint64_t>(in.size()) * 8;
  m += static_cast<char>(0x80);
  while (m.size() % 64 != 56) m += '\0';
  for (int i = 7; i >= 0; --i) m += static_cast<char>((bits >> (i * 8)) & 0xff);
  auto rol = [](std::uint32_t v, int n) { return (v << n) | (v >> (32 - n)); };
  for (std::size_t off = 0; off < m.size(); off += 64) {
    std::uint32_t w[80];
    for (int i = 0; i < 16; ++i) {
      w[i] = (static_cast<std::uint32_t>(static_cast<unsigned char>(m[off + 4 * i])) << 24) |
             (static_cast<std::uint32_t>(static_cast<unsigned char>(m[off + 4 * i + 1])) << 16) |
             (static_cast<std::uint32_t>(static_cast<unsigned char>(m[off + 4 * i + 2])) << 8) |
             static_cast<std::uint32_t>(static_cast<unsigned char>(m[off + 4 * i + 3]));
    }
    for (int i = 16; i < 80; ++i) w[i] = rol(w[i - 3] ^ w[i - 8] ^ w[i - 14] ^ w[i - 16], 1);
    std::uint32_t a = h[0], b = h[1], c = h[2], d = h[3], e = h[4];
    for (int i = 0; i < 80; ++i) {
      std::uint32_t f, k;
      if (i < 20) {
        f = (b & c) | (~b & d), k = 0x5A827999;
      } else if (i < 40) {
        f = b ^ c ^ d, k = 0x6ED9EBA1;
      } else if (i < 60) {
        f = (b & c) | (b & d) | (c & d), k = 0x8F1BBCDC;
      } else {
        f = b ^ c ^ d, k = 0xCA62C1D6;
      }
      const std::uint32_t t = rol(a, 5) + f + e + k + w[i];
      e = d, d = c, c = rol(b, 30), b = a, a = t;
    }
    h[0] += a, h[1] += b, h[2] += c, h[3] += d, h[4] += e;
  }
  std::string out;
  for (std::uint32_t v : h) {
    for (int i = 3; i >= 0; --i) out += static_cast<char>((v >> (i * 8)) & 0xff);
  }
  return out;
}

std::string base64(const std::string& in) {
  static const char* t = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  std::size_t i = 0;
  for (; i + 2 < in.size(); i += 3) {
    const std::uint32_t v = (static_cast<unsigned char>(in[i]) << 16) | (static_cast<unsigned char>(in[i + 1]) << 8) |
                            static_cast<unsigned char>(in[i + 2]);
    out += t[v >> 18], out += t[(v >> 12) & 63], out += t[(v >> 6) & 63], out += t[v & 63];
  }
  if (i + 1 == in.size()) {
    const std::uint32_t v = static_cast<unsigned char>(in[i]) << 16;
    out += t[v >> 18], out += t[(v >> 12) & 63], out += "==";
  } else if (i + 2 == in.size()) {
    const std::uint32_t v = (static_cast<unsigned char>(in[i]) << 16) | (static_cast<unsigned char>(in[i + 1]) << 8);
    out += t[v >> 18], out += t[(v >> 12) & 63], out += t[(v >> 6) & 63], out += '=';
  }
  return out;
}

class Conn : public appliance::http::BodySink {
 public:
  explicit Conn(int fd) : fd_(fd) {}
  bool on_head() override { return true; }
  void on_body(const char* d, std::size_t n) override { body_.append(d, n); }
  void on_complete() override {}

  void run() {
    for (;;) {
      MessageParser p(MessageParser::Kind::kRequest, *this);
      body_.clear();
      bool head = false, done = false;
      while (!done) {
        if (buf_.empty() && !fill()) return;
        const MessageParser::Feed f = p.feed(buf_.data(), buf_.size());
        if (f.status == MessageParser::Status::kError) return;
        buf_.erase(0, f.consumed);
        if (f.status == MessageParser::Status::kHeadDone) {
          head = true;
          if (!p.chunked() && !(p.has_length() && p.length() > 0)) done = true;
          continue;
        }
        if (f.status == MessageParser::Status::kComplete) done = true;
        if (f.status == MessageParser::Status::kNeedMore && head && buf_.empty() && !fill()) return;
      }
      if (!handle(p)) return;
    }
  }

 private:
  bool fill() {
    char b[65536];
    const ssize_t n = ::recv(fd_, b, sizeof b, 0);
    if (n <= 0) return false;
    buf_.append(b, static_cast<std::size_t>(n));
    return true;
  }
  const std::string* header(const MessageParser& p, const std::string& name) {
    for (const auto& h : p.headers()) {
      if (lower(h.name) == name) return &h.value;
    }
    return nullptr;
  }
  bool authorised(const MessageParser& p) {
    const std::string* c = header(p, "cookie");
    if (c == nullptr) return false;
    const std::string prefix = "oc_ui_session_" + std::to_string(g_port) + "=";
    const std::size_t at = c->find(prefix);
    if (at == std::string::npos) return false;
    std::string sid = c->substr(at + prefix.size());
    sid = sid.substr(0, sid.find(';'));
    std::lock_guard<std::mutex> hold(g_mutex);
    return g_sessions.count(sid) != 0;
  }

  bool handle(const MessageParser& p) {
    const std::string method(p.method_name());
    const std::string& url = p.url();
    const std::string path = url.substr(0, url.find('?'));
    if (method == "POST" && path == "/auth/session") {
      std::ifstream f(g_token_file, std::ios::binary);
      std::stringstream ss;
      ss << f.rdbuf();
      const std::string expected = "{\"password\":\"" + ss.str() + "\"}";
      ++g_logins;
      if (ss.str().empty() || body_ != expected) return send_all(fd_, answer(401, "application/json", "{\"error\":\"bad password\"}"));
      char sid[33];
      std::snprintf(sid, sizeof sid, "%08x%08x%08x%08x", static_cast<unsigned>(::random()), static_cast<unsigned>(::random()),
                    static_cast<unsigned>(::random()), static_cast<unsigned>(g_logins.load()));
      {
        std::lock_guard<std::mutex> hold(g_mutex);
        g_sessions.insert(sid);
      }
      return send_all(fd_, answer(200, "application/json", "{\"ok\":true}",
                                  "Set-Cookie: oc_ui_session_" + std::to_string(g_port) + "=" + sid +
                                      "; Path=/; HttpOnly; Max-Age=" + std::to_string(g_session_seconds) + "\r\n"));
    }
    if (!authorised(p)) return send_all(fd_, answer(401, "application/json", "{\"error\":\"no session\"}"));
    if (path.rfind("/api/echo", 0) == 0) {
      std::string out = method + " " + url + "\n";
      for (const auto& h : p.headers()) out += h.name + ": " + h.value + "\n";
      out += "\nbody-length: " + std::to_string(body_.size()) + "\nbody-sha256: " + escape::sha256_hex(body_) + "\n";
      return send_all(fd_, answer(200, "text/plain; charset=utf-8", out));
    }
    if (path == "/api/bytes" || path == "/api/chunked") {
      const std::uint64_t n = policy::parse_number<std::uint64_t>(param(url, "n")).value_or(0);
      const bool chunked = path == "/api/chunked";
      std::string head = "HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream\r\n";
      head += chunked ? "Transfer-Encoding: chunked\r\n\r\n" : "Content-Length: " + std::to_string(n) + "\r\n\r\n";
      if (!send_all(fd_, head)) return false;
      std::string b;
      for (std::uint64_t sent = 0; sent < n;) {
        const std::uint64_t k = std::min<std::uint64_t>(65536, n - sent);
        b.resize(k);
        for (std::uint64_t i = 0; i < k; ++i) b[i] = static_cast<char>(pattern_byte(sent + i));
        if (chunked) {
          char sz[20];
          std::snprintf(sz, sizeof sz, "%llx\r\n", static_cast<unsigned long long>(k));
          b = sz + b + "\r\n";
        }
        if (!send_all(fd_, b)) return false;
        sent += k;
      }
      return !chunked || send_all(fd_, "0\r\n\r\n");
    }
    if (path == "/api/sse") {
      const int events = policy::parse_number<int>(param(url, "events")).value_or(0);
      const int delay = policy::parse_number<int>(param(url, "delay_ms")).value_or(0);
      if (!send_all(
              fd_,
              "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: max-age=60\r\n"
              "Transfer-Encoding: chunked\r\n\r\n")) {
        return false;
      }
      for (int i = 0; i < events; ++i) {
        const std::string ev = "data: " + std::to_string(i) + "\n\n";
        char sz[20];
        std::snprintf(sz, sizeof sz, "%zx\r\n", ev.size());
        if (!send_all(fd_, sz + ev + "\r\n")) return false;
        if (delay > 0) ::usleep(static_cast<useconds_t>(delay) * 1000);
      }
      return send_all(fd_, "0\r\n\r\n");
    }
    if (path == "/api/redirect") return send_all(fd_, answer(302, "text/plain", "", "Location: /api/provider\r\n"));
    if (path == "/api/not-modified") return send_all(fd_, "HTTP/1.1 304 Not Modified\r\nETag: \"e1\"\r\n\r\n");
    if (path == "/api/type") return send_all(fd_, answer(200, param(url, "ct"), "<html><script>alert(1)</script></html>"));
    if (path == "/api/headers") {
      return send_all(fd_, answer(200, "application/json", "{}",
                                  "Set-Cookie: evil=1; Path=/\r\nLocation: /api/provider\r\nClear-Site-Data: \"*\"\r\n"
                                  "Refresh: 0\r\nWWW-Authenticate: Basic\r\nX-Custom: 1\r\nETag: \"e1\"\r\n"
                                  "Access-Control-Allow-Origin: *\r\nX-Next-Cursor: c2\r\n"));
    }
    if (path == "/api/expire-sessions") {
      {
        std::lock_guard<std::mutex> hold(g_mutex);
        g_sessions.clear();
      }
      return send_all(fd_, answer(200, "text/plain", "expired\n"));
    }
    if (path == "/api/die") return false;
    if (path == "/api/hang") {
      char sink[4096];
      while (::read(fd_, sink, sizeof sink) > 0) {
      }
      return false;
    }
    if (path == "/api/stats") return send_all(fd_, answer(200, "text/plain", "logins " + std::to_string(g_logins.load()) + "\n"));
    if (path == "/api/dev-tunnel") return send_all(fd_, answer(403, "application/json", "{\"error\":\"no dev server\"}"));
    if (path == "/api/terminal/ws" || path == "/api/event/ws") {
      const std::string* key = header(p, "sec-websocket-key");
      const std::string* origin = header(p, "origin");
      const std::string* host = header(p, "host");
      const std::string me = "127.0.0.1:" + std::to_string(g_port);
      if (key == nullptr || origin == nullptr || host == nullptr || *origin != "http://" + me ||
          *host != me) {
        return send_all(fd_, answer(403, "text/plain", "origin\n"));
      }
      const std::string accept = base64(sha1(*key + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"));
      if (!send_all(
              fd_,
              "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
              "Sec-WebSocket-Accept: " +
                  accept + "\r\nSet-Cookie: evil=1\r\nX-Inner: 1\r\n\r\n")) {
        return false;
      }
      if (path == "/api/event/ws") return false;  // ends at once: the client gets 1012
      echo_frames();
      return false;
    }
    return send_all(fd_, answer(404, "text/plain", "not here\n"));
  }

  bool need(std::size_t n) {
    while (buf_.size() < n) {
      if (!fill()) return false;
    }
    return true;
  }

  void echo_frames() {
    for (;;) {
      if (!need(2)) return;
      const unsigned char b0 = static_cast<unsigned char>(buf_[0]), b1 = static_cast<unsigned char>(buf_[1]);
      std::size_t at = 2;
      std::uint64_t len = b1 & 0x7f;
      if (len == 126) {
        if (!need(4)) return;
        len = (static_cast<unsigned char>(buf_[2]) << 8) | static_cast<unsigned char>(buf_[3]);
        at = 4;
      } else if (len == 127) {
        if (!need(10)) return;
        len = 0;
        for (int i = 0; i < 8; ++i) len = (len << 8) | static_cast<unsigned char>(buf_[2 + i]);
        at = 10;
      }
      const bool masked = (b1 & 0x80) != 0;
      unsigned char mask[4] = {0, 0, 0, 0};
      if (masked) {
        if (!need(at + 4)) return;
        for (int i = 0; i < 4; ++i) mask[i] = static_cast<unsigned char>(buf_[at + i]);
        at += 4;
      }
      if (len > (64u << 20) || !need(at + len)) return;
      std::string payload = buf_.substr(at, len);
      buf_.erase(0, at + len);
      for (std::size_t i = 0; i < payload.size(); ++i) payload[i] = static_cast<char>(payload[i] ^ mask[i % 4]);
      std::string out(1, static_cast<char>(b0));
      if (payload.size() < 126) {
        out += static_cast<char>(payload.size());
      } else if (payload.size() < 65536) {
        out += static_cast<char>(126);
        out += static_cast<char>(payload.size() >> 8);
        out += static_cast<char>(payload.size() & 0xff);
      } else {
        out += static_cast<char>(127);
        for (int i = 7; i >= 0; --i) out += static_cast<char>((static_cast<std::uint64_t>(payload.size()) >> (i * 8)) & 0xff);
      }
      if (!send_all(fd_, out + payload)) return;
      if ((b0 & 0x0f) == 8) return;  // close echoed
    }
  }

  int fd_;
  std::string buf_, body_;
};

}  // namespace

int serve_http(int fd, const char* token_file, int session_seconds) {
  g_token_file = token_file;
  g_session_seconds = session_seconds > 0 ? session_seconds : 3600;
  sockaddr_in sin{};
  socklen_t len = sizeof sin;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&sin), &len);
  g_port = ntohs(sin.sin_port);
  ::srandom(static_cast<unsigned>(::getpid()) ^ static_cast<unsigned>(::time(nullptr)));
  std::printf("listening %d\n", g_port);
  std::fflush(stdout);
  for (;;) {
    const int c = ::accept4(fd, nullptr, nullptr, SOCK_CLOEXEC);
    if (c < 0) {
      if (errno == EINTR || errno == ECONNABORTED) continue;
      return 1;
    }
    std::thread([c] {
      Conn conn(c);
      conn.run();
      ::close(c);
    }).detach();
  }
}

}  // namespace controller::dispatch::testing

namespace controller::dispatch::testing {

// The bench's direct row: logs in to 127.0.0.1:<port> with the token file, then sends n GETs of
// /api/echo on one keep-alive connection; prints "n <n> total_us <t> p50_us <p>".
int bench_client(int port, const char* token_file, int n) {
  std::ifstream f(token_file, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in sin{};
  sin.sin_family = AF_INET;
  sin.sin_port = htons(static_cast<std::uint16_t>(port));
  sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<const sockaddr*>(&sin), sizeof sin) != 0) return 2;
  struct Sink : appliance::http::BodySink {
    bool on_head() override { return true; }
    void on_body(const char*, std::size_t) override {}
    void on_complete() override {}
  } sink;
  std::string buf;
  auto exchange = [&](const std::string& req, int* status, std::string* cookie) -> bool {
    if (!send_all(fd, req)) return false;
    MessageParser p(MessageParser::Kind::kResponse, sink);
    for (;;) {
      if (!buf.empty()) {
        const MessageParser::Feed r = p.feed(buf.data(), buf.size());
        if (r.status == MessageParser::Status::kError) return false;
        buf.erase(0, r.consumed);
        if (r.status == MessageParser::Status::kComplete) break;
      }
      char b[65536];
      const ssize_t k = ::recv(fd, b, sizeof b, 0);
      if (k <= 0) return false;
      buf.append(b, static_cast<std::size_t>(k));
    }
    *status = p.status_code();
    if (cookie != nullptr) {
      for (const auto& h : p.headers()) {
        if (lower(h.name) == "set-cookie") *cookie = h.value.substr(0, h.value.find(';'));
      }
    }
    return true;
  };
  const std::string body = "{\"password\":\"" + ss.str() + "\"}";
  int status = 0;
  std::string cookie;
  if (!exchange("POST /auth/session HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: "
                "application/json\r\nContent-Length: " +
                    std::to_string(body.size()) + "\r\n\r\n" + body,
                &status, &cookie) ||
      status != 200) {
    return 3;
  }
  const std::string req = "GET /api/echo HTTP/1.1\r\nHost: 127.0.0.1\r\nCookie: " + cookie + "\r\n\r\n";
  std::vector<long long> us;
  const auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < n; ++i) {
    const auto a = std::chrono::steady_clock::now();
    if (!exchange(req, &status, nullptr) || status != 200) return 4;
    us.push_back(std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - a).count());
  }
  const long long total = std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - t0).count();
  std::sort(us.begin(), us.end());
  std::printf("n %d total_us %lld p50_us %lld\n", n, total, us.empty() ? 0 : us[(us.size() + 1) / 2 - 1]);
  ::close(fd);
  return 0;
}

}  // namespace controller::dispatch::testing
