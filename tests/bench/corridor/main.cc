// bench_corridor: direct TCP vs gatekeeper-test vs squid vs tinyproxy, in one run, on loopback and
// one network namespace of our own (tests/bench/README.md). Prints a table; never a timed
// assertion. Exit 0 once the table is printed, 2 when the environment cannot run it.
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "tests/bench/common/dns.h"
#include "tests/bench/common/netns.h"
#include "tests/bench/common/process.h"
#include "tests/bench/common/run.h"
#include "tests/bench/corridor/client.h"
#include "tests/bench/corridor/proxies.h"
#include "tests/bench/corridor/report.h"
#include "tests/bench/corridor/spin.h"
#include "tests/bench/corridor/upstream.h"

namespace {

using namespace bench;

constexpr const char* kUpstreamName = "upstream.bench.test";
constexpr const char* kUpstreamDomain = "bench.test";

struct Options : CommonOptions {
  std::uint64_t mib_one = 1024;  // one tunnel, each direction
  std::uint64_t mib_each = 64;   // per tunnel in the many-tunnel run
  int tunnels = 32;
  int runs = 3;
  int connections = 1000;
};

constexpr const char* kUsage =
    "usage: bench_corridor [--mib N] [--mib-each N] [--tunnels N] [--runs N] "
    "[--connections N] [--gatekeeper PATH] [--only gatekeeper|squid|tinyproxy]...\n"
    "  defaults: 1024 MiB through one tunnel, 32 tunnels x 64 MiB, 3 runs, 1000 connections,\n"
    "  gatekeeper-test next to this binary. Needs root (network namespace, veth).\n";

bool parse(int argc, char** argv, Options* o) {
  return parse_options(argc, argv, {"gatekeeper", "squid", "tinyproxy"}, o, [o](const std::string& name, long n) {
    if (name == "--mib") {
      o->mib_one = static_cast<std::uint64_t>(n);
    } else if (name == "--mib-each") {
      o->mib_each = static_cast<std::uint64_t>(n);
    } else if (name == "--tunnels") {
      o->tunnels = static_cast<int>(n);
    } else if (name == "--runs") {
      o->runs = static_cast<int>(n);
    } else if (name == "--connections") {
      o->connections = static_cast<int>(n);
    } else {
      return false;
    }
    return true;
  });
}

void progress(const std::string& what) {
  std::fprintf(stderr, "bench_corridor: %s\n", what.c_str());
}

// One path under measurement: direct TCP, or a proxy that started and carried its first tunnel.
struct Path {
  PathResult result;
  Route route;
  Proxy proxy;  // pid -1 for direct TCP
};

// Starts a proxy and takes its RSS at start, warm, and with kHeldTunnels open. The timed
// measurements come later, interleaved with every other path's.
Path prepare_proxy(Proxy proxy) {
  Path path;
  path.result.name = proxy.name;
  path.proxy = proxy;
  if (!proxy.up()) {
    path.result.error = proxy.error;
    return path;
  }
  progress(proxy.name + ": listening on 127.0.0.1:" + std::to_string(proxy.port));
  usleep(200000);
  path.result.rss_start = vm_rss_kib(proxy.pid);
  path.route = Route{proxy.name, true, proxy.port, proxy.target, ""};
  std::string error;
  if (!ping_route(path.route, &error)) {
    path.result.error = "first tunnel: " + error;
    return path;
  }
  usleep(200000);
  path.result.rss_warm = vm_rss_kib(proxy.pid);
  std::vector<int> held = hold_tunnels(path.route, kHeldTunnels, &error);
  if (held.empty()) {
    progress(proxy.name + ": " + std::to_string(kHeldTunnels) + " tunnels: " + error);
  } else {
    usleep(200000);
    path.result.rss_held = vm_rss_kib(proxy.pid);
    for (int fd : held) close(fd);
    usleep(300000);  // let the proxy see the closes before the timed rounds
  }
  return path;
}

// One throughput transfer per live path, path after path: drift of a shared machine spreads over
// every row instead of landing on the one measured while it happened.
void transfer_round(std::vector<Path*>& live, Series PathResult::*series, int tunnels, std::uint64_t bytes, Flow flow) {
  for (Path* p : live) {
    Series& s = p->result.*series;
    if (!s.error.empty()) continue;
    const Transfer t = transfer(p->route, tunnels, bytes, flow);
    if (t.ok) {
      s.runs.push_back(t.mib_per_s);
    } else {
      s.error = t.error;
    }
  }
}

// Every timed measurement, interleaved round by round over the live paths: CONNECT→200 in rounds
// of kLatencyRound connections per path (direct connect + PING as one more "path"), then each
// throughput run once per path per round.
constexpr int kLatencyRound = 50;
void measure_interleaved(std::vector<Path*>& live, const Route& direct, const Options& o, RunInfo* info) {
  std::vector<std::vector<Latency>> rounds(live.size());
  std::vector<Latency> rtt_rounds;
  for (Path* p : live) (void)connect_latency(p->route, 50, false);  // warm-up, not counted
  progress("CONNECT→200: " + std::to_string(o.connections) + " per path, interleaved in rounds of " +
           std::to_string(kLatencyRound));
  for (int done = 0; done < o.connections; done += kLatencyRound) {
    const int count = std::min(kLatencyRound, o.connections - done);
    for (std::size_t i = 0; i < live.size(); ++i) rounds[i].push_back(connect_latency(live[i]->route, count, false));
    rtt_rounds.push_back(connect_latency(direct, count, true));
  }
  for (std::size_t i = 0; i < live.size(); ++i) live[i]->result.latency = combine(rounds[i]);
  info->direct_rtt = combine(rtt_rounds);
  for (int run = 0; run < o.runs; ++run) {
    progress("throughput round " + std::to_string(run + 1) + " of " + std::to_string(o.runs) +
             ": one tunnel down/up, " + std::to_string(o.tunnels) + " tunnels down/up, every path");
    transfer_round(live, &PathResult::down1, 1, o.mib_one << 20, Flow::kDownload);
    transfer_round(live, &PathResult::up1, 1, o.mib_one << 20, Flow::kUpload);
    transfer_round(live, &PathResult::down_many, o.tunnels, o.mib_each << 20, Flow::kDownload);
    transfer_round(live, &PathResult::up_many, o.tunnels, o.mib_each << 20, Flow::kUpload);
  }
}

// The gatekeeper's CONNECT→200 while a space spins every core: with the space's CPU limits (the
// row that matters: the corridor keeps its share), then with none (context: what the limits buy).
void measure_spun(const Path& gatekeeper, const Options& o, RunInfo* info) {
  for (const bool limits : {true, false}) {
    RunInfo::Spun spun;
    SpinLoad load;
    if (!load.start(gatekeeper.proxy.pid, limits, &spun.error)) {
      spun.description = limits ? "the space's limits" : "no limits";
      info->spun.push_back(spun);
      continue;
    }
    spun.description = load.description();
    progress("CONNECT→200 while " + spun.description);
    usleep(500000);  // the spinners reach their quota before the first sample
    std::vector<Latency> rounds;
    for (int done = 0; done < o.connections; done += kLatencyRound) {
      rounds.push_back(connect_latency(gatekeeper.route, std::min(kLatencyRound, o.connections - done), false));
    }
    load.stop();
    spun.latency = combine(rounds);
    info->spun.push_back(spun);
  }
}

int run_benchmark(const Options& o) {
  RunInfo info;
  {
    info.machine = describe_machine();
    info.note = "Client, proxy and upstream are separate processes sharing these CPUs; the upstream is "
                "across a veth in a network namespace.";
    info.bytes_one = o.mib_one << 20;
    info.bytes_each = o.mib_each << 20;
    info.tunnels = o.tunnels;
    info.runs = o.runs;
    info.connections = o.connections;
  }

  TestNetwork net;
  std::string error;
  if (!net.create(&error)) {
    std::fprintf(stderr, "bench_corridor: %s\n", error.c_str());
    return 2;
  }
  const std::string ip = net.inside_ip();

  const pid_t dnsmasq = start_dnsmasq(net, kUpstreamName, kUpstreamDomain, &error);
  if (dnsmasq < 0) {
    std::fprintf(stderr, "bench_corridor: %s\n", error.c_str());
    return 2;
  }
  info.dns_p50_ms = dns_median_ms(ip, kUpstreamName);

  const pid_t upstream =
      fork_until_ready(net.fd(), [&](int ready_fd) { return run_upstream(ip, kUpstreamPort, ready_fd); }, 5000);
  if (upstream < 0) {
    std::fprintf(stderr, "bench_corridor: the upstream did not start in %s\n", net.name().c_str());
    stop(dnsmasq, 2000);
    return 2;
  }

  const WorkDir workdir;
  if (workdir.path().empty()) {
    std::fprintf(stderr, "bench_corridor: mkdtemp /tmp/gk-bench-XXXXXX failed\n");
    stop(upstream, 2000);
    stop(dnsmasq, 2000);
    return 2;
  }

  std::vector<Path> paths;
  Path direct;
  direct.result.name = "direct TCP";
  direct.route = Route{direct.result.name, false, 0, "", ip};
  paths.push_back(direct);
  const ProxySetup setup{workdir.path(), ip, ip, kUpstreamName, o.gatekeeper_binary()};
  // Every proxy runs for the whole measurement (each idle while another is measured).
  if (o.wants("gatekeeper")) paths.push_back(prepare_proxy(start_gatekeeper(setup)));
  if (o.wants("squid")) paths.push_back(prepare_proxy(start_squid(setup)));
  if (o.wants("tinyproxy")) paths.push_back(prepare_proxy(start_tinyproxy(setup)));
  std::vector<Path*> live;
  for (Path& p : paths) {
    if (p.result.error.empty()) live.push_back(&p);
  }
  measure_interleaved(live, paths.front().route, o, &info);
  for (Path* p : live) {
    if (p->proxy.pid > 0 && p->proxy.name == "gatekeeper") measure_spun(*p, o, &info);
  }
  std::vector<PathResult> results;
  for (Path& p : paths) {
    if (p.proxy.pid > 0) {
      if (p.result.error.empty()) {
        usleep(200000);
        p.result.rss_end = vm_rss_kib(p.proxy.pid);
      }
      stop_proxy(p.proxy);
    }
    results.push_back(p.result);
  }
  stop(upstream, 2000);
  stop(dnsmasq, 2000);
  print_report(info, results);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  Options options;
  const bool parsed = parse(argc, argv, &options);
  return bench_main("bench_corridor", parsed, kUsage, [&] { return run_benchmark(options); });
}
