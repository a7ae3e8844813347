#include "tests/bench/corridor/report.h"

#include <algorithm>
#include <cstdio>

#include "tests/bench/common/report.h"

namespace bench {
namespace {

std::string ratio(const Series& s, const Series& direct) {
  if (!s.ok() || !direct.ok()) return "—";
  return fixed(s.median() / direct.median(), 2) + "×";
}

}  // namespace

double Series::median() const {
  std::vector<double> sorted = runs;
  std::sort(sorted.begin(), sorted.end());
  return percentile(sorted, 0.50);
}

std::string Series::text() const {
  if (!ok()) return error.empty() ? "—" : "failed: " + error;
  const auto [lo, hi] = std::minmax_element(runs.begin(), runs.end());
  return fixed(median(), 0) + " (" + fixed(*lo, 0) + "–" + fixed(*hi, 0) + ")";
}

double PathResult::per_tunnel_kib() const {
  return static_cast<double>(rss_held - rss_warm) / kHeldTunnels;
}

void print_report(const RunInfo& info, const std::vector<PathResult>& results) {
  const PathResult& direct = results.front();
  std::printf("\n## bench_corridor — %s\n\n", info.machine.date.c_str());
  print_machine(info.machine, info.note);
  std::printf("Throughput in MiB/s, median (nearest rank) of %d runs (min–max); the paths are interleaved, "
              "each round measures every path once. One tunnel: %llu MiB. "
              "Many: %d tunnels × %llu MiB at once.\n\n",
              info.runs, static_cast<unsigned long long>(info.bytes_one >> 20), info.tunnels,
              static_cast<unsigned long long>(info.bytes_each >> 20));
  std::printf(
      "| path | 1 tunnel down | × direct | 1 tunnel up | × direct | %d tunnels down | × direct | "
      "%d "
      "tunnels up | × direct |\n",
      info.tunnels, info.tunnels);
  std::printf("|---|---|---|---|---|---|---|---|---|\n");
  for (const auto& r : results) {
    if (!r.error.empty()) {
      std::printf("| %s | not measured: %s | | | | | | | |\n", r.name.c_str(), r.error.c_str());
      continue;
    }
    std::printf("| %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", r.name.c_str(),
                r.down1.text().c_str(), ratio(r.down1, direct.down1).c_str(), r.up1.text().c_str(),
                ratio(r.up1, direct.up1).c_str(), r.down_many.text().c_str(),
                ratio(r.down_many, direct.down_many).c_str(), r.up_many.text().c_str(),
                ratio(r.up_many, direct.up_many).c_str());
  }

  std::printf("\nCONNECT→200 over %d fresh connections per path, one at a time, in rounds of 50 per path "
              "(direct: TCP connect only), ms; nearest-rank percentiles.\n\n",
              info.connections);
  std::printf("| path | p50 | p99 | p50 above direct connect | failures |\n|---|---|---|---|---|\n");
  for (const auto& r : results) {
    if (!r.error.empty() || r.latency.p50_ms <= 0) continue;
    const std::string above = &r == &direct ? "—" : signed_fixed(r.latency.p50_ms - direct.latency.p50_ms, 3);
    std::printf("| %s | %s | %s | %s | %d |\n", r.name.c_str(), fixed(r.latency.p50_ms, 3).c_str(),
                fixed(r.latency.p99_ms, 3).c_str(), above.c_str(), r.latency.failures);
  }
  if (info.direct_rtt.p50_ms > 0) {
    std::printf("| direct connect + 1 round trip (context) | %s | %s | %s | %d |\n",
                fixed(info.direct_rtt.p50_ms, 3).c_str(), fixed(info.direct_rtt.p99_ms, 3).c_str(),
                signed_fixed(info.direct_rtt.p50_ms - direct.latency.p50_ms, 3).c_str(), info.direct_rtt.failures);
  }
  for (const RunInfo::Spun& spun : info.spun) {
    if (!spun.error.empty()) {
      std::printf("| gatekeeper while a space spins (%s) | not measured: %s | | | |\n", spun.description.c_str(), spun.error.c_str());
      continue;
    }
    std::printf("| gatekeeper while a space spins (%s) | %s | %s | %s | %d |\n", spun.description.c_str(),
                fixed(spun.latency.p50_ms, 3).c_str(), fixed(spun.latency.p99_ms, 3).c_str(),
                signed_fixed(spun.latency.p50_ms - direct.latency.p50_ms, 3).c_str(), spun.latency.failures);
  }
  for (const RunInfo::Spun& spun : info.spun) {
    if (!spun.latency.first_failure.empty()) {
      std::printf("\ngatekeeper while a space spins (%s): %d of %d failed; first: %s\n",
                  spun.description.c_str(), spun.latency.failures, info.connections,
                  spun.latency.first_failure.c_str());
    }
  }
  for (const auto& r : results) {
    if (!r.latency.first_failure.empty()) {
      std::printf("\n%s: %d of %d failed; first: %s\n", r.name.c_str(), r.latency.failures, info.connections,
                  r.latency.first_failure.c_str());
    }
  }
  if (info.dns_p50_ms > 0) {
    std::printf("| one DNS A query to the namespace's dnsmasq (context) | %s | | | |\n",
                fixed(info.dns_p50_ms, 3).c_str());
  }

  std::printf("\nProxy RSS (VmRSS), KiB: at start (listening, no tunnel yet), idle after one tunnel, "
              "with %d open tunnels (one PING through each), after the whole run.\n\n", kHeldTunnels);
  std::printf("| proxy | at start | idle, warm | %d tunnels | per tunnel | after the run |\n"
              "|---|---|---|---|---|---|\n", kHeldTunnels);
  for (std::size_t i = 1; i < results.size(); ++i) {
    const auto& r = results[i];
    if (!r.error.empty()) continue;
    const std::string per = r.rss_held < 0 ? "—" : fixed(r.per_tunnel_kib(), 1);
    std::printf("| %s | %s | %s | %s | %s | %s |\n", r.name.c_str(), kib(r.rss_start).c_str(),
                kib(r.rss_warm).c_str(), kib(r.rss_held).c_str(), per.c_str(), kib(r.rss_end).c_str());
  }

  std::printf("\nTargets (report only; PASS/MISS with the measured value).\n\n| target |");
  for (std::size_t i = 1; i < results.size(); ++i) std::printf(" %s |", results[i].name.c_str());
  std::printf("\n|---|");
  for (std::size_t i = 1; i < results.size(); ++i) std::printf("---|");
  std::printf("\n");
  auto row = [&](const char* title, auto judge) {
    std::printf("| %s |", title);
    for (std::size_t i = 1; i < results.size(); ++i) std::printf(" %s |", judge(results[i]).c_str());
    std::printf("\n");
  };
  auto throughput = [&](const Series PathResult::*member, double target) {
    return [&, member, target](const PathResult& r) {
      const Series& s = r.*member;
      const Series& d = direct.*member;
      const bool measured = r.error.empty() && s.ok() && d.ok();
      const double x = measured ? s.median() / d.median() : 0;
      return verdict(measured, x >= target, fixed(x, 2) + "×");
    };
  };
  row("one tunnel down ≥ 0.85 × direct", throughput(&PathResult::down1, kTargetThroughputRatio));
  row("one tunnel up ≥ 0.85 × direct", throughput(&PathResult::up1, kTargetThroughputRatio));
  const std::string many_down = std::to_string(info.tunnels) + " tunnels down ≥ 0.75 × direct";
  const std::string many_up = std::to_string(info.tunnels) + " tunnels up ≥ 0.75 × direct";
  row(many_down.c_str(), throughput(&PathResult::down_many, kTargetManyThroughputRatio));
  row(many_up.c_str(), throughput(&PathResult::up_many, kTargetManyThroughputRatio));
  row("CONNECT→200 p50 ≤ direct connect + 0.1 ms", [&](const PathResult& r) {
    const bool measured = r.error.empty() && r.latency.p50_ms > 0 && direct.latency.p50_ms > 0;
    const double above = r.latency.p50_ms - direct.latency.p50_ms;
    return verdict(measured, above <= kTargetExtraP50Ms, signed_fixed(above, 3) + " ms");
  });
  row("idle RSS ≤ 2 MiB", [&](const PathResult& r) {
    const bool measured = r.error.empty() && r.rss_start > 0;
    return verdict(measured, r.rss_start <= kTargetIdleRssKib, kib(r.rss_start) + " KiB");
  });
  row("≤ 6 MiB RSS with 64 tunnels open", [&](const PathResult& r) {
    const bool measured = r.error.empty() && r.rss_held > 0;
    return verdict(measured, r.rss_held <= kTargetHeldRssKib, kib(r.rss_held) + " KiB");
  });
  row("≤ 64 KiB per open tunnel", [&](const PathResult& r) {
    const bool measured = r.error.empty() && r.rss_held > 0 && r.rss_warm > 0;
    const double per = measured ? r.per_tunnel_kib() : 0;
    return verdict(measured, per <= kTargetPerTunnelKib, fixed(per, 1) + " KiB");
  });
  std::printf("\n");
}

}  // namespace bench
