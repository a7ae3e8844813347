#include "controller/code/testing/git_fixture.h"

#include <ftw.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <optional>
#include <sstream>
#include <string_view>

#include "controller/code/git2.h"
#include "controller/process.h"
#include "policy/number.h"

extern char** environ;

namespace controller::code::testing {
namespace {

int remove_entry(const char* path, const struct stat*, int, struct FTW*) { return ::remove(path); }

ProcessOutcome run_git(const std::string& dir, const std::vector<std::string>& args, const std::string& stdin_bytes) {
  ProcessRequest request;
  request.argv = {"git", "-C", dir};
  request.argv.insert(request.argv.end(), args.begin(), args.end());
  request.stdin_bytes = stdin_bytes;
  request.timeout = std::chrono::milliseconds(120000);
  request.output_cap = 256u << 20;
  return run_process(request);
}

}  // namespace

TempTree::TempTree() {
  std::string pattern = "/tmp/spacectl-code-test-XXXXXX";
  if (mkdtemp(pattern.data()) != nullptr) path_ = pattern;
}

TempTree::~TempTree() {
  if (!path_.empty()) nftw(path_.c_str(), remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}

std::string git(const std::string& dir, const std::vector<std::string>& args, const std::string& stdin_bytes) {
  const ProcessOutcome o = run_git(dir, args, stdin_bytes);
  std::string line;
  for (const auto& a : args) line += " " + a;
  EXPECT_TRUE(o.succeeded()) << "git -C " << dir << line << ": " << o.describe();
  return o.out;
}

int git_status(const std::string& dir, const std::vector<std::string>& args, std::string* out) {
  const ProcessOutcome o = run_git(dir, args, {});
  if (out != nullptr) *out = o.out;
  return o.exited ? o.exit_code : 128 + o.signal;
}

void write_file(const std::string& path, const std::string& bytes, unsigned mode) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << bytes;
  out.close();
  ASSERT_TRUE(out) << "write " << path;
  chmod(path.c_str(), mode);
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

pid_t read_pid_file(const std::string& path) {
  std::string text = read_file(path);
  if (!text.empty() && text.back() == '\n') text.pop_back();
  const std::optional<pid_t> pid = policy::parse_number<pid_t>(text);
  if (!pid || *pid <= 0) {
    ADD_FAILURE() << "pid file " << path << ": '" << text.substr(0, 32) << "' is not a pid";
    return -1;
  }
  return *pid;
}

bool process_alive(pid_t pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!std::getline(stat, line)) return false;
  const std::size_t close = line.rfind(')');
  return close != std::string::npos && close + 2 < line.size() && line[close + 2] != 'Z';
}

std::string raw_object_id(const std::string& hex) {
  std::string out;
  for (std::size_t i = 0; hex.size() == 40 && i < hex.size(); i += 2) {
    const std::optional<unsigned> byte =
        policy::parse_number<unsigned>(std::string_view(hex).substr(i, 2), 16);
    if (!byte) break;
    out += static_cast<char>(*byte);
  }
  if (out.size() != 20) {
    ADD_FAILURE() << "object id '" << hex.substr(0, 48) << "' is not 40 hex digits";
    return {};
  }
  return out;
}

void isolate_git_environment(const std::string& home) {
  std::vector<std::string> names;
  for (char** e = environ; *e != nullptr; ++e) {
    const std::string entry = *e;
    if (entry.rfind("GIT_", 0) == 0) names.push_back(entry.substr(0, entry.find('=')));
  }
  for (const auto& n : names) unsetenv(n.c_str());
  setenv("HOME", home.c_str(), 1);
  unsetenv("XDG_CONFIG_HOME");
  setenv("GIT_CONFIG_NOSYSTEM", "1", 1);  // for the reference git only; libgit2 never reads it
  mkdir((home + "/.config").c_str(), 0700);
  mkdir((home + "/.config/git").c_str(), 0700);
  write_file(home + "/.config/git/ignore", "secret-by-global-ignore.txt\n");
  // libgit2 finds the global and XDG config folders from HOME once; every test has its own HOME.
  git2_init();
  for (int level : {GIT_CONFIG_LEVEL_GLOBAL, GIT_CONFIG_LEVEL_XDG}) {
    git_libgit2_opts(GIT_OPT_SET_SEARCH_PATH, level, nullptr);
  }
  write_file(home + "/.gitconfig", "[user]\n\tname = Test User\n\temail = test@example.invalid\n[init]\n\tdefaultBranch = main\n");
}

void make_bait(const std::string& repo) {
  ASSERT_EQ(git_status("/", {"init", "-q", repo}), 0);
  write_file(repo + "/run.sh", "#!/bin/sh\necho run\n", 0755);
  write_file(repo + "/tracked-to-edit.txt", "one\ntwo\nthree\n");
  write_file(repo + "/to-delete.txt", "text only in objects\n");
  write_file(repo + "/.gitignore", ".env\nnode_modules/\n");
  git(repo, {"add", "."});
  git(repo, {"commit", "-qm", "first"});
  write_file(repo + "/second.txt", "2\n");
  git(repo, {"add", "second.txt"});
  git(repo, {"commit", "-qm", "second"});
  write_file(repo + "/third.txt", "3\n");
  git(repo, {"add", "third.txt"});
  git(repo, {"commit", "-qm", "third"});
  write_file(repo + "/.env", std::string(kBait) + "\n");
  mkdir((repo + "/node_modules").c_str(), 0755);
  write_file(repo + "/node_modules/dep.js", "module.exports = 1;\n");
  write_file(repo + "/secret-by-global-ignore.txt", "globally ignored\n");
  write_file(repo + "/staged-new.txt", "staged\n");
  git(repo, {"add", "staged-new.txt"});
  write_file(repo + "/tracked-to-edit.txt", "one (staged)\ntwo\nthree\n");
  git(repo, {"add", "tracked-to-edit.txt"});
  write_file(repo + "/tracked-to-edit.txt", "one (staged)\ntwo\nthree (unstaged)\n");
  ASSERT_EQ(unlink((repo + "/to-delete.txt").c_str()), 0);
  write_file(repo + "/untracked with space.txt", "space\n");
  write_file(repo + "/\xd1\x8e\xd0\xbd\xd1\x96\xd0\xba\xd0\xbe\xd0\xb4.txt", "unicode\n");
  ASSERT_EQ(symlink("run.sh", (repo + "/link-to-run").c_str()), 0);
  mkdir((repo + "/nested").c_str(), 0755);
  ASSERT_EQ(git_status(repo + "/nested", {"init", "-q"}), 0);
  write_file(repo + "/nested/inner.txt", "inner\n");
}

std::vector<std::string> tree_lines(const std::string& repo, const std::string& treeish) {
  std::string out = git(repo, {"ls-tree", "-r", "-z", treeish});
  std::vector<std::string> lines;
  std::size_t start = 0;
  for (std::size_t i = 0; i < out.size(); ++i) {
    if (out[i] == '\0') {
      lines.push_back(out.substr(start, i - start));
      start = i + 1;
    }
  }
  std::sort(lines.begin(), lines.end());
  return lines;
}

Allowed allowed_for(const std::string& common_dir, const std::string& space_id) {
  std::string c = common_dir;
  while (!c.empty() && c.back() == '/') c.pop_back();
  return Allowed{c + "/objects", c + "/refs", space_id};
}

}  // namespace controller::code::testing
