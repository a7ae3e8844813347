// The window benchmark's upstream: one epoll loop in its own process inside the benchmark
// namespace, HTTP/1.1 with keep-alive on <inside ip>:80 (plain) and <inside ip>:443 (TLS with
// the run's test certificate). Every GET whose `authorization` is exactly `Bearer <secret>`
// answers 200 with `Content-Length: 2` and "ok"; any other GET answers 401 (so a row that
// measured refusals shows as failures, not as speed). `Connection: close` in a request: the answer,
// then FIN. A request with a body or a head over kHeadMax: the connection is closed.
#pragma once

#include <openssl/ssl.h>

#include <atomic>
#include <cstdint>
#include <string>

namespace bench {

inline constexpr std::uint16_t kPlainPort = 80;
inline constexpr std::uint16_t kTlsPort = 443;
inline constexpr std::string_view kUpstreamBody = "ok";

// Connections the upstream accepted on each port: how often the window (or a direct client) had
// to open one, and for TLS do a full handshake. In memory shared with the benchmark process.
struct UpstreamCounters {
  std::atomic<std::uint64_t> plain{0};
  std::atomic<std::uint64_t> tls{0};
};
static_assert(std::atomic<std::uint64_t>::is_always_lock_free, "shared between processes");
// A MAP_SHARED anonymous mapping made before the fork; it lives as long as the process.
UpstreamCounters* shared_upstream_counters();

// Serves until killed. Writes "ready\n" to ready_fd once both ports listen; returns non-zero on a
// set-up error (after printing it to stderr). `tls` serves port 443 (owned by the caller).
// tls_port: where TLS listens (the soak keeps 443 for its corridor echo upstream).
int run_http_upstream(const std::string& ip, SSL_CTX* tls, const std::string& secret,
                      UpstreamCounters* counters, int ready_fd, std::uint16_t tls_port = kTlsPort);

}  // namespace bench
