// The tunnel's first flight from the space's side: a tunnel the corridor approved for one name
// must not carry a TLS ClientHello for another (one allowed name on a shared CDN would otherwise
// open every site on it), nor one without a server name, with Encrypted Client Hello, or bytes that
// are not TLS. The runner's upstream echoes what it receives, so an echo proves bytes went up.
// Control in the same case: the same tunnel with a ClientHello naming --allowed-target's host
// comes back echoed. Behind the release gatekeeper the CONNECT itself is refused (403): that is
// the refusal the runner expects from it.
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>

#include "escape-suite/case.h"
#include "escape-suite/net.h"
#include "escape-suite/probe.h"
#include "escape-suite/resolve_names.h"

namespace escape {
namespace {

constexpr std::size_t kMaxTunnelReply = 64 * 1024;

void put16(std::string& out, std::size_t v) {
  out.push_back(static_cast<char>((v >> 8) & 0xff));
  out.push_back(static_cast<char>(v & 0xff));
}

// A minimal TLS 1.3-style ClientHello record; `server_name` empty: no server_name extension.
// `extra_type` non-zero: one more extension of that type with 16 bytes of data.
std::string client_hello(const std::string& server_name, std::uint16_t extra_type = 0) {
  std::string body;
  put16(body, 0x0303);
  body.append(32, '\x42');
  body.push_back(0);
  put16(body, 2);
  put16(body, 0x1301);
  body.push_back(1);
  body.push_back(0);
  std::string ext;
  if (!server_name.empty()) {
    put16(ext, 0);
    put16(ext, server_name.size() + 5);
    put16(ext, server_name.size() + 3);
    ext.push_back(0);
    put16(ext, server_name.size());
    ext += server_name;
  }
  put16(ext, 43);  // supported_versions: TLS 1.3
  put16(ext, 3);
  ext += std::string("\x02\x03\x04", 3);
  if (extra_type != 0) {
    put16(ext, extra_type);
    put16(ext, 16);
    ext.append(16, '\x65');
  }
  put16(body, ext.size());
  body += ext;
  std::string message(1, '\x01');
  message.push_back(static_cast<char>((body.size() >> 16) & 0xff));
  put16(message, body.size());
  message += body;
  std::string record("\x16\x03\x01", 3);
  put16(record, message.size());
  return record + message;
}

struct TunnelReply {
  int err = 0;          // connect/send errno
  std::string bytes;    // everything read: the head, then what came through the tunnel
  bool closed = false;  // the gatekeeper closed (EOF or reset) before the deadline
};

// CONNECT `authority`, then `first` at once; reads until the close, kMaxTunnelReply or the deadline.
TunnelReply tunnel(Context& ctx, const std::string& authority, const std::string& first) {
  TunnelReply out;
  const std::string& ip = gatekeeper_ip(ctx);
  const auto to = ip.empty() ? std::nullopt : parse_addr(ip, ctx.opts.corridor_port);
  if (!to) {
    out.err = EHOSTUNREACH;
    return out;
  }
  const ConnectResult c = tcp_connect(*to, ctx.opts.timeout_ms);
  if (c.fd < 0) {
    out.err = c.err;
    return out;
  }
  const std::string request = "CONNECT " + authority + " HTTP/1.1\r\nHost: " + authority + "\r\n\r\n" + first;
  const std::int64_t deadline = now_ms() + ctx.opts.timeout_ms;
  std::size_t sent = 0;
  while (sent < request.size() && now_ms() < deadline) {
    const ssize_t n = ::send(c.fd, request.data() + sent, request.size() - sent, MSG_NOSIGNAL);
    if (n > 0) {
      sent += static_cast<std::size_t>(n);
    } else if (n < 0 && (errno == EAGAIN || errno == EINTR)) {
      pollfd p{c.fd, POLLOUT, 0};
      ::poll(&p, 1, 100);
    } else {
      out.err = n < 0 ? errno : EPIPE;
      ::close(c.fd);
      return out;
    }
  }
  char buf[4096];
  while (out.bytes.size() < kMaxTunnelReply && now_ms() < deadline) {
    pollfd p{c.fd, POLLIN, 0};
    const int r = ::poll(&p, 1, static_cast<int>(deadline - now_ms()));
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) break;
    const ssize_t n = ::recv(c.fd, buf, sizeof buf, 0);
    if (n < 0 && (errno == EAGAIN || errno == EINTR)) continue;
    if (n <= 0) {
      out.closed = true;
      break;
    }
    out.bytes.append(buf, static_cast<std::size_t>(n));
    const std::size_t head_end = out.bytes.find("\r\n\r\n");
    if (head_end != std::string::npos && out.bytes.size() - head_end - 4 >= first.size()) {
      break;  // the whole echo came back
    }
  }
  ::close(c.fd);
  return out;
}

std::string status_of(const TunnelReply& r) {
  return r.bytes.size() >= 12 && r.bytes.compare(0, 5, "HTTP/") == 0 ? r.bytes.substr(9, 3) : "";
}

// What came through the tunnel after the 200 head.
std::string after_head(const TunnelReply& r) {
  const std::size_t end = r.bytes.find("\r\n\r\n");
  return end == std::string::npos ? "" : r.bytes.substr(end + 4);
}

Outcome refuses_first_flight(Context& ctx, const std::string& first, const std::string& what) {
  std::string host;
  std::uint16_t port = 0;
  if (ctx.opts.allowed_target.empty() || !split_host_port(ctx.opts.allowed_target, host, port)) {
    return inconclusive("the runner passed no --allowed-target");
  }
  const std::string target = ctx.opts.allowed_target;
  const TunnelReply r = tunnel(ctx, target, first);
  if (r.err != 0) return inconclusive("CONNECT " + target + ": no answer (" + errno_name(r.err) + ")");
  const std::string status = status_of(r);
  const std::string ev = "CONNECT " + target + " + " + what + " -> " + (status.empty() ? "no status" : status);
  if (status == "403") return inconclusive(ev + ": refused at the CONNECT, so the first flight was not reached");
  if (status != "200") return inconclusive(ev + ": unexpected answer");
  const std::string through = after_head(r);
  if (!through.empty()) return fail(ev + ": " + std::to_string(through.size()) + " bytes came back through the tunnel");
  if (!r.closed) return fail(ev + ": the tunnel stayed open");
  // Control: the same tunnel with the approved server name is relayed (the echo comes back).
  const std::string good = client_hello(host);
  const TunnelReply c = tunnel(ctx, target, good);
  const bool works = status_of(c) == "200" && after_head(c) == good;
  const std::string control = "control: ClientHello for " + host + " -> " +
                              (works ? "echoed" : "not echoed (" + std::to_string(after_head(c).size()) + " bytes)");
  if (!works) return inconclusive(ev + ", closed with no byte; " + control);
  return pass(ev + ", closed with no byte; " + control);
}

// DNS rebinding (the twin's resolver answers the test upstream and 127.0.0.2 in turn, TTL 0): each
// CONNECT must either be refused (the gatekeeper saw the loopback answer) or reach the address it
// checked, proved by the test upstream echoing a ClientHello for the name. A gatekeeper that
// checked one answer and resolved again to dial would reach loopback:443 (nothing listens: 502)
// or something other than the echo. The runner requires both outcomes in the twin and the matching
// journal records (controller/escape_resolve.cc).
Outcome rebinding(Context& ctx) {
  const Control& control = corridor_control(ctx);
  const std::string target = std::string(kRebindName) + ":443";
  const std::string hello = client_hello(kRebindName);
  std::string ev;
  for (int i = 0; i < kRebindConnects; ++i) {
    const TunnelReply r = tunnel(ctx, target, hello);
    if (r.err != 0)
      return inconclusive(ev + "CONNECT " + target + ": no answer (" + errno_name(r.err) + ")");
    const std::string status = status_of(r);
    if (status == "200") {
      if (after_head(r) != hello)
        return fail(ev + "CONNECT " + target + " -> 200 but no echo of the ClientHello (" +
                    std::to_string(after_head(r).size()) +
                    " bytes): the tunnel went somewhere other than the checked upstream");
      ev += "200 echoed; ";
    } else if (status == "403") {
      ev += "403; ";
    } else {
      return fail(ev + "CONNECT " + target + " -> " + (status.empty() ? "no status" : status) +
                  ": the gatekeeper dialled an address it did not approve");
    }
  }
  if (!control.works) return inconclusive(ev + control.evidence);
  return pass(ev + control.evidence);
}

}  // namespace

void add_corridor_tls_cases(std::vector<Case>& out) {
  add_case(out, "corridor.tls-other-server-name",
           "one allowed name on a shared CDN opens every site on it (auth.openai.com included)",
           "CONNECT --allowed-target, then a ClientHello naming auth.openai.com",
           "200 then the close, no byte echoed; control: the allowed name is echoed", [](Context& ctx) {
             return refuses_first_flight(ctx, client_hello("auth.openai.com"), "ClientHello(auth.openai.com)");
           });
  add_case(out, "corridor.tls-no-server-name", "a server picks its default site for a hello without a name",
           "CONNECT --allowed-target, then a ClientHello without server_name",
           "200 then the close, no byte echoed", [](Context& ctx) {
             return refuses_first_flight(ctx, client_hello(""), "ClientHello(no server_name)");
           });
  add_case(out, "corridor.tls-encrypted-client-hello", "hide the real server name inside ECH",
           "CONNECT --allowed-target, then a ClientHello naming it with an encrypted_client_hello (0xfe0d)",
           "200 then the close, no byte echoed", [](Context& ctx) {
             std::string host;
             std::uint16_t port = 0;
             split_host_port(ctx.opts.allowed_target, host, port);
             return refuses_first_flight(ctx, client_hello(host, 0xfe0d), "ClientHello(" + host + ", ECH)");
           });
  add_case(out, kRebindCase, "DNS rebinding: a name checked as public, dialled as private",
           std::string("CONNECT ") + kRebindName + ":443 " + std::to_string(kRebindConnects) +
               " times (the twin's resolver answers the test upstream and 127.0.0.2 in turn, TTL "
               "0), a ClientHello each",
           "each 200 echoes the ClientHello (the checked upstream) or is 403; never a 502",
           rebinding);
  add_case(out, "corridor.tls-not-tls", "carry another protocol (plain HTTP, SSH) through a TLS tunnel",
           "CONNECT --allowed-target, then a plain HTTP request", "200 then the close, no byte echoed",
           [](Context& ctx) {
             return refuses_first_flight(ctx, "GET / HTTP/1.1\r\nHost: auth.openai.com\r\n\r\n", "plain HTTP");
           });
}

}  // namespace escape
