#include "escape-suite/net.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <linux/errqueue.h>
#include <net/if.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/random.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <optional>

#include "escape-suite/probe.h"
#include "policy/number.h"

namespace escape {
namespace {

// Waits for `events` on fd until the deadline; returns false on timeout or error.
bool wait_fd(int fd, short events, std::int64_t deadline) {
  for (;;) {
    const std::int64_t left = deadline - now_ms();
    if (left <= 0) return false;
    pollfd p{fd, events, 0};
    const int r = ::poll(&p, 1, static_cast<int>(left));
    if (r > 0) return true;
    if (r == 0) return false;
    if (errno != EINTR) return false;
  }
}

std::string sockaddr_text(const sockaddr_storage& ss) {
  char text[INET6_ADDRSTRLEN] = {};
  if (ss.ss_family == AF_INET) {
    ::inet_ntop(AF_INET, &reinterpret_cast<const sockaddr_in*>(&ss)->sin_addr, text, sizeof text);
  } else if (ss.ss_family == AF_INET6) {
    ::inet_ntop(AF_INET6, &reinterpret_cast<const sockaddr_in6*>(&ss)->sin6_addr, text, sizeof text);
  }
  return text;
}

std::string local_address(int fd) {
  sockaddr_storage ss{};
  socklen_t len = sizeof ss;
  if (::getsockname(fd, reinterpret_cast<sockaddr*>(&ss), &len) != 0) return "";
  const std::string t = sockaddr_text(ss);
  return t == "0.0.0.0" || t == "::" ? "" : t;
}

// The sender of the first ICMP error IP_RECVERR queued on fd ("" when none).
std::string queued_icmp_sender(int fd) {
  char data[256];
  alignas(cmsghdr) char control[512];
  iovec iov{data, sizeof data};
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  msg.msg_control = control;
  msg.msg_controllen = sizeof control;
  if (::recvmsg(fd, &msg, MSG_ERRQUEUE | MSG_DONTWAIT) < 0) return "";
  for (cmsghdr* c = CMSG_FIRSTHDR(&msg); c != nullptr; c = CMSG_NXTHDR(&msg, c)) {
    const bool v4 = c->cmsg_level == SOL_IP && c->cmsg_type == IP_RECVERR;
    const bool v6 = c->cmsg_level == SOL_IPV6 && c->cmsg_type == IPV6_RECVERR;
    if (!v4 && !v6) continue;
    sock_extended_err ee{};
    std::memcpy(&ee, CMSG_DATA(c), sizeof ee);
    if (ee.ee_origin != SO_EE_ORIGIN_ICMP && ee.ee_origin != SO_EE_ORIGIN_ICMP6) continue;
    // The offender address follows the extended error (SO_EE_OFFENDER); copied, not cast in place.
    sockaddr_storage off{};
    const std::size_t room = c->cmsg_len - CMSG_LEN(sizeof ee);
    std::memcpy(&off, CMSG_DATA(c) + sizeof ee, room < sizeof off ? room : sizeof off);
    return sockaddr_text(off);
  }
  return "";
}

}  // namespace

std::vector<ProbeVerdict> probe_all(const std::vector<ProbeSpec>& probes, int timeout_ms) {
  std::vector<ProbeVerdict> out(probes.size());
  std::vector<int> fds(probes.size(), -1);
  const auto finish = [&](std::size_t i, int err) {
    out[i].err = err;
    if (err != 0) out[i].icmp_from = queued_icmp_sender(fds[i]);
    out[i].local = local_address(fds[i]);
    ::close(fds[i]);
    fds[i] = -1;
  };
  for (std::size_t i = 0; i < probes.size(); ++i) {
    const ProbeSpec& p = probes[i];
    const bool v6 = p.to.family() == AF_INET6;
    const int type = p.kind == ProbeKind::kTcp ? SOCK_STREAM : SOCK_DGRAM;
    const int icmp = v6 ? static_cast<int>(IPPROTO_ICMPV6) : static_cast<int>(IPPROTO_ICMP);
    const int proto = p.kind == ProbeKind::kIcmpEcho ? icmp : 0;
    fds[i] = ::socket(p.to.family(), type | SOCK_NONBLOCK | SOCK_CLOEXEC, proto);
    if (fds[i] < 0) {
      out[i].err = errno;
      continue;
    }
    const int on = 1;
    ::setsockopt(fds[i], v6 ? SOL_IPV6 : SOL_IP, v6 ? IPV6_RECVERR : IP_RECVERR, &on, sizeof on);
    if (::connect(fds[i], reinterpret_cast<const sockaddr*>(&p.to.ss), p.to.len) != 0 && errno != EINPROGRESS) {
      finish(i, errno);
      continue;
    }
    if (p.kind == ProbeKind::kTcp) continue;
    // An echo request (type 8, or 128 for ICMPv6; the kernel fills id and checksum) or a datagram.
    const unsigned char echo[8] = {static_cast<unsigned char>(v6 ? 128 : 8), 0, 0, 0, 0, 1, 0, 1};
    const std::string_view udp = "openchamber-escape-probe";
    const ssize_t n = p.kind == ProbeKind::kIcmpEcho ? ::send(fds[i], echo, sizeof echo, MSG_DONTWAIT)
                                                     : ::send(fds[i], udp.data(), udp.size(), MSG_DONTWAIT);
    if (n < 0) finish(i, errno);
  }
  const std::int64_t deadline = now_ms() + timeout_ms;
  for (;;) {
    std::vector<pollfd> waits;
    std::vector<std::size_t> index;
    for (std::size_t i = 0; i < probes.size(); ++i) {
      if (fds[i] < 0) continue;
      waits.push_back(pollfd{fds[i], static_cast<short>(probes[i].kind == ProbeKind::kTcp ? POLLOUT : POLLIN), 0});
      index.push_back(i);
    }
    const std::int64_t left = deadline - now_ms();
    if (waits.empty() || left <= 0) break;
    const int r = ::poll(waits.data(), waits.size(), static_cast<int>(left));
    if (r < 0 && errno != EINTR) break;
    for (std::size_t w = 0; r > 0 && w < waits.size(); ++w) {
      if (waits[w].revents == 0) continue;
      const std::size_t i = index[w];
      if (probes[i].kind == ProbeKind::kTcp) {
        int soerr = 0;
        socklen_t len = sizeof soerr;
        ::getsockopt(fds[i], SOL_SOCKET, SO_ERROR, &soerr, &len);
        if (soerr == 0 && (waits[w].revents & POLLOUT) != 0) out[i].answered = true;
        finish(i, soerr == 0 && !out[i].answered ? EIO : soerr);
        continue;
      }
      char buf[512];
      const ssize_t n = ::recv(fds[i], buf, sizeof buf, MSG_DONTWAIT);
      if (n >= 0) {
        out[i].answered = true;
        finish(i, 0);
      } else if (errno != EAGAIN && errno != EINTR) {
        finish(i, errno);
      }
    }
  }
  for (std::size_t i = 0; i < probes.size(); ++i) {
    if (fds[i] >= 0) finish(i, ETIMEDOUT);
  }
  return out;
}

bool split_host_port(std::string_view text, std::string& host, std::uint16_t& port) {
  port = 0;
  std::string_view h = text;
  std::string_view p;
  if (!text.empty() && text.front() == '[') {
    const std::size_t close = text.find(']');
    if (close == std::string_view::npos) return false;
    h = text.substr(1, close - 1);
    if (close + 1 < text.size()) {
      if (text[close + 1] != ':') return false;
      p = text.substr(close + 2);
    }
  } else {
    const std::size_t colon = text.rfind(':');
    if (colon != std::string_view::npos && text.find(':') == colon) {
      h = text.substr(0, colon);
      p = text.substr(colon + 1);
    }
  }
  if (!p.empty()) {
    const std::optional<std::uint16_t> v = policy::parse_number<std::uint16_t>(p);
    if (!v) return false;
    port = *v;
  }
  host = std::string(h);
  return !host.empty();
}

std::optional<Addr> parse_addr(std::string_view host_in, std::uint16_t port) {
  std::string host(host_in);
  if (host.size() > 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
  Addr a;
  sockaddr_in v4{};
  if (::inet_pton(AF_INET, host.c_str(), &v4.sin_addr) == 1) {
    v4.sin_family = AF_INET;
    v4.sin_port = htons(port);
    std::memcpy(&a.ss, &v4, sizeof v4);
    a.len = sizeof v4;
    a.text = host + ":" + std::to_string(port);
    return a;
  }
  std::string scope;
  const std::size_t pct = host.find('%');
  if (pct != std::string::npos) {
    scope = host.substr(pct + 1);
    host = host.substr(0, pct);
  }
  sockaddr_in6 v6{};
  if (::inet_pton(AF_INET6, host.c_str(), &v6.sin6_addr) == 1) {
    v6.sin6_family = AF_INET6;
    v6.sin6_port = htons(port);
    if (!scope.empty()) v6.sin6_scope_id = ::if_nametoindex(scope.c_str());
    std::memcpy(&a.ss, &v6, sizeof v6);
    a.len = sizeof v6;
    a.text = "[" + std::string(host_in) + "]:" + std::to_string(port);
    return a;
  }
  return std::nullopt;
}

ConnectResult tcp_connect(const Addr& to, int timeout_ms) {
  ConnectResult r;
  const int fd = ::socket(to.family(), SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    r.err = errno;
    return r;
  }
  if (::connect(fd, reinterpret_cast<const sockaddr*>(&to.ss), to.len) == 0) {
    r.fd = fd;
    return r;
  }
  if (errno != EINPROGRESS) {
    r.err = errno;
    ::close(fd);
    return r;
  }
  if (!wait_fd(fd, POLLOUT, now_ms() + timeout_ms)) {
    r.err = ETIMEDOUT;
    ::close(fd);
    return r;
  }
  int soerr = 0;
  socklen_t len = sizeof soerr;
  ::getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &len);
  if (soerr != 0) {
    r.err = soerr;
    ::close(fd);
    return r;
  }
  r.fd = fd;
  return r;
}

int udp_send(const Addr& to, std::string_view payload) {
  const int fd = ::socket(to.family(), SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return errno;
  const ssize_t n = ::sendto(fd, payload.data(), payload.size(), MSG_DONTWAIT,
                             reinterpret_cast<const sockaddr*>(&to.ss), to.len);
  const int err = n < 0 ? errno : 0;
  ::close(fd);
  return err;
}

std::string dns_build_query(std::uint16_t id, std::string_view name, std::uint16_t qtype) {
  if (name.empty() || name.size() > 253) return "";
  std::string q;
  q.push_back(static_cast<char>(id >> 8));
  q.push_back(static_cast<char>(id & 0xff));
  q += std::string("\x01\x00\x00\x01\x00\x00\x00\x00\x00\x00", 10);  // RD, one question
  std::size_t start = 0;
  while (start < name.size()) {
    std::size_t dot = name.find('.', start);
    if (dot == std::string_view::npos) dot = name.size();
    const std::size_t len = dot - start;
    if (len == 0 || len > 63) return "";
    q.push_back(static_cast<char>(len));
    q.append(name.substr(start, len));
    start = dot + 1;
  }
  q.push_back('\0');
  q.push_back(static_cast<char>(qtype >> 8));
  q.push_back(static_cast<char>(qtype & 0xff));
  q += std::string("\x00\x01", 2);  // class IN
  return q;
}

bool dns_parse_reply(std::string_view r, std::uint16_t id, DnsAnswer& out) {
  const auto u8 = [&](std::size_t i) { return static_cast<unsigned char>(r[i]); };
  const auto u16 = [&](std::size_t i) { return static_cast<unsigned>(u8(i) << 8 | u8(i + 1)); };
  if (r.size() < 12 || u16(0) != id || (u8(2) & 0x80) == 0) return false;
  out.answered = true;
  out.rcode = u8(3) & 0x0f;
  const unsigned qd = u16(4);
  const unsigned an = u16(6);
  std::size_t pos = 12;
  // Skips a (possibly compressed) name; false when it runs off the end.
  const auto skip_name = [&](std::size_t& p) {
    for (int labels = 0; labels < 128; ++labels) {
      if (p >= r.size()) return false;
      const unsigned len = u8(p);
      if ((len & 0xc0) == 0xc0) {
        p += 2;
        return p <= r.size();
      }
      if (len == 0) {
        p += 1;
        return true;
      }
      p += 1 + len;
    }
    return false;
  };
  for (unsigned i = 0; i < qd && i < 4; ++i) {
    if (!skip_name(pos) || pos + 4 > r.size()) return true;
    pos += 4;
  }
  for (unsigned i = 0; i < an && out.addresses.size() < kMaxDnsAnswers; ++i) {
    if (!skip_name(pos) || pos + 10 > r.size()) return true;
    const unsigned type = u16(pos);
    const unsigned rdlen = u16(pos + 8);
    pos += 10;
    if (pos + rdlen > r.size()) return true;
    char text[INET6_ADDRSTRLEN] = {};
    if (type == kDnsTypeA && rdlen == 4) {
      ::inet_ntop(AF_INET, r.data() + pos, text, sizeof text);
      out.addresses.emplace_back(text);
    } else if (type == kDnsTypeAAAA && rdlen == 16) {
      ::inet_ntop(AF_INET6, r.data() + pos, text, sizeof text);
      out.addresses.emplace_back(text);
    } else if (type == kDnsTypeTXT) {
      out.addresses.emplace_back("TXT");
    }
    pos += rdlen;
  }
  return true;
}

DnsAnswer dns_query(const Addr& server, std::string_view name, std::uint16_t qtype, int timeout_ms) {
  DnsAnswer out;
  std::uint16_t id = 0x5eed;
  if (::getrandom(&id, sizeof id, 0) != static_cast<ssize_t>(sizeof id)) id = 0x5eed;
  const std::string q = dns_build_query(id, name, qtype);
  if (q.empty()) {
    out.err = EINVAL;
    return out;
  }
  const int fd = ::socket(server.family(), SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd < 0) {
    out.err = errno;
    return out;
  }
  if (::connect(fd, reinterpret_cast<const sockaddr*>(&server.ss), server.len) != 0 ||
      ::send(fd, q.data(), q.size(), 0) < 0) {
    out.err = errno;
    ::close(fd);
    return out;
  }
  const std::int64_t deadline = now_ms() + timeout_ms;
  char buf[1500];
  while (wait_fd(fd, POLLIN, deadline)) {
    const ssize_t n = ::recv(fd, buf, sizeof buf, 0);
    if (n < 0) {
      if (errno == EAGAIN || errno == EINTR) continue;
      out.err = errno;  // ECONNREFUSED: an ICMP port unreachable came back
      break;
    }
    if (dns_parse_reply(std::string_view(buf, static_cast<std::size_t>(n)), id, out)) break;
  }
  if (!out.answered && out.err == 0) out.err = ETIMEDOUT;
  ::close(fd);
  return out;
}

HttpReply http_exchange(const Addr& to, std::string_view request, int timeout_ms) {
  HttpReply reply;
  const ConnectResult c = tcp_connect(to, timeout_ms);
  if (c.fd < 0) {
    reply.err = c.err;
    return reply;
  }
  const std::int64_t deadline = now_ms() + timeout_ms;
  std::size_t sent = 0;
  while (sent < request.size()) {
    const ssize_t n = ::send(c.fd, request.data() + sent, request.size() - sent, MSG_NOSIGNAL);
    if (n > 0) {
      sent += static_cast<std::size_t>(n);
      continue;
    }
    if (n < 0 && errno == EAGAIN && wait_fd(c.fd, POLLOUT, deadline)) continue;
    reply.err = n < 0 ? errno : EPIPE;
    ::close(c.fd);
    return reply;
  }
  char buf[2048];
  while (reply.head.size() < kMaxHttpHeadBytes &&
         reply.head.find("\r\n\r\n") == std::string::npos) {
    if (!wait_fd(c.fd, POLLIN, deadline)) {
      if (reply.head.empty()) reply.err = ETIMEDOUT;
      break;
    }
    const ssize_t n = ::recv(c.fd, buf, sizeof buf, 0);
    if (n < 0) {
      if (errno == EAGAIN || errno == EINTR) continue;
      reply.err = errno;
      break;
    }
    if (n == 0) break;
    reply.head.append(buf, static_cast<std::size_t>(n));
  }
  ::close(c.fd);
  // "HTTP/1.1 403 ..." -> 403
  if (reply.head.size() >= 12 && reply.head.compare(0, 5, "HTTP/") == 0) {
    const std::size_t sp = reply.head.find(' ');
    if (sp != std::string::npos && sp + 4 <= reply.head.size()) {
      const std::optional<int> status =
          policy::parse_number<int>(std::string_view(reply.head).substr(sp + 1, 3));
      if (status) {
        reply.got = true;
        reply.status = *status;
      }
    }
  }
  return reply;
}

}  // namespace escape
