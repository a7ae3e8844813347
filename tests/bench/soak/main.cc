// bench_soak: one gatekeeper (gatekeeper-test serve) under a mixed, bounded load for --minutes N
// (default 20), sampled every second: VmRSS, open descriptors, open sockets and tunnels (its
// metrics), journal size and `dropped`. Prints a table (one row a minute) and a verdict: no crash,
// no failed sha256, no decision different from the policy in force (client side and every journal
// record), RSS and descriptors flat after warm-up (slopes stated), journal `dropped` consistent
// with what was decided. tests/bench/README.md has the last run's table. Exit 0 when the verdict
// passes, 1 when it fails, 2 when the environment cannot run it.
#include <dirent.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <limits>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "policy/number.h"
#include "tests/bench/common/dns.h"
#include "tests/bench/common/gatekeeper.h"
#include "tests/bench/common/netns.h"
#include "tests/bench/common/process.h"
#include "tests/bench/common/report.h"
#include "tests/bench/common/run.h"
#include "tests/bench/soak/load.h"
#include "tests/bench/window/tls.h"
#include "tests/bench/window/upstream.h"

namespace {

using namespace bench;
using nlohmann::json;
using soak::Counters;

struct Options : CommonOptions {
  long minutes = 20;
};

constexpr const char* kUsage =
    "usage: bench_soak [--minutes N] [--gatekeeper PATH]\n"
    "  default 20 minutes, gatekeeper-test next to this binary. Needs root (network namespace, "
    "veth).\n";

constexpr double kWarmupMinutes = 2;
constexpr double kMaxRssSlopeKibPerMin = 64;
constexpr double kMaxFdSlopePerMin = 0.5;

void progress(const std::string& what) { std::fprintf(stderr, "bench_soak: %s\n", what.c_str()); }

int fail_setup(const std::string& what) {
  progress(what);
  return 2;
}

long open_fds(pid_t pid) {
  DIR* d = opendir(("/proc/" + std::to_string(pid) + "/fd").c_str());
  if (d == nullptr) return -1;
  long n = 0;
  while (const dirent* e = readdir(d)) n += e->d_name[0] != '.';
  closedir(d);
  return n;
}

// The sum of every sample of `name` (any labels) in a Prometheus text.
double metric_sum(const std::string& text, const std::string& name) {
  double sum = 0;
  std::size_t at = 0;
  while ((at = text.find(name, at)) != std::string::npos) {
    const bool line_start = at == 0 || text[at - 1] == '\n';
    const std::size_t end = text.find('\n', at);
    const std::string line =
        text.substr(at, end == std::string::npos ? std::string::npos : end - at);
    at += name.size();
    if (!line_start ||
        (line.size() > name.size() && line[name.size()] != ' ' && line[name.size()] != '{')) {
      continue;
    }
    const std::optional<double> v = policy::parse_number<double>(line.substr(line.rfind(' ') + 1));
    if (!v) return std::numeric_limits<double>::quiet_NaN();  // printed as nan: the run is unread
    sum += *v;
  }
  return sum;
}

struct Sample {
  double t = 0;  // minutes since the load started
  long rss = -1, fds = -1;
  double sockets = 0, tunnels = 0, decisions = 0;
  long records = 0, dropped = 0, ring_count = 0;
};

// A journal record the policy in force could not have produced (every policy the control worker
// sets allows the upstream's name on 443 and the two grants, and nothing else a client asks for).
bool record_is_wrong(const json& r, const std::string& ip) {
  const std::string listener = r.value("listener", "");
  const std::string host = r.value("host", "");
  const std::string decision = r.value("decision", "");
  const int port = r.value("port", 0);
  const bool allow = decision == "allow";
  const bool refused = decision.rfind("deny", 0) == 0;
  if (listener == "corridor") {
    const bool allowed_target = host == soak::kUpstreamName && port == 443;
    return allowed_target ? refused : allow;
  }
  if (listener == "window") {
    const bool grant_upstream =
        (host == soak::kUpstreamName && port == soak::kWindowTlsPort) || (host == ip && port == 80);
    return grant_upstream ? refused : allow;
  }
  return allow;
}

// Least-squares slope of y over t (per minute) for samples after the warm-up.
double slope(const std::vector<Sample>& s, long Sample::*field) {
  double n = 0, st = 0, sy = 0, stt = 0, sty = 0;
  for (const Sample& x : s) {
    if (x.t < kWarmupMinutes || x.*field < 0) continue;
    const double y = static_cast<double>(x.*field);
    n += 1;
    st += x.t;
    sy += y;
    stt += x.t * x.t;
    sty += x.t * y;
  }
  const double d = n * stt - st * st;
  return n < 2 || d == 0 ? 0 : (n * sty - st * sy) / d;
}

struct Started {
  pid_t dnsmasq = -1, echo = -1, http = -1, gatekeeper = -1;
  std::vector<pid_t> workers;
  ~Started() {
    for (pid_t w : workers) stop(w, 2000);
    stop(gatekeeper, 5000);
    stop(http, 2000);
    stop(echo, 2000);
    stop(dnsmasq, 2000);
  }
};

int run_soak(const Options& o) {
  const Machine machine = describe_machine();
  TestNetwork net;
  std::string error;
  if (!net.create(&error)) return fail_setup(error);
  const std::string ip = net.inside_ip();
  const WorkDir workdir;
  if (workdir.path().empty()) return fail_setup("mkdtemp /tmp/gk-bench-XXXXXX failed");
  Started started;
  started.dnsmasq = start_dnsmasq(net, soak::kUpstreamName, soak::kUpstreamDomain, &error);
  if (started.dnsmasq < 0) return fail_setup(error);
  const gk_it::TestPki pki = gk_it::make_test_pki(workdir.path(), {soak::kUpstreamName});
  if (!pki.ok) return fail_setup("making the test CA in " + workdir.path() + " failed");
  const bssl::UniquePtr<SSL_CTX> upstream_tls = upstream_tls_context(pki);
  const bssl::UniquePtr<SSL_CTX> client_tls = client_tls_context(pki.ca_file);
  if (!upstream_tls || !client_tls) {
    return fail_setup("BoringSSL refused the test certificate or CA");
  }
  const std::string secret = "soak-secret-0123456789";
  UpstreamCounters* upstream_counters = shared_upstream_counters();
  Counters* c = soak::shared_counters();
  if (upstream_counters == nullptr || c == nullptr) {
    return fail_setup("mmap of the shared counters failed");
  }
  started.echo = fork_until_ready(
      net.fd(), [&](int ready) { return soak::run_echo_upstream(ip, upstream_tls.get(), ready); },
      5000);
  started.http = fork_until_ready(
      net.fd(),
      [&](int ready) {
        return run_http_upstream(ip, upstream_tls.get(), secret, upstream_counters, ready,
                                 soak::kWindowTlsPort);
      },
      5000);
  if (started.echo < 0 || started.http < 0) {
    return fail_setup("an upstream did not start in " + net.name());
  }
  const GatekeeperChild g =
      start_gatekeeper_child(o.gatekeeper_binary(), {"--dns-server", ip, "--ca-file", pki.ca_file},
                             workdir.path() + "/gatekeeper.err");
  started.gatekeeper = g.pid;
  if (!g.error.empty()) return fail_setup(g.error);
  soak::Setup setup{ip, g.corridor, g.window, g.control, std::string(64, 'a'), client_tls.get(), 0};
  const std::string auth = R"(","header":"authorization","secret":")" + secret + R"("})";
  const std::vector<std::pair<std::string, std::string>> control = {
      {"/network",
       std::string(R"({"mode":"allowlist","domains":[")") + soak::kUpstreamName + R"("]})"},
      {"/window-key", R"({"key":")" + setup.key + R"("})"},
      {"/grants", R"({"id":"plain","upstream":"http://)" + ip +
                      R"(/v1/","unsafe_private_upstream":true)" + auth.substr(1)},
      {"/grants", std::string(R"({"id":"tls","upstream":"https://)") + soak::kUpstreamName +
                      ":8443/v1/" + auth}};
  for (const auto& [path, body] : control) {
    const int status = control_post(g.control, path, body);
    if (status != 200) {
      return fail_setup("POST " + path + " answered " + std::to_string(status) + ": " + body);
    }
  }
  const double start = soak::now_seconds();
  setup.deadline = start + static_cast<double>(o.minutes) * 60;
  progress("load for " + std::to_string(o.minutes) + " min against the gatekeeper (pid " +
           std::to_string(g.pid) + ")");
  for (unsigned k = 0; k < 2; ++k) {
    started.workers.push_back(
        fork_run(-1, [&, k] { return soak::tunnel_worker(setup, c, k + 1); }));
  }
  started.workers.push_back(fork_run(-1, [&] { return soak::refusal_worker(setup, c); }));
  started.workers.push_back(fork_run(-1, [&] { return soak::window_worker(setup, c); }));
  started.workers.push_back(fork_run(-1, [&] { return soak::slow_worker(setup, c); }));
  started.workers.push_back(fork_run(-1, [&] { return soak::control_worker(setup, c); }));
  started.workers.push_back(fork_run(-1, [&] { return soak::reader_worker(setup, c); }));

  std::vector<Sample> samples;
  std::set<std::string> wrong_records;
  bool crashed = false, dropped_went_back = false, journal_unreadable = false;
  std::string crash;
  long last_dropped = 0;
  while (soak::now_seconds() < setup.deadline + 2) {
    sleep(1);
    int status = 0;
    if (waitpid(g.pid, &status, WNOHANG) == g.pid) {
      crashed = true;
      crash = WIFSIGNALED(status) ? "killed by signal " + std::to_string(WTERMSIG(status))
                                  : "exited " + std::to_string(WEXITSTATUS(status));
      forget(g.pid);
      started.gatekeeper = -1;
      break;
    }
    Sample s;
    s.t = (soak::now_seconds() - start) / 60;
    s.rss = vm_rss_kib(g.pid);
    s.fds = open_fds(g.pid);
    // The journal first, the metrics after: decisions counted later can only be more.
    const soak::Answer j = soak::control_call(g.control, "GET", "/journal");
    const json doc = json::parse(j.body, nullptr, false);
    if (j.status != 200 || !doc.is_object() || !doc.contains("records") ||
        !doc["records"].is_array()) {
      journal_unreadable = true;
    } else {
      s.records = static_cast<long>(doc["records"].size());
      s.dropped = doc.value("dropped", 0L);
      for (const json& r : doc["records"]) {
        if (!r.is_object()) {
          journal_unreadable = true;
          continue;
        }
        s.ring_count += r.value("count", 1L);
        if (record_is_wrong(r, ip)) wrong_records.insert(r.dump());
      }
      if (s.dropped < last_dropped) dropped_went_back = true;
      last_dropped = s.dropped;
    }
    const soak::Answer m = soak::control_call(g.control, "GET", "/metrics");
    s.sockets = metric_sum(m.body, "gatekeeper_open_sockets");
    s.tunnels = metric_sum(m.body, "gatekeeper_open_tunnels");
    s.decisions = metric_sum(m.body, "gatekeeper_decisions_total");
    samples.push_back(s);
  }
  for (pid_t w : started.workers) stop(w, 10000);
  started.workers.clear();

  // The table: one row a minute (the sample closest to each whole minute) and the last one.
  print_machine(
      machine,
      "One gatekeeper-test, 7 client processes on loopback, upstreams in a network namespace.");
  std::printf(
      "\n| min | VmRSS KiB | fds | open sockets | open tunnels | journal records | dropped | "
      "decisions |\n");
  std::printf("| --- | --- | --- | --- | --- | --- | --- | --- |\n");
  double next = 0;
  for (std::size_t i = 0; i < samples.size(); ++i) {
    const Sample& s = samples[i];
    if (s.t + 1e-9 < next && i + 1 != samples.size()) continue;
    std::printf("| %.1f | %ld | %ld | %.0f | %.0f | %ld | %ld | %.0f |\n", s.t, s.rss, s.fds,
                s.sockets, s.tunnels, s.records, s.dropped, s.decisions);
    next = static_cast<double>(static_cast<long>(s.t) + 1);
  }
  const double rss_slope = slope(samples, &Sample::rss), fd_slope = slope(samples, &Sample::fds);
  const Sample last = samples.empty() ? Sample{} : samples.back();
  const std::uint64_t wrong =
      c->allowed_refused + c->refused_allowed + c->window_refused + wrong_records.size();
  const bool dropped_ok = !dropped_went_back && static_cast<double>(last.dropped) +
                                                        static_cast<double>(last.ring_count) <=
                                                    last.decisions + 1e-9;
  std::printf("\n| load (whole run) | count |\n| --- | --- |\n");
  std::printf(
      "| tunnels opened / transfers checked by sha256 / MiB echoed | %llu / %llu / %.0f |\n",
      static_cast<unsigned long long>(c->tunnels.load()),
      static_cast<unsigned long long>(c->transfers.load()),
      static_cast<double>(c->transfer_bytes.load()) / (1 << 20));
  std::printf("| sha256 mismatches | %llu |\n",
              static_cast<unsigned long long>(c->sha_failures.load()));
  std::printf("| tunnel I/O errors (no answer, deadline) | %llu |\n",
              static_cast<unsigned long long>(c->tunnel_errors.load()));
  std::printf("| refusals as the policy says / refused requests answered 200 | %llu / %llu |\n",
              static_cast<unsigned long long>(c->refusals.load()),
              static_cast<unsigned long long>(c->refused_allowed.load()));
  std::printf("| allowed CONNECTs refused | %llu |\n",
              static_cast<unsigned long long>(c->allowed_refused.load()));
  std::printf("| window 200 / refused / upstream or I/O errors | %llu / %llu / %llu |\n",
              static_cast<unsigned long long>(c->window_ok.load()),
              static_cast<unsigned long long>(c->window_refused.load()),
              static_cast<unsigned long long>(c->window_errors.load()));
  std::printf("| slow clients done / ended early | %llu / %llu |\n",
              static_cast<unsigned long long>(c->slow_ok.load()),
              static_cast<unsigned long long>(c->slow_errors.load()));
  std::printf("| control changes (network, grant add/delete) / failed | %llu / %llu |\n",
              static_cast<unsigned long long>(c->control_changes.load()),
              static_cast<unsigned long long>(c->control_failures.load()));
  std::printf("| journal, metrics, policy, health reads / failed | %llu / %llu |\n",
              static_cast<unsigned long long>(c->reads.load()),
              static_cast<unsigned long long>(c->read_failures.load()));
  std::printf("| journal records the policy could not have produced | %zu |\n",
              wrong_records.size());
  for (const std::string& r : wrong_records) progress("wrong journal record: " + r);

  const bool rss_flat = rss_slope < kMaxRssSlopeKibPerMin, fd_flat = fd_slope < kMaxFdSlopePerMin;
  const bool pass = !crashed && c->sha_failures == 0 && wrong == 0 && rss_flat && fd_flat &&
                    dropped_ok && !journal_unreadable && c->transfers > 0 && c->window_ok > 0;
  std::printf("\nVerdict: %s\n", pass ? "PASS" : "FAIL");
  std::printf("- crash: %s\n", crashed ? crash.c_str() : "none (the gatekeeper ran to the end)");
  std::printf("- sha256: %llu failed of %llu transfers\n",
              static_cast<unsigned long long>(c->sha_failures.load()),
              static_cast<unsigned long long>(c->transfers.load() + c->slow_ok.load()));
  std::printf("- decisions different from the policy in force: %llu\n",
              static_cast<unsigned long long>(wrong));
  std::printf("- VmRSS slope after %.0f min warm-up: %+.1f KiB/min (flat below %.0f)\n",
              kWarmupMinutes, rss_slope, kMaxRssSlopeKibPerMin);
  std::printf("- open descriptors slope after warm-up: %+.3f /min (flat below %.1f)\n", fd_slope,
              kMaxFdSlopePerMin);
  std::printf(
      "- journal: dropped %ld never went back: %s; dropped + counts in the ring (%ld) <= decisions "
      "(%.0f): %s%s\n",
      last.dropped, dropped_went_back ? "no" : "yes", last.ring_count, last.decisions,
      static_cast<double>(last.dropped) + static_cast<double>(last.ring_count) <=
              last.decisions + 1e-9
          ? "yes"
          : "no",
      journal_unreadable ? "; a journal read failed" : "");
  return pass ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  Options options;
  const bool parsed =
      parse_options(argc, argv, {}, &options, [&](const std::string& name, long value) {
        if (name != "--minutes") return false;
        options.minutes = value;
        return true;
      });
  return bench_main("bench_soak", parsed, kUsage, [&] { return run_soak(options); });
}
