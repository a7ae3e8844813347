// The soak's load: client processes (forked, one per kind) that run until a deadline against one
// gatekeeper, each bounded (one connection or transfer in flight, sizes and times capped), and
// count what they saw in memory shared with the soak. Every answer is judged against the policy
// in force, which the control worker changes only in ways that leave each client's expectation
// the same (allowlists that always hold the upstream's name and never the refused ones; a churn
// grant no client uses).
#pragma once

#include <openssl/ssl.h>
#include <sys/types.h>

#include <atomic>
#include <cstdint>
#include <string>

namespace soak {

inline constexpr const char* kUpstreamName = "upstream.bench.test";
inline constexpr const char* kUpstreamDomain = "bench.test";
inline constexpr std::uint16_t kEchoPort = 443;        // corridor tunnels: a TLS echo server
inline constexpr std::uint16_t kWindowTlsPort = 8443;  // the window's TLS upstream
inline constexpr std::size_t kMaxTransfer = 8u << 20;  // bytes per tunnel transfer, at most
inline constexpr int kIoDeadlineMs = 60000;            // any single exchange

struct Counters {
  std::atomic<std::uint64_t> tunnels{0}, transfers{0}, transfer_bytes{0}, sha_failures{0},
      tunnel_errors{0};
  std::atomic<std::uint64_t> allowed_refused{
      0};                                  // a CONNECT the policy allows answered other than 200
  std::atomic<std::uint64_t> refusals{0};  // refused as they must be
  std::atomic<std::uint64_t> refused_allowed{0};  // a request the policy refuses answered 200
  std::atomic<std::uint64_t> window_ok{0}, window_refused{0}, window_errors{0};
  std::atomic<std::uint64_t> slow_ok{0}, slow_errors{0};
  std::atomic<std::uint64_t> control_changes{0}, control_failures{0};
  std::atomic<std::uint64_t> reads{0}, read_failures{0};
  std::atomic<std::uint64_t> sent_requests{0};  // every request or CONNECT any worker sent
};
static_assert(std::atomic<std::uint64_t>::is_always_lock_free, "shared between processes");
Counters* shared_counters();  // MAP_SHARED, made before the workers fork

struct Setup {
  std::string ip;  // the upstreams' address inside the namespace
  std::uint16_t corridor = 0, window = 0, control = 0;
  std::string key;         // the window key
  SSL_CTX* tls = nullptr;  // the tunnels' TLS client: the run's test CA, SNI and name check
  double deadline = 0;     // monotonic seconds
};

// Each runs until setup.deadline and returns 0.
int tunnel_worker(const Setup& setup, Counters* c, unsigned seed);
int refusal_worker(const Setup& setup, Counters* c);
int window_worker(const Setup& setup, Counters* c);
int slow_worker(const Setup& setup, Counters* c);
int control_worker(const Setup& setup, Counters* c);
int reader_worker(const Setup& setup, Counters* c);

// The echo upstream (in the namespace, on ip:kEchoPort): TLS with the run's certificate (the
// corridor passes only TLS), every byte back.
int run_echo_upstream(const std::string& ip, SSL_CTX* tls, int ready_fd);

// One HTTP exchange with the control channel (Connection: close): status and body, 0 when none.
struct Answer {
  int status = 0;
  std::string body;
};
Answer control_call(std::uint16_t port, const std::string& method, const std::string& path,
                    const std::string& body = {});

double now_seconds();

}  // namespace soak
