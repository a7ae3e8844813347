// dispatch-inner-server: a test program of ours, static like the bridge, placed into a live space
// by the dispatcher's Docker tests. It stands in for the space's inner server.
//
//   dispatch-inner-server raw <port>
//     On 127.0.0.1:<port>, one connection at a time, a first line picks the exchange:
//       "UP\n"       then bytes until the client's half-close: answers the lower-case hex
//                    sha256 of those bytes and "\n", then closes;
//       "DOWN <n>\n" answers n bytes of pattern_byte(i) (i = 0..n-1), then closes.
//     It serves until killed. Its first line on stdout is "listening\n" once the port is bound.
//
//   dispatch-inner-server http <port> <token-file> [session-seconds]
//     The inner server's contract on 127.0.0.1:<port> (inner_http.cc): POST /auth/session with
//     {"password": <the token file's bytes>} gives a session cookie; every other request needs
//     it. Test routes echo what arrived, stream bytes and SSE, misbehave on purpose, and serve a
//     WebSocket echo.
//
//   dispatch-inner-server bench <port> <token-file> <n>
//     A client (the benchmark's direct row): logs in, then n GETs of /api/echo on one
//     keep-alive connection; prints "n <n> total_us <t> p50_us <p>".
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "controller/dispatch/testing/inner_http.h"
#include "controller/dispatch/testing/pattern.h"
#include "escape-suite/sha256.h"
#include "policy/number.h"

namespace {

bool write_all(int fd, const char* data, std::size_t n) {
  while (n > 0) {
    const ssize_t w = ::write(fd, data, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return false;
    data += w;
    n -= static_cast<std::size_t>(w);
  }
  return true;
}

void serve_raw(int fd) {
  std::string line;
  char c = 0;
  while (line.size() < 64 && ::read(fd, &c, 1) == 1 && c != '\n') line += c;
  if (line == "UP") {
    std::string all;
    char buf[65536];
    for (;;) {
      const ssize_t n = ::read(fd, buf, sizeof buf);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;
      all.append(buf, static_cast<std::size_t>(n));
    }
    const std::string hex = escape::sha256_hex(all) + "\n";
    (void)write_all(fd, hex.data(), hex.size());
  } else if (line.rfind("DOWN ", 0) == 0) {
    const std::uint64_t n = policy::parse_number<std::uint64_t>(line.substr(5)).value_or(0);
    char buf[65536];
    for (std::uint64_t sent = 0; sent < n;) {
      const std::size_t chunk = static_cast<std::size_t>(std::min<std::uint64_t>(sizeof buf, n - sent));
      for (std::size_t i = 0; i < chunk; ++i) {
        buf[i] = static_cast<char>(controller::dispatch::testing::pattern_byte(sent + i));
      }
      if (!write_all(fd, buf, chunk)) break;
      sent += chunk;
    }
  }
  ::close(fd);
}

int listen_on(int port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  const int one = 1;
  (void)::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  sockaddr_in sin{};
  sin.sin_family = AF_INET;
  sin.sin_port = htons(static_cast<std::uint16_t>(port));
  sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (fd < 0 || ::bind(fd, reinterpret_cast<const sockaddr*>(&sin), sizeof sin) != 0 || ::listen(fd, 64) != 0) {
    std::perror("dispatch-inner-server: listen 127.0.0.1");
    return -1;
  }
  return fd;
}

}  // namespace

int main(int argc, char** argv) {
  ::signal(SIGPIPE, SIG_IGN);
  const auto number = [](const char* text) { return policy::parse_number<int>(text).value_or(-1); };
  if (argc == 5 && std::strcmp(argv[1], "bench") == 0) {
    const int port = number(argv[2]), requests = number(argv[4]);
    if (port < 1 || port > 65535 || requests < 0) return 64;
    return controller::dispatch::testing::bench_client(port, argv[3], requests);
  }
  if (argc >= 4 && std::strcmp(argv[1], "http") == 0) {
    const int port = number(argv[2]);  // 0: any free port (printed)
    if (port < 0 || port > 65535) return 64;
    const int session = argc >= 5 ? number(argv[4]) : 3600;
    if (session < 0) return 64;
    const int fd = listen_on(port);
    if (fd < 0) return 2;
    return controller::dispatch::testing::serve_http(fd, argv[3], session);
  }
  if (argc != 3 || std::strcmp(argv[1], "raw") != 0) {
    std::fputs("usage: dispatch-inner-server raw <port> | http <port> <token-file> [session-seconds]\n", stderr);
    return 64;
  }
  const int port = number(argv[2]);
  if (port < 1 || port > 65535) return 64;
  const int fd = listen_on(port);
  if (fd < 0) return 2;
  std::fputs("listening\n", stdout);
  std::fflush(stdout);
  for (;;) {
    const int c = ::accept4(fd, nullptr, nullptr, SOCK_CLOEXEC);
    if (c < 0) {
      if (errno == EINTR || errno == ECONNABORTED) continue;
      return 1;
    }
    serve_raw(c);
  }
}
