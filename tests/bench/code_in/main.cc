// bench_code_in: time to a usable space (snapshot + transfer + unfold, `spacectl code in`), time
// of the history that follows (`spacectl code history`), and the same work done by a plain
// `git push` of the whole history over `docker exec` (git's ext:: transport) plus a checkout, in
// the same run and the same space. The repository is synthetic: 5,000 files and 1,000 commits
// written with `git fast-import`, plus uncommitted changes. Prints a Markdown table; never asserts.
// Needs a Docker engine, the images (`cmake --build <dir> --target images`) and spacectl next to it.
#include <limits.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <iostream>
#include <string>
#include <vector>

#include "controller/process.h"

namespace {

using controller::ProcessOutcome;
using controller::ProcessRequest;
using Clock = std::chrono::steady_clock;

std::string self_dir() {
  char buffer[PATH_MAX];
  const ssize_t n = readlink("/proc/self/exe", buffer, sizeof buffer - 1);
  std::string path(buffer, n > 0 ? static_cast<std::size_t>(n) : 0);
  return path.substr(0, path.rfind('/'));
}

ProcessOutcome run(std::vector<std::string> argv, const std::string& stdin_bytes = {}, int minutes = 30) {
  ProcessRequest r;
  r.argv = std::move(argv);
  r.stdin_bytes = stdin_bytes;
  r.timeout = std::chrono::minutes(minutes);
  r.output_cap = 64u << 20;
  return controller::run_process(r);
}

bool must(const ProcessOutcome& o, const std::string& what) {
  if (o.succeeded()) return true;
  std::cerr << "bench_code_in: " << what << ": " << o.describe() << "\n" << o.out.substr(0, 2000) << "\n";
  return false;
}

double seconds_of(const std::function<bool()>& step) {
  const auto t0 = Clock::now();
  if (!step()) return -1;
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

// 1,000 commits over 5,000 files: the first adds every file, each later one rewrites one file.
std::string fast_import_stream() {
  std::string s;
  long long mark = 0;
  auto blob = [&](const std::string& data) {
    s += "blob\nmark :" + std::to_string(++mark) + "\ndata " + std::to_string(data.size()) + "\n" + data + "\n";
    return mark;
  };
  for (int c = 0; c < 1000; ++c) {
    std::vector<std::pair<std::string, long long>> changes;
    if (c == 0) {
      for (int f = 0; f < 5000; ++f) {
        std::string text;
        for (int line = 0; line < 20; ++line) text += "file " + std::to_string(f) + " line " + std::to_string(line) + "\n";
        changes.push_back({"src/d" + std::to_string(f / 100) + "/f" + std::to_string(f) + ".c", blob(text)});
      }
    } else {
      const int f = (c * 37) % 5000;
      changes.push_back({"src/d" + std::to_string(f / 100) + "/f" + std::to_string(f) + ".c",
                         blob("file " + std::to_string(f) + " rewritten by commit " + std::to_string(c) + "\n")});
    }
    const std::string msg = "commit " + std::to_string(c) + "\n";
    s += "commit refs/heads/main\ncommitter Bench <bench@example.invalid> " + std::to_string(1700000000 + c) +
         " +0000\ndata " + std::to_string(msg.size()) + "\n" + msg;
    for (const auto& [path, m] : changes) s += "M 100644 :" + std::to_string(m) + " " + path + "\n";
    s += "\n";
  }
  return s;
}

}  // namespace

int main() {
  const std::string bin = self_dir();
  const std::string spacectl = bin + "/spacectl";
  char tmpl[] = "/tmp/bench-code-in-XXXXXX";
  const std::string dir = mkdtemp(tmpl);
  const std::string repo = dir + "/project", state = dir + "/state";
  const std::string owner = "bench" + std::to_string(getpid());
  auto ctl = [&](std::vector<std::string> args) {
    std::vector<std::string> argv = {spacectl, "--owner", owner, "--state-dir", state};
    argv.insert(argv.end(), args.begin(), args.end());
    return run(argv);
  };
  std::cerr << "bench_code_in: building the repository (5,000 files, 1,000 commits)\n";
  if (!must(run({"git", "init", "-q", "--initial-branch=main", repo}), "git init") ||
      !must(run({"git", "-C", repo, "fast-import", "--quiet"}, fast_import_stream()),
            "git fast-import") ||
      !must(run({"git", "-C", repo, "checkout", "-q", "-f", "main"}), "git checkout")) {
    return 1;
  }
  for (int i = 0; i < 10; ++i) {
    std::FILE* f = std::fopen((repo + "/src/d" + std::to_string(i) + "/f" + std::to_string(i * 100) + ".c").c_str(), "a");
    if (f != nullptr) std::fputs("uncommitted\n", f), std::fclose(f);
  }
  ProcessOutcome created = ctl({"--json", "space", "create", "--name", "bench", "--memory", "1g"});
  if (!must(created, "space create")) return 1;
  const std::size_t at = created.out.find("\"id\":\"");
  const std::string id = created.out.substr(at + 6, 12);
  ProcessOutcome names = run({"docker", "ps", "--filter", "label=spacectl.space.id=" + id, "--filter",
                              "label=spacectl.space.role=space", "--format", "{{.Names}}"});
  const std::string space_container = names.out.substr(0, names.out.find('\n'));

  // With --timings: every engine call and streamed exec of the step, one line each on stderr.
  auto timed = [&](std::vector<std::string> args, const std::string& what) {
    std::vector<std::string> argv = {spacectl, "--timings", "--owner", owner, "--state-dir", state};
    argv.insert(argv.end(), args.begin(), args.end());
    const ProcessOutcome o = run(argv);
    std::size_t pos = 0;
    while (pos < o.err.size()) {
      const std::size_t end = o.err.find('\n', pos);
      const std::string line =
          o.err.substr(pos, end == std::string::npos ? std::string::npos : end - pos);
      if (line.rfind("timing:", 0) == 0) {
        std::cerr << "bench_code_in: " << what << ": " << line << "\n";
      }
      pos = end == std::string::npos ? o.err.size() : end + 1;
    }
    return must(o, what);
  };
  const double usable = seconds_of([&] {
    return timed({"code", "in", id, "--repo", repo}, "code in");
  });
  const double history = seconds_of([&] { return timed({"code", "history", id}, "code history"); });
  const std::string plain = "/spaces/" + id + "/plain";
  must(ctl({"space", "exec", id, "--", "git", "init", "-q", plain}), "git init inside");
  const double plain_push = seconds_of([&] {
    const std::string url = "ext::docker exec -i --user 70000:70000 " + space_container + " git receive-pack " + plain;
    return must(run({"git", "-C", repo, "-c", "protocol.ext.allow=always", "push", "--quiet", url, "main:refs/heads/pushed"}),
                "plain git push") &&
           must(ctl({"space", "exec", id, "--", "git", "-C", plain, "checkout", "-q", "pushed"}), "checkout inside");
  });
  // What limits code in here: each fixed step inside is one `docker exec` round trip (no shell
  // inside to batch them), and the snapshot reads every file. Measured on their own, same run.
  const double exec_trip = seconds_of([&] {
                             for (int i = 0; i < 5; ++i) {
                               if (!must(run({"docker", "exec", "--user", "70000:70000",
                                              space_container, "/usr/bin/git", "--version"}),
                                         "docker exec")) {
                                 return false;
                               }
                             }
                             return true;
                           }) /
                           5;
  const double files = seconds_of([&] {
    return must(ctl({"code", "files", "--repo", repo}), "code files");
  });
  must(ctl({"space", "remove", id}), "space remove");
  std::error_code ignored;
  std::filesystem::remove_all(dir, ignored);

  std::printf("| step | seconds |\n| --- | ---: |\n");
  std::printf("| code in: time to a usable space (snapshot, one push, unfold) | %.2f |\n", usable);
  std::printf("| code history (one push of what the space lacks, shallow mark dropped) | %.2f |\n",
              history);
  std::printf("| code in + history | %.2f |\n", usable + history);
  std::printf("| plain git push of the whole history over docker exec (ext::) + checkout | %.2f |\n", plain_push);
  std::printf("| one `docker exec` round trip (git --version inside, mean of 5) | %.2f |\n",
              exec_trip);
  std::printf("| `code files` (open, read every file's status, no snapshot written) | %.2f |\n",
              files);
  if (plain_push > 0) {
    std::printf("\nusable / plain = %.2f (goal ≤ 0.5); total / plain = %.2f (goal ≤ 1.1)\n", usable / plain_push,
                (usable + history) / plain_push);
  }
  return usable < 0 || history < 0 || plain_push < 0 ? 1 : 0;
}
