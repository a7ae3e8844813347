// The fixture of the apply tests: the user's repository made with git, its start ref made by
// code in's own snapshot, and the space's result a commit made in a clone of the start and
// fetched into the user's repository as refs/openchamber/spaces/<id>/result (what bring-out
// promotes). State helpers compare the whole repository around each step.
#pragma once

#include <sys/stat.h>
#include <unistd.h>

#include <functional>

#include <gtest/gtest.h>

#include "controller/code/apply.h"
#include "controller/code/snapshot.h"
#include "controller/code/testing/git_fixture.h"
#include "controller/process.h"

namespace controller::code::testing {

inline constexpr const char* kSpace = "0a1b2c3d4e5f";

inline std::string trim(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r')) s.pop_back();
  return s;
}

class ApplyTest : public ::testing::Test {
 protected:
  void SetUp() override {
    isolate_git_environment(home_.path());
    repo_ = dir_.path() + "/repo";
    space_ = dir_.path() + "/space";
    ASSERT_EQ(git_status("/", {"init", "-q", repo_}), 0);
    write_file(repo_ + "/a.txt", "one\ntwo\nthree\nfour\nfive\nsix\nseven\n");
    mkdir((repo_ + "/src").c_str(), 0755);
    write_file(repo_ + "/src/b.txt", "bee\n");
    write_file(repo_ + "/src/c.txt", "sea\n");
    write_file(repo_ + "/.gitignore", "*.log\n");
    git(repo_, {"add", "."});
    git(repo_, {"commit", "-qm", "first"});
  }

  // Code in's start ref, then a clone at the start where the "agent" works.
  void code_in() {
    Result<Snapshot> snap = take_snapshot(repo_, kSpace, Mode::kUncommitted);
    ASSERT_TRUE(snap) << snap.error().message;
    start_ = snap->start;
    ASSERT_EQ(git_status("/", {"clone", "-q", "--no-checkout", repo_, space_}), 0);
    git(space_, {"fetch", "-q", "--no-tags", repo_, start_ref_name(kSpace) + ":refs/heads/work"});
    git(space_, {"checkout", "-q", "work"});
  }

  // The agent's change, committed in the space and promoted as the result ref.
  std::string make_result(const std::function<void(const std::string&)>& change) {
    change(space_);
    git(space_, {"add", "-A"});
    git(space_, {"commit", "-qm", "agent work", "--allow-empty"});
    git(repo_, {"fetch", "-q", "--no-tags", "--no-write-fetch-head", space_, "+refs/heads/work:" + space_ref(kSpace, "result")});
    return trim(git(repo_, {"rev-parse", space_ref(kSpace, "result")}));
  }

  // What `git add -A` of the work tree would make, through a throw-away index.
  std::string work_tree_tree() {
    const std::string index = dir_.path() + "/probe-index";
    ::unlink(index.c_str());
    auto run = [&](std::vector<std::string> args) {
      ProcessRequest r;
      r.argv = {"env", "GIT_INDEX_FILE=" + index, "git", "-C", repo_};
      r.argv.insert(r.argv.end(), args.begin(), args.end());
      ProcessOutcome o = run_process(r);
      EXPECT_TRUE(o.succeeded()) << o.describe();
      return trim(o.out);
    };
    run({"add", "-A"});
    return run({"write-tree"});
  }
  std::string tree_of(const std::string& commit) { return trim(git(repo_, {"rev-parse", commit + "^{tree}"})); }

  RepoState state() { return capture_state({repo_}); }
  // `closed`: the refusal closes the route, so changes-closed may appear; nothing else may.
  void expect_only_marker(const RepoState& before, bool closed) {
    Allowed allowed;
    allowed.refs_dir = repo_ + "/.git/refs";
    allowed.space_id = kSpace;
    allowed.space_refs = closed ? std::vector<std::string>{"changes-closed"} : std::vector<std::string>{};
    for (const auto& f : forbidden_changes(before, state(), allowed)) ADD_FAILURE() << f;
    EXPECT_EQ(git_status(repo_, {"rev-parse", "--verify", "-q", space_ref(kSpace, "changes-closed")}) == 0, closed);
  }
  // After an apply: the work tree, the applied refs and new objects may change; index, HEAD and
  // every other ref may not.
  void expect_only_work_tree_and_memory(const RepoState& before) {
    Allowed allowed = allowed_for(repo_ + "/.git", kSpace);
    allowed.space_refs = {"applied", "applied-from", "applied-head"};
    for (const auto& f : forbidden_changes(before, state(), allowed))
      if (f.find(repo_ + "/.git/") != std::string::npos) ADD_FAILURE() << f;
  }

  Result<ChangesApplied> apply(ApplyLimits limits = {}) { return apply_as_changes(repo_, kSpace, limits); }

  TempTree home_, dir_;
  std::string repo_, space_, start_;
};

}  // namespace controller::code::testing
