// bench_code_in: time to a usable space (snapshot + transfer + unfold, `spacectl code in`), time
// of the history that follows (`spacectl code history`), and the same work done by a plain
// `git push` of the whole history over `docker exec` (git's ext:: transport) plus a checkout, in
// the same run and the same space. The repository is built here with `git fast-import` from a real
// source tree (Debian 12's cmake source package, fetched beforehand by
// tests/bench/code_in/fetch-tree, never by the benchmark): a first commit of the whole tree, then
// 999 commits each editing one source file, plus ten uncommitted edits. Prints a Markdown table;
// never asserts. Needs a Docker engine, the images (`cmake --build <dir> --target images`) and
// spacectl next to it (or --spacectl).
//   bench_code_in [--tree DIR] [--spacectl PATH]
#include <limits.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <sstream>
#include <string>
#include <utility>
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

ProcessOutcome run(std::vector<std::string> argv, const std::string& stdin_bytes = {},
                   int minutes = 30) {
  ProcessRequest r;
  r.argv = std::move(argv);
  r.stdin_bytes = stdin_bytes;
  r.timeout = std::chrono::minutes(minutes);
  r.output_cap = 64u << 20;
  return controller::run_process(r);
}

bool must(const ProcessOutcome& o, const std::string& what) {
  if (o.succeeded()) return true;
  std::cerr << "bench_code_in: " << what << ": " << o.describe() << "\n"
            << o.out.substr(0, 2000) << "\n";
  return false;
}

double seconds_of(const std::function<bool()>& step) {
  const auto t0 = Clock::now();
  if (!step()) return -1;
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

constexpr int kCommits = 1000;  // the first holds the whole tree, each later one edits one file
constexpr std::size_t kMinFiles = 5000;
constexpr int kUncommitted = 10;

// One file of the tree as git will hold it.
struct TreeFile {
  std::string path;  // relative, '/'-separated
  std::string mode;  // 100644, 100755 or 120000
  std::string data;  // contents, or a link's target
};

bool read_whole(const std::filesystem::path& path, std::string& out) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream all;
  all << in.rdbuf();
  out = all.str();
  return in.good() || in.eof();
}

// Every regular file and link under `root` (sorted), but dpkg-source's quilt state (.pc) and any
// .git folder; nothing is followed through a link.
std::vector<TreeFile> read_tree(const std::string& root) {
  std::vector<TreeFile> files;
  namespace fs = std::filesystem;
  for (auto it = fs::recursive_directory_iterator(root); it != fs::recursive_directory_iterator();
       ++it) {
    const std::string name = it->path().filename().string();
    if (!it->is_symlink() && it->is_directory() && (name == ".pc" || name == ".git")) {
      it.disable_recursion_pending();
      continue;
    }
    TreeFile f;
    f.path = it->path().lexically_relative(root).generic_string();
    if (it->is_symlink()) {
      f.mode = "120000";
      f.data = fs::read_symlink(it->path()).string();
    } else if (it->is_regular_file()) {
      const fs::perms p = it->status().permissions();
      f.mode = (p & fs::perms::owner_exec) != fs::perms::none ? "100755" : "100644";
      if (!read_whole(it->path(), f.data)) continue;
    } else {
      continue;
    }
    files.push_back(std::move(f));
  }
  std::sort(files.begin(), files.end(),
            [](const TreeFile& x, const TreeFile& y) { return x.path < y.path; });
  return files;
}

// The comment that starts a line in this file's language, "" for a file the edits leave alone.
std::string comment_of(const std::string& path) {
  const std::string base = path.substr(path.rfind('/') + 1);
  const std::string ext = base.find('.') == std::string::npos ? "" : base.substr(base.rfind('.'));
  if (ext == ".c" || ext == ".h" || ext == ".cxx" || ext == ".hxx" || ext == ".cpp" ||
      ext == ".hpp") {
    return "//";
  }
  if (ext == ".cmake" || base == "CMakeLists.txt") return "#";
  if (ext == ".rst") return "..";
  return "";
}

// A path as fast-import reads it: C-quoted when it holds a quote, a backslash or a control byte.
std::string fi_path(const std::string& path) {
  bool plain = true;
  for (const char c : path) {
    plain = plain && c != '"' && c != '\\' && static_cast<unsigned char>(c) >= 0x20;
  }
  if (plain) return path;
  std::string q = "\"";
  for (const char c : path) {
    if (c == '"' || c == '\\') {
      q += '\\';
      q += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      char octal[8];
      std::snprintf(octal, sizeof octal, "\\%03o",
                    static_cast<unsigned>(static_cast<unsigned char>(c)));
      q += octal;
    } else {
      q += c;
    }
  }
  return q + "\"";
}

// One edit as a developer makes them: a comment line inserted somewhere, a comment added at the
// end of an existing line, or a line added at the end. Deterministic in `n`.
std::string edited(const std::string& text, const std::string& comment, unsigned n,
                   const std::string& what) {
  std::vector<std::size_t> starts = {0};
  for (std::size_t i = 0; i + 1 < text.size(); ++i) {
    if (text[i] == '\n') starts.push_back(i + 1);
  }
  const std::size_t line = (n * 2654435761u) % starts.size();
  const std::size_t at = starts[line];
  switch (n % 3) {
    case 0:
      return text.substr(0, at) + comment + " " + what + "\n" + text.substr(at);
    case 1: {
      const std::size_t end = text.find('\n', at);
      if (end == std::string::npos) break;
      return text.substr(0, end) + " " + comment + " " + what + text.substr(end);
    }
    default:
      break;
  }
  return text + (text.empty() || text.back() == '\n' ? "" : "\n") + comment + " " + what + "\n";
}

// The fast-import stream: commit 1 adds every file, commits 2..kCommits each edit one source file
// (cycling through them in a fixed shuffled order). `candidates` gets the files the edits may touch
// (indexes into `files`, in that order); `files` ends as the last commit holds it.
std::string fast_import_stream(std::vector<TreeFile>& files, std::vector<std::size_t>& candidates) {
  std::string s;
  long long mark = 0;
  auto blob = [&](const std::string& data) {
    s += "blob\nmark :" + std::to_string(++mark) + "\ndata " + std::to_string(data.size()) + "\n" +
         data + "\n";
    return mark;
  };
  for (std::size_t i = 0; i < files.size(); ++i) {
    const TreeFile& f = files[i];
    if (f.mode != "120000" && !comment_of(f.path).empty() && f.data.size() >= 200 &&
        f.data.size() <= (200u << 10) && f.data.find('\0') == std::string::npos) {
      candidates.push_back(i);
    }
  }
  // A fixed shuffle (a linear congruential generator), so every run builds the same history.
  std::uint64_t state = 20261202;
  for (std::size_t i = candidates.size(); i > 1; --i) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    std::swap(candidates[i - 1], candidates[(state >> 33) % i]);
  }
  for (int c = 0; c < kCommits; ++c) {
    std::vector<std::pair<std::size_t, long long>> changes;
    std::string msg;
    if (c == 0) {
      for (std::size_t i = 0; i < files.size(); ++i) changes.push_back({i, blob(files[i].data)});
      msg = "import the tree\n";
    } else {
      const std::size_t i = candidates[static_cast<std::size_t>(c) % candidates.size()];
      files[i].data = edited(files[i].data, comment_of(files[i].path), static_cast<unsigned>(c),
                             "change " + std::to_string(c));
      changes.push_back({i, blob(files[i].data)});
      msg = "change " + std::to_string(c) + ": " + files[i].path + "\n";
    }
    const std::string when = std::to_string(1700000000 + 3600LL * c) + " +0000";
    s += "commit refs/heads/main\nauthor Bench <bench@example.invalid> " + when +
         "\ncommitter Bench <bench@example.invalid> " + when + "\ndata " +
         std::to_string(msg.size()) + "\n" + msg;
    for (const auto& [i, m] : changes) {
      s += "M " + files[i].mode + " :" + std::to_string(m) + " " + fi_path(files[i].path) + "\n";
    }
    s += "\n";
  }
  return s;
}

}  // namespace

int main(int arg_count, char** arg_values) {
  const std::string bin = self_dir();
  std::string spacectl = bin + "/spacectl";
  std::string tree = bin + "/../../bench-src/tree";
  for (int i = 1; i < arg_count; ++i) {
    const std::string a = arg_values[i];
    if (a == "--tree" && i + 1 < arg_count) {
      tree = arg_values[++i];
    } else if (a == "--spacectl" && i + 1 < arg_count) {
      spacectl = arg_values[++i];
    } else {
      std::cerr << "usage: bench_code_in [--tree DIR] [--spacectl PATH]\n";
      return 2;
    }
  }
  std::error_code ec;
  if (!std::filesystem::is_directory(tree, ec)) {
    std::cerr
        << "bench_code_in: no source tree at " << tree
        << "; fetch it first (downloads Debian 12's cmake source package into build/bench-src):\n"
           "  tests/bench/code_in/fetch-tree\n";
    return 2;
  }
  std::vector<TreeFile> files = read_tree(tree);
  if (files.size() < kMinFiles) {
    std::cerr << "bench_code_in: " << tree << " holds " << files.size()
              << " files; the benchmark needs at least " << kMinFiles << "\n";
    return 2;
  }
  char tmpl[] = "/tmp/bench-code-in-XXXXXX";
  const std::string dir = mkdtemp(tmpl);
  const std::string repo = dir + "/project", state = dir + "/state";
  const std::string owner = "bench" + std::to_string(getpid());
  auto ctl = [&](std::vector<std::string> args) {
    std::vector<std::string> argv = {spacectl, "--owner", owner, "--state-dir", state};
    argv.insert(argv.end(), args.begin(), args.end());
    return run(argv);
  };
  std::cerr << "bench_code_in: building the repository from " << tree << " (" << files.size()
            << " files, " << kCommits << " commits)\n";
  std::vector<std::size_t> candidates;
  const std::string stream = fast_import_stream(files, candidates);
  if (candidates.size() < static_cast<std::size_t>(kUncommitted) + 1) {
    std::cerr << "bench_code_in: " << tree << " has too few source files to edit\n";
    return 2;
  }
  if (!must(run({"git", "init", "-q", "--initial-branch=main", repo}), "git init") ||
      !must(run({"git", "-C", repo, "fast-import", "--quiet"}, stream), "git fast-import") ||
      !must(run({"git", "-C", repo, "checkout", "-q", "-f", "main"}), "git checkout")) {
    return 1;
  }
  // Ten uncommitted edits, of the files the history touched longest ago.
  for (int k = 0; k < kUncommitted; ++k) {
    const TreeFile& f =
        files[candidates[static_cast<std::size_t>(kCommits + k) % candidates.size()]];
    std::ofstream out(repo + "/" + f.path, std::ios::binary | std::ios::trunc);
    out << edited(f.data, comment_of(f.path), static_cast<unsigned>(kCommits + k),
                  "uncommitted edit " + std::to_string(k));
  }
  const ProcessOutcome size = run({"git", "-C", repo, "count-objects", "-v"});
  std::cerr << "bench_code_in: the repository's objects:\n" << size.out;
  ProcessOutcome created = ctl({"--json", "space", "create", "--name", "bench", "--memory", "1g"});
  if (!must(created, "space create")) return 1;
  const std::size_t at = created.out.find("\"id\":\"");
  const std::string id = created.out.substr(at + 6, 12);
  ProcessOutcome names =
      run({"docker", "ps", "--filter", "label=spacectl.space.id=" + id, "--filter",
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
    const std::string url =
        "ext::docker exec -i --user 70000:70000 " + space_container + " git receive-pack " + plain;
    return must(run({"git", "-C", repo, "-c", "protocol.ext.allow=always", "push", "--quiet", url,
                     "main:refs/heads/pushed"}),
                "plain git push") &&
           must(ctl({"space", "exec", id, "--", "git", "-C", plain, "checkout", "-q", "pushed"}),
                "checkout inside");
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
  const double files_seconds = seconds_of([&] {
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
  std::printf(
      "| plain git push of the whole history over docker exec (ext::) + checkout | %.2f |\n",
      plain_push);
  std::printf("| one `docker exec` round trip (git --version inside, mean of 5) | %.2f |\n",
              exec_trip);
  std::printf("| `code files` (open, read every file's status, no snapshot written) | %.2f |\n",
              files_seconds);
  if (plain_push > 0) {
    std::printf("\nusable / plain = %.2f (goal ≤ 0.5); total / plain = %.2f (goal ≤ 1.1)\n",
                usable / plain_push, (usable + history) / plain_push);
  }
  return usable < 0 || history < 0 || plain_push < 0 ? 1 : 0;
}
