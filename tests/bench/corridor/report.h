// The table: absolute numbers per path, ratios against direct TCP, and PASS/MISS per
// target for each proxy. A report for people, never an assertion: the exit status does not depend
// on it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tests/bench/common/report.h"
#include "tests/bench/corridor/client.h"

namespace bench {

// The corridor's targets.
inline constexpr double kTargetThroughputRatio = 0.85;      // one tunnel ≥ 0.85 × direct
inline constexpr double kTargetManyThroughputRatio = 0.75;  // many tunnels ≥ 0.75 × direct
inline constexpr long kTargetHeldRssKib = 6 * 1024;         // ≤ 6 MiB with the tunnels held
inline constexpr double kTargetExtraP50Ms = 0.1;        // CONNECT→200 p50 ≤ direct connect + 0.1 ms
inline constexpr long kTargetIdleRssKib = 2048;         // idle RSS ≤ 2 MiB
inline constexpr long kTargetPerTunnelKib = 64;         // ≤ 64 KiB per open tunnel
inline constexpr int kHeldTunnels = 64;

struct Series {  // one throughput measure over several runs
  std::vector<double> runs;
  std::string error;
  [[nodiscard]] bool ok() const { return error.empty() && !runs.empty(); }
  [[nodiscard]] double median() const;
  [[nodiscard]] std::string text() const;  // "median (min–max)" or the error
};

struct PathResult {
  std::string name;
  std::string error;  // set when the path could not be measured at all
  Series down1, up1, down_many, up_many;
  Latency latency;
  long rss_start = -1, rss_warm = -1, rss_held = -1, rss_end = -1;  // KiB; -1: not measured
  [[nodiscard]] double per_tunnel_kib() const;
};

struct RunInfo {
  Machine machine;
  std::string note;
  std::uint64_t bytes_one = 0, bytes_each = 0;
  int tunnels = 0, runs = 0, connections = 0;
  double dns_p50_ms = -1;
  Latency direct_rtt;  // direct connect + one PING round trip
  // The gatekeeper's CONNECT→200 while a space spins every core (spin.h): with the space's
  // limits, and without any (context). Empty description: not measured.
  struct Spun {
    std::string description, error;
    Latency latency;
  };
  std::vector<Spun> spun;
};

// results[0] is direct TCP.
void print_report(const RunInfo& info, const std::vector<PathResult>& results);

}  // namespace bench
