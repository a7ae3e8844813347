// Loopback sockets for tests of every folder: a client connected to 127.0.0.1:port, and a port
// there that was free a moment ago. Header-only, so no test target links anything new for them.
#pragma once

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdint>

namespace gk_test {

// A TCP socket connected to 127.0.0.1:port (the connect blocks: a listener's backlog takes it
// before its loop accepts), made non-blocking afterwards when `nonblocking`; -1 when the connect
// failed.
inline int connect_loopback(std::uint16_t port, bool nonblocking = false) {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  sockaddr_in sin{};
  sin.sin_family = AF_INET;
  sin.sin_port = htons(port);
  sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (connect(fd, reinterpret_cast<const sockaddr*>(&sin), sizeof sin) != 0) {
    close(fd);
    return -1;
  }
  if (nonblocking) fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
  return fd;
}

// A port on 127.0.0.1 that was free a moment ago (bound to port 0 and released): for a server of
// another process that must be told its port; 0 when none could be bound.
inline std::uint16_t free_loopback_port() {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return 0;
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof a;
  std::uint16_t port = 0;
  if (bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0 &&
      getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) == 0) {
    port = ntohs(a.sin_port);
  }
  close(fd);
  return port;
}

}  // namespace gk_test
