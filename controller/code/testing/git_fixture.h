// Test fixtures for code in: repositories built with the real `git` (the test's reference, never
// the code under test), a private HOME so no developer config leaks in, and the state helper.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "controller/code/repo_state.h"

namespace controller::code::testing {

// A temporary folder removed at destruction.
class TempTree {
 public:
  TempTree();
  ~TempTree();
  TempTree(const TempTree&) = delete;
  TempTree& operator=(const TempTree&) = delete;
  [[nodiscard]] const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// Runs git (argv only) in `dir`; fails the test on a non-zero exit. Returns stdout.
std::string git(const std::string& dir, const std::vector<std::string>& args, const std::string& stdin_bytes = {});
// Same, returning the exit status instead of failing.
int git_status(const std::string& dir, const std::vector<std::string>& args, std::string* out = nullptr);
void write_file(const std::string& path, const std::string& bytes, unsigned mode = 0644);
std::string read_file(const std::string& path);
// The pid a test's helper wrote to `path` (digits, a newline allowed); fails the test and returns
// -1 when the file holds anything else.
pid_t read_pid_file(const std::string& path);
// True while `pid` runs (a zombie counts as ended).
bool process_alive(pid_t pid);
// The 20 bytes of a 40-digit hex object id (a raw tree entry's id); fails the test and
// returns "" on anything else.
std::string raw_object_id(const std::string& hex);

// A fresh HOME (with .config/git/ignore naming secret-by-global-ignore.txt) for this process,
// and no GIT_* variable: set in SetUp of every code test.
void isolate_git_environment(const std::string& home);

// The bait project: history of three commits, committed run.sh (0755), an ignored .env holding
// kBait, node_modules/, a globally ignored file, a staged new file, staged and unstaged edits of
// one file, a deleted tracked file, an untracked file with a space, a Unicode name, a symlink and
// an untracked nested repository.
inline constexpr const char* kBait = "OPENAI_API_KEY=bait-secret-do-not-travel-7f3a";
void make_bait(const std::string& repo);

// Sorted `git ls-tree -r` lines "<mode> <type> <oid>\t<path>" of a tree-ish.
std::vector<std::string> tree_lines(const std::string& repo, const std::string& treeish);

// State helper with this repository's allowance.
Allowed allowed_for(const std::string& common_dir, const std::string& space_id);

}  // namespace controller::code::testing
