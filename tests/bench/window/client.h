// The client of every window measurement: one epoll loop in this process with N connections,
// each doing its requests back to back (one in flight per connection, no pipelining), plain or
// TLS. A connection is kept for the next request unless the answer said `Connection: close` (the
// window, until it keeps client connections alive) or the target asks for a new connection per
// request; a kept connection the server closed before any answer byte is retried once on a new
// one. Every loop is bounded by a request count and a deadline.
#pragma once

#include <openssl/ssl.h>
#include <sys/types.h>

#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

#include "tests/bench/window/cpu.h"

namespace bench {

struct Target {
  std::string ip;  // IPv4 literal
  std::uint16_t port = 0;
  SSL_CTX* tls = nullptr;  // non-null: TLS to tls_host (SNI and name check)
  std::string tls_host;
  std::string request;  // sent as is for every request (a GET head)
  bool close_each =
      false;  // the client closes after every answer: a new TCP connection per request
};

struct Load {
  int clients = 1;
  int requests = 0;        // timed requests, over all clients
  int warmup = 0;          // untimed requests first, on the same connections
  double max_seconds = 0;  // the timed requests stop here even when fewer were done
  pid_t rss_pid = -1;      // >0: VmRSS of this process sampled every kRssSampleMs
  // Non-null: the upstream's count of accepted connections on the port this row reaches.
  const std::atomic<std::uint64_t>* upstream_accepts = nullptr;
  pid_t cpu_pid = -1;  // >0: this process's CPU time and system calls during the timed requests
};

struct LoadResult {
  int completed = 0;  // timed requests answered 200 with the whole body
  int failures = 0;   // timed requests that failed (status, EOF, connect or TLS error)
  int opened = 0;     // connections opened during the timed requests ("reconnects")
  int retried = 0;    // of which: a kept connection closed by the server before any answer byte
  long upstream_opened = -1;  // connections the upstream accepted during the timed requests
  double seconds = 0;
  double per_second = 0;
  double p50_ms = 0, p99_ms = 0;  // from the start of a request (its connect, when one was needed)
                                  // to the last byte of its answer
  bool capped = false;            // max_seconds ended the timed requests early
  long rss_peak_kib = -1;
  CpuUse cpu;                   // of Load::cpu_pid, over the timed requests (cpu.ok: measured)
  std::string error;            // the row could not be measured: stalled or too many failures
  std::string first_failure;    // what the first failed request met
  std::vector<double> samples;  // ms of every completed timed request, ascending
  [[nodiscard]] bool ok() const { return error.empty() && completed > 0; }
};
// One result from the rounds of one row: counts summed, samples pooled (nearest-rank percentiles),
// req/s = all completed / all timed seconds, the highest RSS peak; an error in any round stays.
LoadResult combine_loads(const std::vector<LoadResult>& rounds);

inline constexpr int kRssSampleMs = 100;
inline constexpr int kStallMs = 10000;  // no answer at all for this long ends a row

LoadResult run_load(const Target& target, const Load& load);

// `count` connections to a plain target, each doing one request (blocking). Kept: the server left
// the connection open after its answer. Those it closed are replaced by new connections that sent
// nothing yet, so `fds` holds `count` open connections either way (the caller closes them).
struct Held {
  std::vector<int> fds;
  int kept_alive = 0;
  std::string error;
};
Held hold_connections(const Target& target, int count);

}  // namespace bench
