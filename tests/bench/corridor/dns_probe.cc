#include "tests/bench/corridor/dns_probe.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <string_view>

namespace bench {

std::optional<double> dns_query_ms(const std::string& server, const std::string& name, int timeout_ms) {
  // RFC 1035 §4.1: header (id, RD, one question), QNAME as labels, QTYPE A, QCLASS IN.
  std::string query = {'\x12', '\x34', '\x01', '\x00', '\x00', '\x01', '\x00', '\x00',
                       '\x00', '\x00', '\x00', '\x00'};
  std::string_view rest = name;
  while (!rest.empty()) {
    const auto dot = rest.find('.');
    const std::string_view label = rest.substr(0, dot);
    query.push_back(static_cast<char>(label.size()));
    query.append(label);
    rest = dot == std::string_view::npos ? std::string_view{} : rest.substr(dot + 1);
  }
  query.append({'\x00', '\x00', '\x01', '\x00', '\x01'});

  const int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return std::nullopt;
  sockaddr_in sin{};
  sin.sin_family = AF_INET;
  sin.sin_port = htons(53);
  inet_pton(AF_INET, server.c_str(), &sin.sin_addr);
  const auto start = std::chrono::steady_clock::now();
  std::optional<double> result;
  if (sendto(fd, query.data(), query.size(), 0, reinterpret_cast<sockaddr*>(&sin), sizeof sin) ==
      static_cast<ssize_t>(query.size())) {
    pollfd p{fd, POLLIN, 0};
    char answer[512];
    if (poll(&p, 1, timeout_ms) == 1 && recv(fd, answer, sizeof answer, 0) >= 12 &&
        answer[0] == '\x12' && answer[1] == '\x34') {
      result = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    }
  }
  close(fd);
  return result;
}

}  // namespace bench
