// The upstream test host: one epoll loop in its own process inside the benchmark namespace,
// listening on <inside ip>:443. Each connection reads command lines:
//   "PING\n"       answers "PONG\n"
//   "SOURCE <n>\n" sends n bytes (download), then reads the next command
//   "SINK <n>\n"   reads n bytes (upload), then answers "OK\n"
// and is closed on EOF. No command, no byte: an open tunnel that costs the upstream nothing.
#pragma once

#include <cstdint>
#include <string>

namespace bench {

// Serves until killed. Writes "ready\n" to ready_fd once listening; returns non-zero on a setup
// error (after printing it to stderr).
int run_upstream(const std::string& ip, std::uint16_t port, int ready_fd);

inline constexpr std::uint16_t kUpstreamPort = 443;
inline constexpr std::size_t kUpstreamLineMax = 64;

}  // namespace bench
