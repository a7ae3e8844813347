#include "tests/bench/window/upstream.h"

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>
#include <new>
#include <unordered_map>
#include <vector>

#include "tests/bench/common/server.h"
#include "tests/bench/common/socket.h"
#include "tests/bench/window/http.h"
#include "tests/bench/window/stream.h"

namespace bench {
namespace {

constexpr std::size_t kReadBuffer = 64 * 1024;

struct Conn {
  Stream stream;
  std::string in;
  std::string out;
  std::size_t out_at = 0;
  bool close_after = false;  // the request said Connection: close; FIN once `out` is written
  bool wants_write = false;  // TLS needs the socket writable to go on (handshake or a write)
};

class Server {
 public:
  Server(int epfd, SSL_CTX* tls, const std::string& secret, UpstreamCounters* counters)
      : epfd_(epfd), tls_(tls), expected_("Bearer " + secret), counters_(counters), rx_(kReadBuffer) {
    const std::string body(kUpstreamBody);
    ok_ = "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: " + std::to_string(body.size()) +
          "\r\n\r\n" + body;
    refused_ = "HTTP/1.1 401 Unauthorized\r\nContent-Length: 0\r\n\r\n";
  }

  void accept_all(int listen_fd, bool with_tls) {
    while (true) {
      const int fd = accept4(listen_fd, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
      if (fd < 0) return;
      ++(with_tls ? counters_->tls : counters_->plain);
      int one = 1;
      setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
      auto conn = std::make_unique<Conn>();
      bssl::UniquePtr<SSL> ssl;
      if (with_tls) {
        ssl.reset(SSL_new(tls_));
        SSL_set_accept_state(ssl.get());
      }
      conn->stream.open(fd, std::move(ssl));
      epoll_event ev{};
      ev.events = EPOLLIN;
      ev.data.fd = fd;
      epoll_ctl(epfd_, EPOLL_CTL_ADD, fd, &ev);
      conns_[fd] = std::move(conn);
    }
  }

  void on_event(int fd) {
    auto it = conns_.find(fd);
    if (it == conns_.end()) return;
    Conn& c = *it->second;
    c.wants_write = false;
    const bool alive = read_all(c) && answer_all(c) && flush(c) && !(c.close_after && c.out.empty());
    if (!alive) {
      conns_.erase(it);  // the Stream closes the fd, which leaves the epoll set
      return;
    }
    epoll_event ev{};
    ev.events = c.wants_write || !c.out.empty() ? (EPOLLIN | EPOLLOUT) : EPOLLIN;
    ev.data.fd = fd;
    epoll_ctl(epfd_, EPOLL_CTL_MOD, fd, &ev);
  }

 private:
  bool read_all(Conn& c) {
    while (!c.close_after) {
      const IoResult r = c.stream.read(rx_.data(), rx_.size());
      switch (r.status) {
        case Io::kMoved:
          c.in.append(rx_.data(), r.bytes);
          if (c.in.size() > kHeadMax * 4) return false;  // a client that does not wait for answers
          continue;
        case Io::kWantRead:
          return true;
        case Io::kWantWrite:
          c.wants_write = true;
          return true;
        case Io::kEof:
        case Io::kError:
          return false;
      }
    }
    return true;
  }

  // Answers every whole head read so far, in order (pipelining works, nobody here uses it).
  bool answer_all(Conn& c) {
    std::size_t at = 0;
    while (!c.close_after) {
      const std::size_t end = c.in.find("\r\n\r\n", at);
      if (end == std::string::npos) break;
      const std::string_view head(c.in.data() + at, end - at);
      const std::optional<std::string_view> length = header_value(head, "content-length");
      if ((length && *length != "0") || header_value(head, "transfer-encoding")) return false;
      const std::optional<std::string_view> auth = header_value(head, "authorization");
      c.out += auth && *auth == expected_ ? ok_ : refused_;
      c.close_after = header_has_token(head, "connection", "close");
      at = end + 4;
    }
    c.in.erase(0, at);
    return c.in.size() <= kHeadMax;
  }

  bool flush(Conn& c) {
    while (c.out_at < c.out.size()) {
      const IoResult r = c.stream.write(c.out.data() + c.out_at, c.out.size() - c.out_at);
      switch (r.status) {
        case Io::kMoved:
          c.out_at += r.bytes;
          continue;
        case Io::kWantWrite:
          c.wants_write = true;
          return true;
        case Io::kWantRead:
          return true;
        case Io::kEof:
        case Io::kError:
          return false;
      }
    }
    c.out.clear();
    c.out_at = 0;
    return true;
  }

  int epfd_;
  SSL_CTX* tls_;
  std::string expected_;  // the authorization value of a request the window (or direct) signed
  std::string ok_, refused_;
  UpstreamCounters* counters_;
  std::vector<char> rx_;
  std::unordered_map<int, std::unique_ptr<Conn>> conns_;
};

}  // namespace

UpstreamCounters* shared_upstream_counters() {
  void* memory = mmap(nullptr, sizeof(UpstreamCounters), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (memory == MAP_FAILED) return nullptr;
  return new (memory) UpstreamCounters;
}

int run_http_upstream(const std::string& ip, SSL_CTX* tls, const std::string& secret,
                      UpstreamCounters* counters, int ready_fd, std::uint16_t tls_port) {
  const int plain_fd = listen_ipv4(ip, kPlainPort);
  const int tls_fd = listen_ipv4(ip, tls_port);
  if (plain_fd < 0 || tls_fd < 0) return 1;
  const int epfd = epoll_create1(EPOLL_CLOEXEC);
  Server server(epfd, tls, secret, counters);
  return serve_forever(
      epfd, {plain_fd, tls_fd}, ready_fd, [&](int fd) { server.accept_all(fd, fd == tls_fd); },
      [&](int fd, std::uint32_t) { server.on_event(fd); });
}

}  // namespace bench
