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

Series measure(const Route& route, int tunnels, std::uint64_t bytes, Flow flow, int runs) {
  Series s;
  for (int i = 0; i < runs; ++i) {
    const Transfer t = transfer(route, tunnels, bytes, flow);
    if (!t.ok) {
      s.error = t.error;
      return s;
    }
    s.runs.push_back(t.mib_per_s);
  }
  return s;
}

void measure_flows(const Route& route, const Options& o, PathResult* r) {
  progress(r->name + ": one tunnel down/up, " + std::to_string(o.tunnels) + " tunnels down");
  r->down1 = measure(route, 1, o.mib_one << 20, Flow::kDownload, o.runs);
  r->up1 = measure(route, 1, o.mib_one << 20, Flow::kUpload, o.runs);
  r->down_many = measure(route, o.tunnels, o.mib_each << 20, Flow::kDownload, o.runs);
}

PathResult measure_proxy(Proxy proxy, const Options& o) {
  PathResult r;
  r.name = proxy.name;
  if (!proxy.up()) {
    r.error = proxy.error;
    stop_proxy(proxy);
    return r;
  }
  progress(proxy.name + ": listening on 127.0.0.1:" + std::to_string(proxy.port));
  usleep(200000);
  r.rss_start = vm_rss_kib(proxy.pid);
  const Route route{proxy.name, true, proxy.port, proxy.target, ""};
  std::string error;
  if (!ping_route(route, &error)) {
    r.error = "first tunnel: " + error;
    stop_proxy(proxy);
    return r;
  }
  usleep(200000);
  r.rss_warm = vm_rss_kib(proxy.pid);
  std::vector<int> held = hold_tunnels(route, kHeldTunnels, &error);
  if (held.empty()) {
    progress(proxy.name + ": " + std::to_string(kHeldTunnels) + " tunnels: " + error);
  } else {
    usleep(200000);
    r.rss_held = vm_rss_kib(proxy.pid);
    for (int fd : held) close(fd);
    usleep(300000);  // let the proxy see the 64 closes before the latency run
  }
  progress(proxy.name + ": CONNECT→200 x" + std::to_string(o.connections));
  (void)connect_latency(route, 50, false);  // warm-up, not counted
  r.latency = connect_latency(route, o.connections, false);
  measure_flows(route, o, &r);
  usleep(200000);
  r.rss_end = vm_rss_kib(proxy.pid);
  stop_proxy(proxy);
  return r;
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

  std::vector<PathResult> results;
  {
    PathResult direct;
    direct.name = "direct TCP";
    const Route route{direct.name, false, 0, "", ip};
    progress("direct: connect x" + std::to_string(o.connections));
    (void)connect_latency(route, 50, false);
    direct.latency = connect_latency(route, o.connections, false);
    info.direct_rtt = connect_latency(route, o.connections, true);
    measure_flows(route, o, &direct);
    results.push_back(direct);
  }
  const ProxySetup setup{workdir.path(), ip, ip, kUpstreamName, o.gatekeeper_binary()};
  if (o.wants("gatekeeper")) results.push_back(measure_proxy(start_gatekeeper(setup), o));
  if (o.wants("squid")) results.push_back(measure_proxy(start_squid(setup), o));
  if (o.wants("tinyproxy")) results.push_back(measure_proxy(start_tinyproxy(setup), o));

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
