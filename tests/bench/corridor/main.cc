// bench_corridor: direct TCP vs gatekeeper-test vs squid vs tinyproxy, in one run, on loopback and
// one network namespace of our own (tests/bench/README.md). Prints a table; never a timed
// assertion. Exit 0 once the table is printed, 2 when the environment cannot run it.
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <string>
#include <system_error>
#include <vector>

#include "tests/bench/corridor/client.h"
#include "tests/bench/corridor/dns_probe.h"
#include "tests/bench/corridor/netns.h"
#include "tests/bench/corridor/process.h"
#include "tests/bench/corridor/proxies.h"
#include "tests/bench/corridor/report.h"
#include "tests/bench/corridor/upstream.h"

namespace {

using namespace bench;

constexpr const char* kUpstreamName = "upstream.bench.test";
// --local + --host-record: AAAA gets NOERROR with no answer, as from a real zone. (An --address=
// name without --local answers AAAA with REFUSED, which c-ares retries: one more DNS round trip per
// CONNECT that no real resolver would cost.)
constexpr const char* kUpstreamDomain = "bench.test";
constexpr int kDnsSamples = 200;

struct Options {
  std::uint64_t mib_one = 1024;  // one tunnel, each direction
  std::uint64_t mib_each = 64;   // per tunnel in the many-tunnel run
  int tunnels = 32;
  int runs = 3;
  int connections = 1000;
  std::string gatekeeper;
  std::vector<std::string> only;  // proxies to measure; empty: all three
  [[nodiscard]] bool wants(const std::string& name) const {
    return only.empty() || std::find(only.begin(), only.end(), name) != only.end();
  }
};

void usage() {
  std::fprintf(stderr,
               "usage: bench_corridor [--mib N] [--mib-each N] [--tunnels N] [--runs N] "
               "[--connections N] [--gatekeeper PATH] [--only gatekeeper|squid|tinyproxy]...\n"
               "  defaults: 1024 MiB through one tunnel, 32 tunnels x 64 MiB, 3 runs, 1000 connections,\n"
               "  gatekeeper-test next to this binary. Needs root (network namespace, veth).\n");
}

bool parse(int argc, char** argv, Options* o) {
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (i + 1 >= argc) return false;
    const char* value = argv[++i];
    const long n = std::strtol(value, nullptr, 10);
    if (arg == "--gatekeeper") {
      o->gatekeeper = value;
      continue;
    }
    if (arg == "--only") {
      o->only.emplace_back(value);
      continue;
    }
    if (n <= 0) return false;
    if (arg == "--mib") {
      o->mib_one = static_cast<std::uint64_t>(n);
    } else if (arg == "--mib-each") {
      o->mib_each = static_cast<std::uint64_t>(n);
    } else if (arg == "--tunnels") {
      o->tunnels = static_cast<int>(n);
    } else if (arg == "--runs") {
      o->runs = static_cast<int>(n);
    } else if (arg == "--connections") {
      o->connections = static_cast<int>(n);
    } else {
      return false;
    }
  }
  return true;
}

std::string self_dir() {
  std::error_code ec;
  return std::filesystem::read_symlink("/proc/self/exe", ec).parent_path().string();
}

std::string cpu_model() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("model name", 0) == 0) return line.substr(line.find(':') + 2);
  }
  return "unknown CPU";
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
    char date[64];
    const std::time_t now = std::time(nullptr);
    std::strftime(date, sizeof date, "%Y-%m-%d %H:%M UTC", std::gmtime(&now));
    info.date = date;
    utsname u{};
    uname(&u);
    info.kernel = u.release;
    info.cpu = cpu_model();
    info.nproc = sysconf(_SC_NPROCESSORS_ONLN);
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

  SpawnOptions in_ns;
  in_ns.netns_fd = net.fd();
  const Child dnsmasq = spawn({"/usr/sbin/dnsmasq", "--no-daemon", "--conf-file=/dev/null", "--no-resolv",
                               "--no-hosts", "--listen-address=" + ip, "--bind-interfaces", "--pid-file=",
                               "--user=root", std::string("--local=/") + kUpstreamDomain + "/",
                               std::string("--host-record=") + kUpstreamName + "," + ip},
                              in_ns);
  bool dns_up = false;
  for (int i = 0; i < 100 && !dns_up; ++i) {
    dns_up = dns_query_ms(ip, kUpstreamName, 50).has_value();
  }
  if (dnsmasq.pid < 0 || !dns_up) {
    std::fprintf(stderr, "bench_corridor: dnsmasq did not answer on %s:53\n", ip.c_str());
    stop(dnsmasq.pid, 2000);
    return 2;
  }
  std::vector<double> dns;
  for (int i = 0; i < kDnsSamples; ++i) {
    if (auto ms = dns_query_ms(ip, kUpstreamName, 1000)) dns.push_back(*ms);
  }
  std::sort(dns.begin(), dns.end());
  if (!dns.empty()) info.dns_p50_ms = dns[dns.size() / 2];

  int ready[2];
  if (pipe2(ready, O_CLOEXEC) != 0) return 2;
  const pid_t upstream = fork_run(net.fd(), [&] {
    close(ready[0]);
    return run_upstream(ip, kUpstreamPort, ready[1]);
  });
  close(ready[1]);
  const bool upstream_up = read_line(ready[0], 5000) == "ready";
  close(ready[0]);
  if (!upstream_up) {
    std::fprintf(stderr, "bench_corridor: the upstream did not start in %s\n", net.name().c_str());
    stop(upstream, 2000);
    stop(dnsmasq.pid, 2000);
    return 2;
  }

  char workdir_template[] = "/tmp/gk-bench-XXXXXX";
  const char* workdir = mkdtemp(workdir_template);
  if (workdir == nullptr) return 2;
  chmod(workdir, 0755);

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
  const ProxySetup setup{workdir, ip, ip, kUpstreamName,
                         o.gatekeeper.empty() ? self_dir() + "/gatekeeper-test" : o.gatekeeper};
  if (o.wants("gatekeeper")) results.push_back(measure_proxy(start_gatekeeper(setup), o));
  if (o.wants("squid")) results.push_back(measure_proxy(start_squid(setup), o));
  if (o.wants("tinyproxy")) results.push_back(measure_proxy(start_tinyproxy(setup), o));

  stop(upstream, 2000);
  stop(dnsmasq.pid, 2000);
  std::error_code ec;
  std::filesystem::remove_all(workdir, ec);
  print_report(info, results);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  Options options;
  if (!parse(argc, argv, &options)) {
    usage();
    return 2;
  }
  if (geteuid() != 0) {
    std::fprintf(stderr, "bench_corridor: needs root (ip netns, veth); nothing was started\n");
    return 2;
  }
  install_cleanup_handlers();
  return run_benchmark(options);
}
