#include "tests/bench/corridor/upstream.h"
#include "policy/number.h"

#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <optional>
#include <unordered_map>
#include <vector>

#include "tests/bench/common/server.h"

namespace bench {
namespace {

constexpr std::size_t kIoBuffer = 1 << 20;

struct Conn {
  int fd = -1;
  std::string hello;         // the client's first TLS record, skipped (the corridor checks it)
  bool hello_done = false;
  std::string line;
  std::uint64_t to_send = 0;  // SOURCE bytes left
  std::uint64_t to_sink = 0;  // SINK bytes left
  bool sinking = false;
};

class Server {
 public:
  explicit Server(int epfd) : epfd_(epfd), buffer_(kIoBuffer, 'x'), rx_(kIoBuffer) {}

  void accept_all(int listen_fd) {
    while (true) {
      const int fd = accept4(listen_fd, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
      if (fd < 0) return;
      auto conn = std::make_unique<Conn>();
      conn->fd = fd;
      epoll_event ev{};
      ev.events = EPOLLIN;
      ev.data.fd = fd;
      epoll_ctl(epfd_, EPOLL_CTL_ADD, fd, &ev);
      conns_[fd] = std::move(conn);
    }
  }

  void on_event(int fd, std::uint32_t events) {
    auto it = conns_.find(fd);
    if (it == conns_.end()) return;
    Conn& c = *it->second;
    bool alive = true;
    if ((events & EPOLLOUT) != 0 && c.to_send > 0) alive = pump_source(c);
    if (alive && (events & (EPOLLIN | EPOLLHUP | EPOLLERR)) != 0 && c.to_send == 0) alive = read_some(c);
    if (!alive) {
      close(fd);
      conns_.erase(it);
    }
  }

 private:
  void want_write(Conn& c, bool on) {
    epoll_event ev{};
    ev.events = on ? EPOLLOUT : EPOLLIN;
    ev.data.fd = c.fd;
    epoll_ctl(epfd_, EPOLL_CTL_MOD, c.fd, &ev);
  }

  bool pump_source(Conn& c) {
    while (c.to_send > 0) {
      const std::size_t n = c.to_send < buffer_.size() ? c.to_send : buffer_.size();
      const ssize_t sent = send(c.fd, buffer_.data(), n, MSG_NOSIGNAL);
      if (sent < 0 && errno == EAGAIN) return true;
      if (sent <= 0) return false;
      c.to_send -= static_cast<std::uint64_t>(sent);
    }
    want_write(c, false);
    return true;
  }

  bool answer(Conn& c, const char* text) {
    return send(c.fd, text, std::strlen(text), MSG_NOSIGNAL) == static_cast<ssize_t>(std::strlen(text));
  }

  // Consumes bytes already read: SINK counts them, line mode parses them.
  bool consume(Conn& c, const char* data, std::size_t length) {
    // Every route starts with one ClientHello record (client.cc): skip it whole.
    while (!c.hello_done && length > 0) {
      const std::size_t want =
          c.hello.size() < 5 ? 5 : 5 + ((static_cast<std::size_t>(static_cast<std::uint8_t>(c.hello[3])) << 8) |
                                        static_cast<std::uint8_t>(c.hello[4]));
      const std::size_t take = std::min(length, want - c.hello.size());
      c.hello.append(data, take);
      data += take;
      length -= take;
      if (c.hello.size() >= 5 && c.hello[0] != 0x16) return false;
      if (c.hello.size() > 5 && c.hello.size() == want) c.hello_done = true;
    }
    while (length > 0) {
      if (c.sinking) {
        const std::size_t take = length < c.to_sink ? length : static_cast<std::size_t>(c.to_sink);
        c.to_sink -= take;
        data += take;
        length -= take;
        if (c.to_sink == 0) {
          c.sinking = false;
          if (!answer(c, "OK\n")) return false;
        }
        continue;
      }
      const char* nl = static_cast<const char*>(std::memchr(data, '\n', length));
      const std::size_t take = nl ? static_cast<std::size_t>(nl - data) : length;
      c.line.append(data, take);
      if (c.line.size() > kUpstreamLineMax) return false;
      if (nl == nullptr) return true;
      data += take + 1;
      length -= take + 1;
      if (!command(c)) return false;
      c.line.clear();
      if (c.to_send > 0) return length == 0;  // the client waits for SOURCE bytes before sending
    }
    return true;
  }

  bool command(Conn& c) {
    if (c.line == "PING") return answer(c, "PONG\n");
    if (c.line.rfind("SOURCE ", 0) == 0) {
      const std::optional<std::uint64_t> n = policy::parse_number<std::uint64_t>(c.line.substr(7));
      if (!n) return false;  // a count that does not read: an unknown command
      c.to_send = *n;
      if (c.to_send == 0) return true;
      want_write(c, true);
      return pump_source(c);
    }
    if (c.line.rfind("SINK ", 0) == 0) {
      const std::optional<std::uint64_t> n = policy::parse_number<std::uint64_t>(c.line.substr(5));
      if (!n) return false;
      c.to_sink = *n;
      c.sinking = c.to_sink > 0;
      return c.sinking || answer(c, "OK\n");
    }
    return false;
  }

  bool read_some(Conn& c) {
    while (true) {
      const ssize_t n = recv(c.fd, rx_.data(), rx_.size(), 0);
      if (n < 0 && errno == EAGAIN) return true;
      if (n <= 0) return false;
      if (!consume(c, rx_.data(), static_cast<std::size_t>(n))) return false;
      if (c.to_send > 0) return true;
    }
  }

  int epfd_;
  std::vector<char> buffer_;  // what SOURCE sends
  std::vector<char> rx_;      // what every read lands in
  std::unordered_map<int, std::unique_ptr<Conn>> conns_;
};

}  // namespace

int run_upstream(const std::string& ip, std::uint16_t port, int ready_fd) {
  const int listen_fd = listen_ipv4(ip, port);
  if (listen_fd < 0) return 1;
  const int epfd = epoll_create1(EPOLL_CLOEXEC);
  Server server(epfd);
  return serve_forever(
      epfd, {listen_fd}, ready_fd, [&](int fd) { server.accept_all(fd); },
      [&](int fd, std::uint32_t events) { server.on_event(fd, events); });
}

}  // namespace bench
