// bench_window's table: requests/s, p50/p99 and reconnects per path and client count, ratios
// against the direct path with the same scheme and clients, the gatekeeper's RSS, the reference
// implementation's numbers as context, and PASS/MISS per target. A report for people,
// never an assertion: the exit status does not depend on it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tests/bench/common/report.h"
#include "tests/bench/window/client.h"

namespace bench {

// The window's targets.
inline constexpr double kTargetThroughputRatio = 0.8;  // 32-client req/s ≥ 0.8 × direct
inline constexpr long kTargetHeldRssKib = 8 * 1024;    // ≤ 8 MiB RSS at 64 connections
inline constexpr int kHeldConnections = 64;

// Who the client talks to: the upstream itself, the window, or nginx doing the window's job.
enum class Via : std::uint8_t { kDirect, kWindow, kNginx };

struct Row {
  std::string scheme;  // "plain" or "TLS": what reaches the upstream
  Via via = Via::kDirect;
  bool new_tcp_each = false;  // the client closed after every answer
  int clients = 0;
  LoadResult load;
};

struct WindowRss {
  long start = -1, warm = -1, held = -1, end = -1;  // KiB; -1: not measured
  int kept_alive = 0;                               // of kHeldConnections, after one request each
  std::string held_error;
};

// "direct, plain", "window, TLS", "window, plain, new TCP per request"
std::string row_name(const Row& row);

struct WindowRunInfo {
  Machine machine;
  int many_clients = 0;
  int warmup_one = 0, warmup_many = 0;  // per round of a row
  int rounds = 0;
  double max_seconds = 0;
  double dns_p50_ms = -1;
  std::string nginx_version;  // "nginx/1.22.1"; empty when nginx did not run
  std::string nginx_error;    // why the nginx rows are missing
};

void print_window_report(const WindowRunInfo& info, const std::vector<Row>& rows, const WindowRss& rss);

}  // namespace bench
