// bench_code_out: `spacectl code out` on real Docker: the time and the host's peak memory
// (spacectl's maximum resident set, from wait4) of a 10,000-path change, of the largest result the
// default caps let through (one incompressible file just under the 128 MiB new-bytes cap), and of
// the 1.5 GB file of zeros the caps refuse (sized from its header after the indexer hashed it).
// Prints a Markdown table; never asserts. Needs a Docker engine, the images (`cmake --build <dir>
// --target images`) and spacectl next to it.
#include <fcntl.h>
#include <limits.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
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

ProcessOutcome run(std::vector<std::string> argv) {
  ProcessRequest r;
  r.argv = std::move(argv);
  r.timeout = std::chrono::minutes(30);
  r.output_cap = 64u << 20;
  return controller::run_process(r);
}

bool must(const ProcessOutcome& o, const std::string& what) {
  if (o.succeeded()) return true;
  std::cerr << "bench_code_out: " << what << ": " << o.describe() << "\n" << o.out.substr(0, 2000) << "\n";
  return false;
}

struct Measured {
  int status = -1;
  double seconds = -1;
  long peak_kib = -1;  // ru_maxrss of the child
};

// argv with stdout and stderr to /dev/null; the exit status, wall time and the child's peak RSS.
Measured measure(const std::vector<std::string>& argv) {
  Measured m;
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  const auto t0 = Clock::now();
  const pid_t pid = fork();
  if (pid == 0) {
    const int null = open("/dev/null", O_WRONLY);
    dup2(null, 1);
    dup2(null, 2);
    execv(args[0], args.data());
    _exit(127);
  }
  int status = 0;
  rusage usage{};
  if (pid < 0 || wait4(pid, &status, 0, &usage) != pid) return m;
  m.seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  m.status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  m.peak_kib = usage.ru_maxrss;
  return m;
}

}  // namespace

int main() {
  const std::string spacectl = self_dir() + "/spacectl";
  char tmpl[] = "/tmp/bench-code-out-XXXXXX";
  const std::string dir = mkdtemp(tmpl);
  const std::string repo = dir + "/project", state = dir + "/state";
  const std::string owner = "benchout" + std::to_string(getpid());
  const std::vector<std::string> base = {spacectl, "--owner", owner, "--state-dir", state};
  auto ctl = [&](std::vector<std::string> args) {
    std::vector<std::string> argv = base;
    argv.insert(argv.end(), args.begin(), args.end());
    return run(argv);
  };
  if (!must(run({"git", "init", "-q", "--initial-branch=main", repo}), "git init")) return 1;
  std::FILE* f = std::fopen((repo + "/README").c_str(), "w");
  if (f != nullptr) std::fputs("bench\n", f), std::fclose(f);
  if (!must(run({"git", "-C", repo, "add", "README"}), "git add") ||
      !must(run({"git", "-C", repo, "-c", "user.name=b", "-c", "user.email=b@example.invalid", "commit", "-qm", "one"}), "git commit"))
    return 1;
  ProcessOutcome created = ctl({"--json", "space", "create", "--name", "bench-out", "--memory", "1g", "--repo", repo});
  if (!must(created, "space create --repo")) return 1;
  const std::size_t at = created.out.find("\"id\":\"");
  const std::string id = created.out.substr(at + 6, 12);
  const std::string path = "/spaces/" + id + "/project";
  auto inside = [&](const std::string& script) { return must(ctl({"space", "exec", id, "--", "sh", "-c", script, "sh", path}), script.substr(0, 60)); };
  std::vector<std::string> out_argv = base;
  out_argv.insert(out_argv.end(), {"code", "out", id});

  std::cerr << "bench_code_out: 10,000 new files in 100 folders inside the space\n";
  inside("cd \"$1\" && d=0; while [ $d -lt 100 ]; do mkdir -p src/d$d; i=0; while [ $i -lt 100 ]; do echo \"file $d $i\" > src/d$d/f$i.c; "
         "i=$((i+1)); done; d=$((d+1)); done");
  const Measured paths = measure(out_argv);

  std::cerr << "bench_code_out: one incompressible file of 127 MiB (the new-bytes cap is 128 MiB)\n";
  inside("cd \"$1\" && rm -rf src && head -c 133169152 /dev/urandom > random.bin");
  const Measured largest = measure(out_argv);

  std::cerr << "bench_code_out: 1.5 GB of zeros (refused)\n";
  inside("cd \"$1\" && rm random.bin && busybox truncate -s 1500000000 zeros.bin");
  const Measured zeros = measure(out_argv);

  must(ctl({"space", "remove", id}), "space remove");
  std::error_code ignored;
  std::filesystem::remove_all(dir, ignored);

  std::printf("| bring-out | exit | seconds | spacectl peak RSS (MiB) |\n| --- | ---: | ---: | ---: |\n");
  const auto row = [](const char* what, const Measured& m) {
    std::printf("| %s | %d | %.2f | %.1f |\n", what, m.status, m.seconds, static_cast<double>(m.peak_kib) / 1024.0);
  };
  row("10,000 new files (100 folders)", paths);
  row("127 MiB incompressible file (largest the caps allow)", largest);
  row("1.5 GB of zeros (refused: result_too_large)", zeros);
  return paths.status == 0 && largest.status == 0 ? 0 : 1;
}
