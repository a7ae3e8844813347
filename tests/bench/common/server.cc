#include "tests/bench/common/server.h"

#include <netinet/in.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>

#include "tests/bench/common/socket.h"

namespace bench {

int listen_ipv4(const std::string& ip, std::uint16_t port) {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  int one = 1;
  setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  const sockaddr_in sin = ipv4_address(ip, port);
  if (bind(fd, reinterpret_cast<const sockaddr*>(&sin), sizeof sin) != 0 || listen(fd, 1024) != 0) {
    std::fprintf(stderr, "upstream: bind/listen %s:%u: %s\n", ip.c_str(), port, std::strerror(errno));
    close(fd);
    return -1;
  }
  return fd;
}

int serve_forever(int epfd, const std::vector<int>& listeners, int ready_fd, const std::function<void(int)>& on_accept,
                  const std::function<void(int, std::uint32_t)>& on_event) {
  for (int fd : listeners) {
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.fd = fd;
    if (epoll_ctl(epfd, EPOLL_CTL_ADD, fd, &ev) != 0) return 1;
  }
  if (write(ready_fd, "ready\n", 6) != 6) return 1;
  close(ready_fd);
  std::vector<epoll_event> events(256);
  while (true) {
    const int n = epoll_wait(epfd, events.data(), static_cast<int>(events.size()), -1);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return 1;
    for (int i = 0; i < n; ++i) {
      const int fd = events[i].data.fd;
      if (std::find(listeners.begin(), listeners.end(), fd) != listeners.end()) {
        on_accept(fd);
      } else {
        on_event(fd, events[i].events);
      }
    }
  }
}

}  // namespace bench
