// bench_window: requests through the window (gatekeeper-test serve) vs straight to the same
// upstream, plain HTTP and TLS, with 1 and 32 keep-alive clients, and the gatekeeper's RSS at 64
// client connections; on loopback and one network namespace of our own (tests/bench/README.md).
// Prints a table; never a timed assertion. Exit 0 once the table is printed, 2 when the
// environment cannot run it.
#include <openssl/rand.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "tests/bench/common/dns.h"
#include "tests/bench/common/gatekeeper.h"
#include "tests/bench/common/netns.h"
#include "tests/bench/common/process.h"
#include "tests/bench/common/run.h"
#include "tests/bench/window/client.h"
#include "tests/bench/window/nginx.h"
#include "tests/bench/window/report.h"
#include "tests/bench/window/tls.h"
#include "tests/bench/window/upstream.h"

namespace {

using namespace bench;

constexpr const char* kUpstreamName = "upstream.bench.test";
constexpr const char* kUpstreamDomain = "bench.test";
constexpr int kMaxClients = 1000;

struct Options : CommonOptions {  // --only plain|tls
  int requests = 20000;           // timed, per row
  int clients = 32;               // the many-client rows
  double seconds = 20;            // at most, per row
};

constexpr const char* kUsage =
    "usage: bench_window [--requests N] [--clients N] [--seconds N] [--gatekeeper PATH] [--only "
    "plain|tls]...\n"
    "  defaults: 20000 timed requests per row, 32 clients in the many-client rows, at most 20 s\n"
    "  per row, gatekeeper-test next to this binary. Needs root (network namespace, veth).\n";

bool parse(int argc, char** argv, Options* o) {
  return parse_options(argc, argv, {"plain", "tls"}, o, [o](const std::string& name, long n) {
    if (name == "--requests") {
      o->requests = static_cast<int>(n);
    } else if (name == "--clients" && n <= kMaxClients) {
      o->clients = static_cast<int>(n);
    } else if (name == "--seconds") {
      o->seconds = static_cast<double>(n);
    } else {
      return false;
    }
    return true;
  });
}

void progress(const std::string& what) { std::fprintf(stderr, "bench_window: %s\n", what.c_str()); }

std::string random_hex(std::size_t bytes) {
  std::vector<std::uint8_t> raw(bytes);
  if (RAND_bytes(raw.data(), raw.size()) != 1) {
    std::abort();  // BoringSSL's RNG does not fail on Linux
  }
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  for (std::uint8_t b : raw) {
    out.push_back(kHex[b >> 4]);
    out.push_back(kHex[b & 0xf]);
  }
  return out;
}

// The request a space's SDK would send: the window's path, a placeholder key the window removes.
std::string window_request(const std::string& key, const std::string& grant) {
  return "GET /k/" + key + "/model/" + grant +
         "/models HTTP/1.1\r\nHost: gatekeeper:8080\r\n"
         "Authorization: Bearer placeholder\r\nAccept: */*\r\n\r\n";
}

// The same request straight to the upstream, signed as the window would sign it.
std::string direct_request(const std::string& secret) {
  return std::string("GET /v1/models HTTP/1.1\r\nHost: ") + kUpstreamName +
         "\r\nAuthorization: Bearer " + secret + "\r\nAccept: */*\r\n\r\n";
}

struct Paths {
  Target direct_plain, direct_tls, window_plain, window_tls;
  bool nginx = false;  // nginx started: its rows are measured
  Target nginx_plain, nginx_tls;
};

int warmup_for(int clients, int requests) { return std::min(requests, std::max(100, 4 * clients)); }

// Rounds each row's requests are split into (measure_rows).
constexpr int kRounds = 3;

// What every row is measured with.
struct Bench {
  const Options& o;
  pid_t gatekeeper;
  pid_t nginx_worker;  // -1: none found (its rows then have no CPU figures)
  UpstreamCounters* counters;
};

// One row of the table: a path at a number of clients.
struct RowSpec {
  Via via;
  std::string scheme;
  Target target;
  int clients;
};

// One round of one row: requests timed requests (after an untimed warm-up on the same connections).
LoadResult measure_round(const Bench& b, const RowSpec& spec, int requests) {
  Load load;
  load.clients = spec.clients;
  load.requests = requests;
  load.warmup = warmup_for(spec.clients, requests);
  load.max_seconds = b.o.seconds / kRounds;
  load.rss_pid = spec.via == Via::kWindow ? b.gatekeeper : -1;
  switch (spec.via) {
    case Via::kDirect:
      break;
    case Via::kWindow:
      load.cpu_pid = b.gatekeeper;
      break;
    case Via::kNginx:
      load.cpu_pid = b.nginx_worker;
      break;
  }
  load.upstream_accepts = spec.scheme == "TLS" ? &b.counters->tls : &b.counters->plain;
  LoadResult result = run_load(spec.target, load);
  if (!result.error.empty()) progress("  " + result.error);
  usleep(200000);  // the window sees the last closes before the next row
  return result;
}

// Every row's requests are split into kRounds rounds, and each round measures every row once:
// drift of a shared machine (another build starting, a CPU throttled) spreads over every row
// instead of landing on the one measured while it happened.
std::vector<Row> measure_rows(const Bench& b, const Paths& p) {
  const int many = b.o.clients;
  std::vector<RowSpec> specs;
  if (b.o.wants("plain")) {
    Target fresh = p.window_plain;
    fresh.close_each = true;  // the reference's "new TCP each" measure
    specs.push_back({Via::kDirect, "plain", p.direct_plain, 1});
    specs.push_back({Via::kWindow, "plain", p.window_plain, 1});
    if (p.nginx) specs.push_back({Via::kNginx, "plain", p.nginx_plain, 1});
    specs.push_back({Via::kWindow, "plain", fresh, 1});
    specs.push_back({Via::kDirect, "plain", p.direct_plain, many});
    specs.push_back({Via::kWindow, "plain", p.window_plain, many});
    if (p.nginx) specs.push_back({Via::kNginx, "plain", p.nginx_plain, many});
  }
  if (b.o.wants("tls")) {
    specs.push_back({Via::kDirect, "TLS", p.direct_tls, 1});
    specs.push_back({Via::kWindow, "TLS", p.window_tls, 1});
    if (p.nginx) specs.push_back({Via::kNginx, "TLS", p.nginx_tls, 1});
    specs.push_back({Via::kDirect, "TLS", p.direct_tls, many});
    specs.push_back({Via::kWindow, "TLS", p.window_tls, many});
    if (p.nginx) specs.push_back({Via::kNginx, "TLS", p.nginx_tls, many});
  }
  std::vector<std::vector<LoadResult>> rounds(specs.size());
  for (int round = 0; round < kRounds; ++round) {
    // The last round takes what the division leaves.
    const int share = b.o.requests / kRounds + (round == kRounds - 1 ? b.o.requests % kRounds : 0);
    progress("round " + std::to_string(round + 1) + " of " + std::to_string(kRounds) + ": " +
             std::to_string(share) + " requests per row, every row");
    for (std::size_t i = 0; i < specs.size(); ++i) {
      rounds[i].push_back(measure_round(b, specs[i], share));
    }
  }
  std::vector<Row> rows;
  for (std::size_t i = 0; i < specs.size(); ++i) {
    Row row;
    row.scheme = specs[i].scheme;
    row.via = specs[i].via;
    row.new_tcp_each = specs[i].target.close_each;
    row.clients = specs[i].clients;
    row.load = combine_loads(rounds[i]);
    rows.push_back(row);
  }
  return rows;
}

// Every child the run started, stopped in reverse order.
struct Started {
  pid_t dnsmasq = -1, upstream = -1, gatekeeper = -1, nginx = -1;
  ~Started() {
    stop(nginx, 5000);
    stop(gatekeeper, 5000);
    stop(upstream, 2000);
    stop(dnsmasq, 2000);
  }
};

int fail_setup(const std::string& what) {
  std::fprintf(stderr, "bench_window: %s\n", what.c_str());
  return 2;
}

int run_benchmark(const Options& o) {
  WindowRunInfo info;
  info.machine = describe_machine();
  info.many_clients = o.clients;
  info.warmup_one = warmup_for(1, o.requests / kRounds);
  info.warmup_many = warmup_for(o.clients, o.requests / kRounds);
  info.rounds = kRounds;
  info.max_seconds = o.seconds;

  TestNetwork net;
  std::string error;
  if (!net.create(&error)) return fail_setup(error);
  const std::string ip = net.inside_ip();
  const WorkDir workdir;  // ca.pem, the gatekeeper's stderr; goes after the children
  if (workdir.path().empty()) return fail_setup("mkdtemp /tmp/gk-bench-XXXXXX failed");
  Started started;
  started.dnsmasq = start_dnsmasq(net, kUpstreamName, kUpstreamDomain, &error);
  if (started.dnsmasq < 0) return fail_setup(error);
  info.dns_p50_ms = dns_median_ms(ip, kUpstreamName);

  const gk_it::TestPki pki = gk_it::make_test_pki(workdir.path(), {kUpstreamName});
  if (!pki.ok) return fail_setup("making the test CA in " + workdir.path() + " failed");
  const bssl::UniquePtr<SSL_CTX> upstream_tls = upstream_tls_context(pki);
  const bssl::UniquePtr<SSL_CTX> client_tls = client_tls_context(pki.ca_file);
  if (!upstream_tls || !client_tls) {
    return fail_setup("BoringSSL refused the test certificate or CA");
  }

  const std::string secret = "bench-secret-" + random_hex(16);
  UpstreamCounters* counters = shared_upstream_counters();
  if (counters == nullptr) return fail_setup("mmap of the upstream's counters failed");
  started.upstream = fork_until_ready(
      net.fd(),
      [&](int ready_fd) {
        return run_http_upstream(ip, upstream_tls.get(), secret, counters, ready_fd);
      },
      5000);
  if (started.upstream < 0) return fail_setup("the upstream did not start in " + net.name());

  const GatekeeperChild g =
      start_gatekeeper_child(o.gatekeeper_binary(), {"--dns-server", ip, "--ca-file", pki.ca_file},
                             workdir.path() + "/gatekeeper.err");
  started.gatekeeper = g.pid;
  if (!g.error.empty()) return fail_setup(g.error);
  const std::string key = random_hex(32);
  const std::string header = R"(","header":"authorization","secret":")" + secret + R"("})";
  // A secret over plain http goes only to an address literal marked unsafe_private_upstream.
  const std::string plain_header =
      R"(","unsafe_private_upstream":true,"header":"authorization","secret":")" + secret + R"("})";
  const std::vector<std::pair<std::string, std::string>> control = {
      {"/window-key", R"({"key":")" + key + R"("})"},
      {"/grants", std::string(R"({"id":"plain","upstream":"http://)") + ip + "/v1/" + plain_header},
      {"/grants",
       std::string(R"({"id":"tls","upstream":"https://)") + kUpstreamName + "/v1/" + header},
  };
  for (const auto& [path, body] : control) {
    const int status = control_post(g.control, path, body);
    if (status != 200) return fail_setup("POST " + path + " answered " + std::to_string(status));
  }
  progress("gatekeeper: window on 127.0.0.1:" + std::to_string(g.window) + ", upstream " + ip +
           ":" + std::to_string(kPlainPort) + " and :" + std::to_string(kTlsPort));

  Paths paths;
  paths.direct_plain = Target{ip, kPlainPort, nullptr, "", direct_request(secret), false};
  paths.direct_tls =
      Target{ip, kTlsPort, client_tls.get(), kUpstreamName, direct_request(secret), false};
  paths.window_plain =
      Target{"127.0.0.1", g.window, nullptr, "", window_request(key, "plain"), false};
  paths.window_tls = Target{"127.0.0.1", g.window, nullptr, "", window_request(key, "tls"), false};

  const NginxChild nginx =
      start_nginx(NginxSetup{workdir.path(), ip, kUpstreamName, pki.ca_file, key, secret});
  started.nginx = nginx.pid;
  if (nginx.error.empty()) {
    paths.nginx = true;
    paths.nginx_plain =
        Target{"127.0.0.1", nginx.port, nullptr, "", nginx_request(key, "plain"), false};
    paths.nginx_tls =
        Target{"127.0.0.1", nginx.port, nullptr, "", nginx_request(key, "tls"), false};
    info.nginx_version = nginx.version;
    progress("nginx: on 127.0.0.1:" + std::to_string(nginx.port) + " (" + nginx.version + ")");
  } else {
    info.nginx_error = nginx.error;
    progress("nginx: " + nginx.error + "; its rows are left out");
  }

  WindowRss rss;
  usleep(200000);
  rss.start = vm_rss_kib(g.pid);
  for (const Target* t : {&paths.window_plain, &paths.window_tls}) {
    const LoadResult one = run_load(*t, Load{1, 1, 0, o.seconds, -1, nullptr});
    if (!one.ok()) {
      return fail_setup("the first window request failed: " + one.error + one.first_failure);
    }
  }
  usleep(200000);
  rss.warm = vm_rss_kib(g.pid);
  progress("gatekeeper: " + std::to_string(kHeldConnections) + " client connections");
  Held held = hold_connections(paths.window_plain, kHeldConnections);
  rss.held_error = held.error;
  rss.kept_alive = held.kept_alive;
  if (held.error.empty()) {
    usleep(200000);
    rss.held = vm_rss_kib(g.pid);
  }
  for (int fd : held.fds) close(fd);
  usleep(300000);

  // nginx's one worker is the master's only child once it serves.
  pid_t nginx_worker = -1;
  for (int tries = 0; paths.nginx && nginx_worker < 0 && tries < 50; ++tries) {
    nginx_worker = only_child(nginx.pid);
    if (nginx_worker < 0) usleep(20000);
  }
  const std::vector<Row> rows = measure_rows(Bench{o, g.pid, nginx_worker, counters}, paths);
  usleep(200000);
  rss.end = vm_rss_kib(g.pid);
  print_window_report(info, rows, rss);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  Options options;
  const bool parsed = parse(argc, argv, &options);
  return bench_main("bench_window", parsed, kUsage, [&] { return run_benchmark(options); });
}
