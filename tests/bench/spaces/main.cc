// bench_spaces: N spaces (default 200) on one engine, made one after another with `spacectl space
// create --timings`, then listed, verified and removed. Prints create p50/p95 at 1–10, 91–100 and
// 191–200, where a create's time goes (one row per kind of engine call), list time, host memory per
// idle space (gatekeeper and space cgroups, the engine's shims and daemons, the host's drop in
// MemAvailable), and the growth of the engine's iptables rules. Never asserts: a create that fails
// ends the creating and is reported (the measured limit), and every space made is removed.
// Needs root, a Docker engine, the images (`cmake --build <dir> --target images`) and spacectl
// next to it (tests/bench/README.md "bench_spaces").
#include <limits.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "controller/process.h"
#include "policy/number.h"
#include "tests/bench/common/process.h"
#include "tests/bench/common/report.h"

namespace {

using controller::ProcessOutcome;
using controller::ProcessRequest;
using Clock = std::chrono::steady_clock;
using nlohmann::json;

std::string self_dir() {
  char buffer[PATH_MAX];
  const ssize_t n = readlink("/proc/self/exe", buffer, sizeof buffer - 1);
  std::string path(buffer, n > 0 ? static_cast<std::size_t>(n) : 0);
  return path.substr(0, path.rfind('/'));
}

struct Timed {
  ProcessOutcome outcome;
  double seconds = 0;
};

Timed run(std::vector<std::string> argv, int minutes = 10) {
  ProcessRequest r;
  r.argv = std::move(argv);
  r.timeout = std::chrono::minutes(minutes);
  r.output_cap = 64u << 20;
  const auto t0 = Clock::now();
  Timed t{controller::run_process(r), 0};
  t.seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  return t;
}

std::vector<std::string> words_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string w; in >> w;) out.push_back(w);
  return out;
}

long iptables_rules() {
  const Timed t = run({"iptables-save"});
  if (!t.outcome.succeeded()) return -1;
  long n = 0;
  std::istringstream in(t.outcome.out);
  for (std::string l; std::getline(in, l);) {
    if (l.rfind("-A ", 0) == 0) ++n;
  }
  return n;
}

long meminfo_kib(const std::string& key) {
  std::ifstream in("/proc/meminfo");
  for (std::string l; std::getline(in, l);) {
    if (l.rfind(key + ":", 0) == 0) {
      return bench::kib_value(std::string_view(l).substr(key.size() + 1)).value_or(-1);
    }
  }
  return -1;
}

// Sum of VmRSS (KiB) of the processes whose comm is `name`, and how many there are.
std::pair<long, long> rss_of(const std::string& name) {
  long total = 0, count = 0;
  for (const auto& e : std::filesystem::directory_iterator("/proc")) {
    const std::string pid = e.path().filename();
    if (pid.find_first_not_of("0123456789") != std::string::npos) continue;
    std::ifstream comm(e.path() / "comm");
    std::string c;
    std::getline(comm, c);
    if (c != name) continue;
    std::ifstream status(e.path() / "status");
    for (std::string l; std::getline(status, l);) {
      if (l.rfind("VmRSS:", 0) == 0) {
        const std::optional<long> kib = bench::kib_value(std::string_view(l).substr(6));
        if (!kib) return {-1, -1};  // a status line that does not read: no total at all
        total += *kib;
        ++count;
      }
    }
  }
  return {total, count};
}

// cgroup v1 (memory.usage_in_bytes) or v2 (memory.current) of a Docker container, KiB; -1 unknown.
long cgroup_kib(const std::string& container_id) {
  for (const std::string& path :
       {"/sys/fs/cgroup/memory/docker/" + container_id + "/memory.usage_in_bytes",
        "/sys/fs/cgroup/docker/" + container_id + "/memory.current",
        "/sys/fs/cgroup/system.slice/docker-" + container_id + ".scope/memory.current"}) {
    std::ifstream in(path);
    long long bytes = -1;
    if (in >> bytes) return static_cast<long>(bytes / 1024);
  }
  return -1;
}

// The anonymous (rss) part of a v1 memory cgroup, KiB; -1 unknown.
long cgroup_rss_kib(const std::string& container_id) {
  std::ifstream in("/sys/fs/cgroup/memory/docker/" + container_id + "/memory.stat");
  for (std::string key; in >> key;) {
    long long v = 0;
    in >> v;
    if (key == "total_rss") return static_cast<long>(v / 1024);
  }
  return -1;
}

std::string load_average() {
  std::ifstream in("/proc/loadavg");
  std::string one, five, fifteen;
  in >> one >> five >> fifteen;
  return one + " " + five + " " + fifteen;
}

struct Window {
  std::size_t from, to;  // 1-based, inclusive
};

std::string ms(double seconds) { return bench::fixed(seconds * 1000, 0); }

}  // namespace

int main(int argc, char** argv) {
  std::size_t count = 200;
  std::string spacectl = self_dir() + "/spacectl";
  std::string pool;
  std::string disk;
  long budget_minutes = 0;  // 0: no budget
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--count" && i + 1 < argc && policy::parse_number<std::size_t>(argv[i + 1])) {
      count = *policy::parse_number<std::size_t>(argv[++i]);
    } else if (a == "--spacectl" && i + 1 < argc) {
      spacectl = argv[++i];
    } else if (a == "--subnet-pool" && i + 1 < argc) {
      pool = argv[++i];
    } else if (a == "--disk" && i + 1 < argc) {
      disk = argv[++i];
    } else if (a == "--budget-minutes" && i + 1 < argc &&
               policy::parse_number<long>(argv[i + 1]).value_or(-1) >= 0) {
      budget_minutes = *policy::parse_number<long>(argv[++i]);
    } else {
      std::cerr << "usage: bench_spaces [--count N] [--spacectl PATH] [--subnet-pool CIDR] [--disk "
                   "SIZE] [--budget-minutes M]\n";
      return 2;
    }
  }
  if (count == 0) count = 1;
  const bench::Machine machine = bench::describe_machine();
  // A state directory and owner of its own: the bench's spaces are never the user's.
  char tmpl[] = "/tmp/bench-spaces-XXXXXX";
  if (mkdtemp(tmpl) == nullptr) {
    std::perror("mkdtemp");
    return 1;
  }
  const std::string state = tmpl;
  std::vector<std::string> base = {spacectl, "--state-dir", state};
  if (!pool.empty()) base.insert(base.end(), {"--subnet-pool", pool});
  auto cmd = [&](std::vector<std::string> rest) {
    std::vector<std::string> a = base;
    a.insert(a.end(), rest.begin(), rest.end());
    return a;
  };

  const long rules_before = iptables_rules();
  const long avail_before = meminfo_kib("MemAvailable");
  const std::pair<long, long> dockerd_before = rss_of("dockerd"),
                              containerd_before = rss_of("containerd");

  std::vector<std::string> ids;
  std::vector<double> create_seconds;
  std::map<std::string, std::pair<double, long>>
      call_ms;  // kind → (total ms, calls), over every create
  std::string stopped_because;
  const std::string load_before = load_average();
  const auto creating_started = Clock::now();
  for (std::size_t i = 1; i <= count; ++i) {
    // A busy machine can make N creates take longer than a run may: the budget ends the creating
    // (reported as where it stopped), and list, verify, memory and removal still run.
    if (budget_minutes > 0 &&
        Clock::now() - creating_started > std::chrono::minutes(budget_minutes)) {
      stopped_because = "the creating budget of " + std::to_string(budget_minutes) +
                        " minutes was used up (load average " + load_average() + ")";
      break;
    }
    std::vector<std::string> c = {"--json", "--timings", "space",
                                  "create", "--name",    "bench-" + std::to_string(i)};
    if (!disk.empty()) c.insert(c.end(), {"--disk", disk});
    const Timed t = run(cmd(c));
    const json doc = json::parse(t.outcome.out, nullptr, false);
    if (!t.outcome.succeeded() || !doc.is_object() || !doc.contains("id")) {
      stopped_because = "create " + std::to_string(i) + ": " + t.outcome.describe() + " " +
                        t.outcome.out.substr(0, 400);
      break;
    }
    ids.push_back(doc["id"].get<std::string>());
    create_seconds.push_back(t.seconds);
    std::istringstream err(t.outcome.err);
    for (std::string l; std::getline(err, l);) {
      // "timing:    41.2 ms  docker network create … gk-…": the kind is the words before "…".
      if (l.rfind("timing:", 0) != 0) continue;
      // The figure is the first word after "timing:" and its padding.
      std::string_view figure = std::string_view(l).substr(7);
      while (!figure.empty() && figure.front() == ' ') figure.remove_prefix(1);
      const std::optional<double> parsed =
          policy::parse_number<double>(figure.substr(0, figure.find(' ')));
      if (!parsed) {
        std::cerr << "bench_spaces: a timing line that does not read: " << l << "\n";
        continue;
      }
      const double v = *parsed;
      std::string kind = l.substr(l.find("ms") + 4);
      if (const std::size_t dots = kind.find(" …"); dots != std::string::npos) {
        kind = kind.substr(0, dots);
      }
      call_ms[kind].first += v;
      call_ms[kind].second += 1;
    }
    if (i % 10 == 0) {
      std::cerr << "bench_spaces: " << i << " created, last " << ms(t.seconds) << " ms, load "
                << load_average() << "\n";
    }
  }
  const long rules_created = iptables_rules();
  const std::string load_after = load_average();
  const double creating_minutes =
      std::chrono::duration<double>(Clock::now() - creating_started).count() / 60;

  // Idle: nothing runs in the spaces but their sleep and the gatekeepers' loops.
  std::this_thread::sleep_for(std::chrono::seconds(20));
  long space_kib = 0, space_rss = 0, gk_kib = 0, gk_rss = 0, measured = 0;
  {
    const Timed ps = run({"docker", "ps", "--no-trunc", "--filter", "label=spacectl.space=true",
                          "--format", "{{.ID}} {{.Names}}"});
    std::istringstream in(ps.outcome.out);
    for (std::string line; std::getline(in, line);) {
      const std::vector<std::string> w = words_of(line);
      if (w.size() != 2) continue;
      bool ours = false;
      for (const std::string& id : ids) ours = ours || w[1].find(id) != std::string::npos;
      if (!ours) continue;
      const bool gatekeeper =
          w[1].size() > 10 && w[1].compare(w[1].size() - 10, 10, "gatekeeper") == 0;
      (gatekeeper ? gk_kib : space_kib) += std::max(0L, cgroup_kib(w[0]));
      (gatekeeper ? gk_rss : space_rss) += std::max(0L, cgroup_rss_kib(w[0]));
      ++measured;
    }
  }
  const long avail_after = meminfo_kib("MemAvailable");
  const std::pair<long, long> shims = rss_of("containerd-shim");
  const std::pair<long, long> dockerd_after = rss_of("dockerd"),
                              containerd_after = rss_of("containerd");

  // List: three times, the middle one counts (one engine round for all spaces).
  std::vector<double> list_seconds;
  std::size_t listed = 0, running = 0;
  for (int k = 0; k < 3; ++k) {
    const Timed t = run(cmd({"--json", "space", "list"}));
    list_seconds.push_back(t.seconds);
    const json doc = json::parse(t.outcome.out, nullptr, false);
    if (k == 0 && doc.is_object() && doc.contains("spaces") && doc["spaces"].is_array()) {
      listed = doc["spaces"].size();
      for (const json& s : doc["spaces"]) {
        if (s.value("state", std::string()) == "running") ++running;
      }
    } else if (k == 0 && doc.is_array()) {
      listed = doc.size();
      for (const json& s : doc) {
        if (s.value("state", std::string()) == "running") ++running;
      }
    }
  }
  std::sort(list_seconds.begin(), list_seconds.end());

  std::vector<double> verify_seconds, remove_seconds;
  std::size_t verified = 0, removed = 0;
  for (const std::string& id : ids) {
    const Timed t = run(cmd({"--json", "space", "verify", id}));
    verify_seconds.push_back(t.seconds);
    if (t.outcome.succeeded()) ++verified;
  }
  for (const std::string& id : ids) {
    const Timed t = run(cmd({"--json", "space", "remove", id}));
    remove_seconds.push_back(t.seconds);
    if (t.outcome.succeeded()) ++removed;
  }
  const long rules_removed = iptables_rules();
  const Timed sweep = run(cmd({"--json", "sweep", "--grace", "0"}));
  const json swept = json::parse(sweep.outcome.out, nullptr, false);
  std::filesystem::remove_all(state);

  const std::size_t n = ids.size();
  std::printf("#### bench_spaces — %s\n\n", machine.date.c_str());
  bench::print_machine(
      machine,
      "Spaces made one after another by `spacectl space create` (create → verify → start).");
  std::printf("Spaces created: %zu of %zu%s\n\n", n, count,
              stopped_because.empty() ? "" : (" — stopped: " + stopped_because).c_str());
  std::printf(
      "Load average (1, 5, 15 min) before the creates: %s; after them: %s; creating took "
      "%s min.\n\n",
      load_before.c_str(), load_after.c_str(), bench::fixed(creating_minutes, 1).c_str());
  std::printf("| measure | value |\n| --- | ---: |\n");
  for (const Window w : {Window{1, 10}, Window{91, 100}, Window{191, 200}}) {
    if (n < w.to) continue;
    std::vector<double> part(create_seconds.begin() + static_cast<long>(w.from - 1),
                             create_seconds.begin() + static_cast<long>(w.to));
    std::sort(part.begin(), part.end());
    std::printf("| create p50 / p95, spaces %zu–%zu | %s / %s ms |\n", w.from, w.to,
                ms(bench::percentile(part, 0.5)).c_str(),
                ms(bench::percentile(part, 0.95)).c_str());
  }
  if (n >= 200) {
    std::vector<double> a(create_seconds.begin(), create_seconds.begin() + 10),
        b(create_seconds.begin() + 190, create_seconds.begin() + 200);
    std::sort(a.begin(), a.end());
    std::sort(b.begin(), b.end());
    std::printf("| create p50 at 191–200 / at 1–10 (goal ≤ 1.5) | %s |\n",
                bench::fixed(bench::percentile(b, 0.5) / bench::percentile(a, 0.5), 2).c_str());
  }
  std::printf(
      "| list of %zu spaces (median of 3; goal ≤ 1 s) | %s ms (listed %zu, running %zu) |\n", n,
      ms(list_seconds[1]).c_str(), listed, running);
  std::sort(verify_seconds.begin(), verify_seconds.end());
  std::sort(remove_seconds.begin(), remove_seconds.end());
  std::printf("| verify p50 (passed) | %s ms (%zu of %zu) |\n",
              ms(bench::percentile(verify_seconds, 0.5)).c_str(), verified, n);
  std::printf("| remove p50 (removed) | %s ms (%zu of %zu) |\n",
              ms(bench::percentile(remove_seconds, 0.5)).c_str(), removed, n);
  if (n > 0) {
    const double d = static_cast<double>(n);
    std::printf("| gatekeeper cgroup per space (usage / rss) | %s / %s KiB |\n",
                bench::fixed(gk_kib / d, 0).c_str(), bench::fixed(gk_rss / d, 0).c_str());
    std::printf("| space cgroup per space (usage / rss) | %s / %s KiB |\n",
                bench::fixed(space_kib / d, 0).c_str(), bench::fixed(space_rss / d, 0).c_str());
    std::printf("| containerd-shim RSS per space (%ld shims) | %s KiB |\n", shims.second,
                bench::fixed(shims.first / d, 0).c_str());
    std::printf("| dockerd + containerd RSS growth per space | %s KiB |\n",
                bench::fixed((dockerd_after.first + containerd_after.first - dockerd_before.first -
                              containerd_before.first) /
                                 d,
                             0)
                    .c_str());
    std::printf("| host MemAvailable drop per space | %s KiB |\n",
                bench::fixed((avail_before - avail_after) / d, 0).c_str());
    std::printf(
        "| iptables rules: before / with %zu spaces / after removal | %ld / %ld / %ld (%s per "
        "space) |\n",
        n, rules_before, rules_created, rules_removed,
        bench::fixed(static_cast<double>(rules_created - rules_before) / d, 1).c_str());
  }
  std::printf("| containers measured | %ld |\n", measured);
  std::printf(
      "| sweep after removal: subnets freed, objects removed | %zu, %zu |\n\n",
      swept.is_object() && swept.contains("subnets_freed") ? swept["subnets_freed"].size() : 0,
      swept.is_object() && swept.contains("removed") ? swept["removed"].size() : 0);

  if (n > 0) {
    std::printf(
        "Where a create's time goes (mean over %zu creates, one row per kind of call, "
        "`--timings`):\n\n",
        n);
    std::printf("| call | calls per create | ms per create |\n| --- | ---: | ---: |\n");
    std::vector<std::pair<std::string, std::pair<double, long>>> rows(call_ms.begin(),
                                                                      call_ms.end());
    std::sort(rows.begin(), rows.end(),
              [](const auto& a, const auto& b) { return a.second.first > b.second.first; });
    double total = 0;
    for (const auto& [kind, v] : rows) {
      total += v.first;
      std::printf("| %s | %s | %s |\n", kind.c_str(),
                  bench::fixed(static_cast<double>(v.second) / static_cast<double>(n), 1).c_str(),
                  bench::fixed(v.first / static_cast<double>(n), 1).c_str());
    }
    std::vector<double> all = create_seconds;
    std::sort(all.begin(), all.end());
    std::printf("| all calls (sum; create p50 overall %s ms) | | %s |\n\n",
                ms(bench::percentile(all, 0.5)).c_str(),
                bench::fixed(total / static_cast<double>(n), 1).c_str());
  }
  return 0;
}
