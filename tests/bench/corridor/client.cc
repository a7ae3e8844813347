#include "tests/bench/corridor/client.h"

#include <fcntl.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <utility>

#include "tests/bench/common/report.h"
#include "tests/bench/common/socket.h"
#include "tests/bench/corridor/upstream.h"
#include "tests/support/tls_hello.h"

namespace bench {
namespace {

using Clock = std::chrono::steady_clock;
constexpr std::size_t kClientBuffer = 1 << 20;

bool is_200(const std::string& head) {
  return head.size() >= 12 && head.rfind("HTTP/1.", 0) == 0 && head.compare(8, 4, " 200") == 0 &&
         head.find("\r\n\r\n") == head.size() - 4;
}

bool expect_line(int fd, const char* want, std::string* error) {
  char buf[64];
  std::size_t have = 0;
  const std::size_t length = std::strlen(want);
  while (have < length) {
    const ssize_t n = recv(fd, buf + have, length - have, 0);
    if (n <= 0) {
      *error = std::string("no '") + want + "' from the upstream (" + (n == 0 ? "EOF" : std::strerror(errno)) + ")";
      return false;
    }
    have += static_cast<std::size_t>(n);
  }
  if (std::memcmp(buf, want, length) != 0) {
    *error = "upstream answered '" + std::string(buf, have) + "'";
    return false;
  }
  return true;
}

double ms_since(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

}  // namespace

int open_route(const Route& route, std::string* error) {
  // Every route starts as a TLS client would: one ClientHello record naming the target's host
  // (the gatekeeper relays nothing before it; the upstream skips it).
  const std::string hello = gk_test::client_hello(route.target.substr(0, route.target.rfind(':')));
  if (!route.via_proxy) {
    const int direct = connect_ipv4(route.upstream_ip, kUpstreamPort, error);
    if (direct >= 0 && !send_all(direct, hello)) {
      *error = "send ClientHello failed";
      close(direct);
      return -1;
    }
    return direct;
  }
  const int fd = connect_ipv4("127.0.0.1", route.proxy_port, error);
  if (fd < 0) return -1;
  if (!send_all(fd, "CONNECT " + route.target + " HTTP/1.1\r\nHost: " + route.target + "\r\n\r\n")) {
    *error = "send CONNECT failed";
    close(fd);
    return -1;
  }
  const std::string head = read_head(fd);
  if (!is_200(head)) {
    *error = "CONNECT " + route.target + " answered '" + head.substr(0, head.find('\r')) + "'";
    close(fd);
    return -1;
  }
  if (!send_all(fd, hello)) {
    *error = "send ClientHello failed";
    close(fd);
    return -1;
  }
  return fd;
}

bool ping_route(const Route& route, std::string* error) {
  const int fd = open_route(route, error);
  if (fd < 0) return false;
  const bool ok = send_all(fd, "PING\n") && expect_line(fd, "PONG\n", error);
  close(fd);
  return ok;
}

Latency connect_latency(const Route& route, int count, bool ping_after) {
  Latency result;
  std::vector<double> samples;
  samples.reserve(static_cast<std::size_t>(count));
  std::string error;
  for (int i = 0; i < count; ++i) {
    const auto start = Clock::now();
    const int fd = open_route(route, &error);
    if (fd < 0 || (ping_after && !(send_all(fd, "PING\n") && expect_line(fd, "PONG\n", &error)))) {
      if (result.first_failure.empty()) result.first_failure = error + " (connection " + std::to_string(i) + ")";
      ++result.failures;
      if (fd >= 0) close(fd);
      continue;
    }
    samples.push_back(ms_since(start));
    close(fd);
  }
  std::sort(samples.begin(), samples.end());
  result.samples = std::move(samples);
  if (result.samples.empty()) return result;
  result.p50_ms = percentile(result.samples, 0.50);
  result.p99_ms = percentile(result.samples, 0.99);
  result.ok = result.failures == 0;
  return result;
}

Latency combine(const std::vector<Latency>& rounds) {
  Latency out;
  for (const Latency& r : rounds) {
    out.samples.insert(out.samples.end(), r.samples.begin(), r.samples.end());
    out.failures += r.failures;
    if (out.first_failure.empty()) out.first_failure = r.first_failure;
  }
  std::sort(out.samples.begin(), out.samples.end());
  if (out.samples.empty()) return out;
  out.p50_ms = percentile(out.samples, 0.50);
  out.p99_ms = percentile(out.samples, 0.99);
  out.ok = out.failures == 0;
  return out;
}

Transfer transfer(const Route& route, int tunnels, std::uint64_t bytes_each, Flow flow) {
  Transfer result;
  struct Leg {
    int fd = -1;
    std::uint64_t moved = 0;
    bool sent_all = false;
    bool done = false;
  };
  std::vector<Leg> legs(static_cast<std::size_t>(tunnels));
  auto close_all = [&] {
    for (auto& leg : legs) {
      if (leg.fd >= 0) close(leg.fd);
    }
  };
  for (auto& leg : legs) {
    leg.fd = open_route(route, &result.error);
    if (leg.fd < 0) {
      close_all();
      return result;
    }
  }
  const int epfd = epoll_create1(EPOLL_CLOEXEC);
  const std::string command =
      (flow == Flow::kDownload ? "SOURCE " : "SINK ") + std::to_string(bytes_each) + "\n";
  std::vector<char> buffer(kClientBuffer, 'y');
  const auto start = Clock::now();
  for (std::size_t i = 0; i < legs.size(); ++i) {
    send_all(legs[i].fd, command);
    fcntl(legs[i].fd, F_SETFL, fcntl(legs[i].fd, F_GETFL) | O_NONBLOCK);
    epoll_event ev{};
    ev.events = flow == Flow::kDownload ? EPOLLIN : (EPOLLIN | EPOLLOUT);
    ev.data.u64 = i;
    epoll_ctl(epfd, EPOLL_CTL_ADD, legs[i].fd, &ev);
  }
  std::size_t remaining = legs.size();
  std::vector<epoll_event> events(64);
  while (remaining > 0) {
    const int n = epoll_wait(epfd, events.data(), static_cast<int>(events.size()), kIoTimeoutMs);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      result.error = "stalled for " + std::to_string(kIoTimeoutMs / 1000) + " s";
      break;
    }
    for (int e = 0; e < n && result.error.empty(); ++e) {
      Leg& leg = legs[events[e].data.u64];
      if (leg.done) continue;
      if (flow == Flow::kUpload && !leg.sent_all && (events[e].events & EPOLLOUT) != 0) {
        while (leg.moved < bytes_each) {
          const std::size_t want = static_cast<std::size_t>(std::min<std::uint64_t>(buffer.size(), bytes_each - leg.moved));
          const ssize_t sent = send(leg.fd, buffer.data(), want, MSG_NOSIGNAL);
          if (sent < 0 && errno == EAGAIN) break;
          if (sent <= 0) {
            result.error = std::string("send: ") + std::strerror(errno);
            break;
          }
          leg.moved += static_cast<std::uint64_t>(sent);
        }
        if (leg.moved == bytes_each) {
          leg.sent_all = true;
          epoll_event ev{};
          ev.events = EPOLLIN;
          ev.data.u64 = events[e].data.u64;
          epoll_ctl(epfd, EPOLL_CTL_MOD, leg.fd, &ev);
        }
      }
      if ((events[e].events & (EPOLLIN | EPOLLHUP | EPOLLERR)) == 0) continue;
      while (!leg.done) {
        const ssize_t got = recv(leg.fd, buffer.data(), buffer.size(), 0);
        if (got < 0 && errno == EAGAIN) break;
        if (got <= 0) {
          result.error = got == 0 ? "EOF after " + std::to_string(leg.moved) + " bytes"
                                  : std::string("recv: ") + std::strerror(errno);
          break;
        }
        if (flow == Flow::kDownload) {
          leg.moved += static_cast<std::uint64_t>(got);
          leg.done = leg.moved >= bytes_each;
        } else {
          leg.done = leg.sent_all && got == 3 && std::memcmp(buffer.data(), "OK\n", 3) == 0;
          if (!leg.done) result.error = "unexpected upload answer";
        }
      }
      if (leg.done) {
        epoll_ctl(epfd, EPOLL_CTL_DEL, leg.fd, nullptr);
        --remaining;
      }
      if (!result.error.empty()) break;
    }
    if (!result.error.empty()) break;
  }
  const double seconds = ms_since(start) / 1000.0;
  close(epfd);
  close_all();
  if (!result.error.empty()) return result;
  result.mib_per_s = static_cast<double>(bytes_each) * tunnels / (1024.0 * 1024.0) / seconds;
  result.ok = true;
  return result;
}

std::vector<int> hold_tunnels(const Route& route, int count, std::string* error) {
  std::vector<int> fds;
  for (int i = 0; i < count; ++i) {
    const int fd = open_route(route, error);
    if (fd < 0 || !(send_all(fd, "PING\n") && expect_line(fd, "PONG\n", error))) {
      if (fd >= 0) close(fd);
      for (int held : fds) close(held);
      return {};
    }
    fds.push_back(fd);
  }
  return fds;
}

}  // namespace bench
