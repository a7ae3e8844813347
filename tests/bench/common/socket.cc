#include "tests/bench/common/socket.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "tests/support/socket_io.h"

namespace bench {

sockaddr_in ipv4_address(const std::string& ip, std::uint16_t port) {
  sockaddr_in sin{};
  sin.sin_family = AF_INET;
  sin.sin_port = htons(port);
  inet_pton(AF_INET, ip.c_str(), &sin.sin_addr);
  return sin;
}

int connect_ipv4(const std::string& ip, std::uint16_t port, std::string* error) {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  timeval tv{kIoTimeoutMs / 1000, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
  const sockaddr_in sin = ipv4_address(ip, port);
  if (connect(fd, reinterpret_cast<const sockaddr*>(&sin), sizeof sin) != 0) {
    if (error != nullptr) *error = "connect(" + ip + ":" + std::to_string(port) + "): " + std::strerror(errno);
    close(fd);
    return -1;
  }
  return fd;
}

int connect_loopback(std::uint16_t port) { return connect_ipv4("127.0.0.1", port, nullptr); }

std::string read_head(int fd) {
  std::string head;
  char buf[4096];
  while (head.size() < kHeadMax && head.find("\r\n\r\n") == std::string::npos) {
    const ssize_t n = recv(fd, buf, sizeof buf, 0);
    if (n <= 0) break;
    head.append(buf, static_cast<std::size_t>(n));
  }
  return head;
}

int http_status(const std::string& head) {
  if (head.size() < 12 || head.rfind("HTTP/1.", 0) != 0 || head[8] != ' ') return 0;
  return std::max(0, gk_test::decimal_word(std::string_view(head).substr(9)));
}

}  // namespace bench
