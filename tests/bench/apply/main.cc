// bench_apply: apply of a 10,000-path change into a repository of 10,000 files, as a branch and
// as uncommitted changes (every path read back, written, recorded), then the read-only state and
// a second apply (nothing new). The result ref is made with `git fast-import` on top of code in's
// own start commit, as bring-out would promote it. Prints a Markdown table; never asserts. No
// Docker: apply runs on the host only.
#include <sys/resource.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <iostream>
#include <string>
#include <vector>

#include "controller/code/apply.h"
#include "controller/code/snapshot.h"
#include "controller/process.h"

namespace {

using controller::ProcessOutcome;
using controller::ProcessRequest;
using Clock = std::chrono::steady_clock;
constexpr const char* kSpace = "be0c4a9910aa";
constexpr int kFiles = 10000;

ProcessOutcome git(const std::string& repo, std::vector<std::string> args, const std::string& stdin_bytes = {}) {
  ProcessRequest r;
  r.argv = {"git", "-C", repo};
  r.argv.insert(r.argv.end(), args.begin(), args.end());
  r.stdin_bytes = stdin_bytes;
  r.timeout = std::chrono::minutes(10);
  r.output_cap = 256u << 20;
  return controller::run_process(r);
}

bool must(const ProcessOutcome& o, const std::string& what) {
  if (o.succeeded()) return true;
  std::cerr << "bench_apply: " << what << ": " << o.describe() << "\n";
  return false;
}

std::string path_of(int f) { return "src/d" + std::to_string(f / 100) + "/f" + std::to_string(f) + ".c"; }

std::string content(int f, const char* who) {
  std::string text;
  for (int line = 0; line < 20; ++line)
    text += "file " + std::to_string(f) + " line " + std::to_string(line) + (line == 10 ? std::string(" ") + who : "") + "\n";
  return text;
}

// One commit on `ref` (from `parent` when given) writing every file with `who`'s content.
std::string stream(const std::string& ref, const std::string& parent, const char* who) {
  std::string s = "commit " + ref + "\ncommitter Bench <bench@example.invalid> 1700000000 +0000\ndata 6\nbench\n";
  if (!parent.empty()) s += "from " + parent + "\n";
  for (int f = 0; f < kFiles; ++f) {
    const std::string data = content(f, who);
    s += "M 100644 inline " + path_of(f) + "\ndata " + std::to_string(data.size()) + "\n" + data + "\n";
  }
  return s + "\n";
}

double peak_mb() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_maxrss) / 1024.0;
}

}  // namespace

int main() {
  setenv("GIT_CONFIG_NOSYSTEM", "1", 1);
  char tmpl[] = "/tmp/bench-apply-XXXXXX";
  if (mkdtemp(tmpl) == nullptr) return 1;
  const std::string dir = tmpl, repo = dir + "/repo";
  std::function<void()> cleanup = [&] { std::filesystem::remove_all(dir); };
  if (!must(git("/", {"init", "-q", "-b", "main", repo}), "init") ||
      !must(git(repo, {"fast-import", "--quiet"}, stream("refs/heads/main", "", "")), "fast-import the project") ||
      !must(git(repo, {"-c", "user.name=b", "-c", "user.email=b@example.invalid", "reset", "-q", "--hard", "main"}), "check out")) {
    cleanup();
    return 1;
  }
  controller::Result<controller::code::Snapshot> snap = controller::code::take_snapshot(repo, kSpace, controller::code::Mode::kUncommitted);
  if (!snap) {
    std::cerr << "bench_apply: code in: " << snap.error().message << "\n";
    cleanup();
    return 1;
  }
  const std::string result_ref = controller::code::space_ref(kSpace, "result");
  if (!must(git(repo, {"fast-import", "--quiet"}, stream(result_ref, snap->start, "(agent)")), "fast-import the result")) {
    cleanup();
    return 1;
  }
  struct Row {
    std::string what;
    double seconds;
    std::string outcome;
  };
  std::vector<Row> rows;
  auto timed = [&](const std::string& what, const std::function<std::string()>& step) {
    const auto t0 = Clock::now();
    const std::string outcome = step();
    rows.push_back({what, std::chrono::duration<double>(Clock::now() - t0).count(), outcome});
  };
  // The same change with git's own tools, in a copy of the repository (for comparison).
  const std::string copy = dir + "/copy";
  std::filesystem::copy(repo, copy, std::filesystem::copy_options::recursive | std::filesystem::copy_options::copy_symlinks);
  timed("git diff-tree -p --binary, then git apply (a copy, for comparison)", [&] {
    const ProcessOutcome patch = git(copy, {"diff-tree", "-r", "-p", "--binary", "--full-index", "--no-renames", snap->start, result_ref});
    if (!patch.succeeded()) return patch.describe();
    const ProcessOutcome applied = git(copy, {"apply", "--binary", "-"}, patch.out);
    return applied.succeeded() ? std::string("applied") : applied.describe();
  });
  timed("apply --as-branch", [&] {
    auto r = controller::code::apply_as_branch(repo, kSpace, "bench");
    return r ? std::string("branch made") : r.error().message;
  });
  timed("apply-state (before the apply)", [&] {
    auto r = controller::code::describe_apply_state(repo, kSpace, {});
    return r ? std::to_string(r->new_path_count) + " new paths" : r.error().message;
  });
  timed("apply --as-changes (10,000 paths)", [&] {
    auto r = controller::code::apply_as_changes(repo, kSpace, {});
    return r ? std::to_string(r->applied_paths.size()) + " paths applied" : r.error().message;
  });
  timed("apply-state (after: reads 10,000 paths back)", [&] {
    auto r = controller::code::describe_apply_state(repo, kSpace, {});
    return r ? std::to_string(r->new_path_count) + " new paths" : r.error().message;
  });
  timed("apply --as-changes again (nothing new)", [&] {
    auto r = controller::code::apply_as_changes(repo, kSpace, {});
    return r ? std::string(r->nothing_to_apply ? "nothing_to_apply" : "applied") : r.error().message;
  });
  std::printf("| step | seconds | outcome |\n| --- | ---: | --- |\n");
  for (const Row& r : rows) std::printf("| %s | %.2f | %s |\n", r.what.c_str(), r.seconds, r.outcome.c_str());
  std::printf("\nPeak memory of this process (all steps): %.0f MB. %d files, one line changed in each.\n", peak_mb(), kFiles);
  cleanup();
  return 0;
}
