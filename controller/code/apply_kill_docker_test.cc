// spacectl killed with SIGKILL at each step of apply, on real Docker (label docker; skip without
// an engine, fail under CI=true). One space brings a change out once; then, step by step, an
// apply is stopped right after it names the step (SPACECTL_TEST_STOP_AT_STEP) and killed there.
// After each kill: every work-tree path holds what it held before or what the finished apply
// writes, .git changed only in this space's refs and new objects, every ref of the space is
// whole, the host record is untouched, apply-state names what was left, and the next apply
// finishes with exactly the finished apply's work tree.
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "controller/code/repo_state.h"
#include "controller/code/testing/git_fixture.h"
#include "controller/code/testing/live_code.h"
#include "controller/process.h"
#include "tests/support/environment.h"

namespace controller::code {
namespace {

using nlohmann::json;
using testing::git;
using testing::write_file;

std::string trim(std::string s) {
  while (!s.empty() && s.back() == '\n') s.pop_back();
  return s;
}

std::string slurp(const std::string& path) {
  std::ifstream in(path);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

// The shared code fixture (controller/code/testing/live_code.h): owner, state, HOME, the leftover
// check; five minutes for each spacectl run.
class ApplyKillDockerTest : public testing::LiveCodeTest {
 protected:
  ApplyKillDockerTest() : LiveCodeTest("applykill", std::chrono::minutes(5)) {}
  void SetUp() override {
    LiveCodeTest::SetUp();
    repo_ = dir_.path() + "/project";
  }

  // Runs spacectl told to stop itself right after the step line starting with `step`; once that
  // line is read (the process is stopped there), SIGKILL. False when spacectl ended first.
  bool kill_at(const std::vector<std::string>& args, const std::string& step, std::string& seen) {
    std::vector<std::string> argv = live_.base();
    argv.insert(argv.end(), args.begin(), args.end());
    const testing::KilledRun killed =
        testing::kill_at_marker(argv,
                                {"HOME=" + home_.path(), "PATH=" + std::string(std::getenv("PATH")),
                                 "SPACECTL_TEST_STOP_AT_STEP=" + step},
                                ": " + step);
    seen = killed.err;
    return killed.marker_seen && killed.killed;
  }

  // The work tree as the test found it at the start: the space's refs of earlier rounds gone,
  // the agent's paths back to the commit, the user's untracked notes kept.
  void reset() {
    for (const char* leaf : {"applied", "applied-from", "applied-head", "applying", "applying-from",
                             "applying-head", "applying-manifest", "changes-closed"}) {
      (void)testing::git_status(
          repo_, {"update-ref", "-d", "refs/openchamber/spaces/" + id_ + "/" + leaf});
    }
    git(repo_, {"checkout", "-q", "HEAD", "--", "README.md", "old.txt"});
    std::filesystem::remove_all(repo_ + "/src");
  }

  // Splits a state into the work tree (paths relative to the top) and .git.
  void split(const RepoState& all, RepoState& tree, RepoState& dot_git) const {
    tree.clear();
    dot_git.clear();
    for (const auto& [path, st] : all) {
      if (path == repo_ + "/.git" || path.rfind(repo_ + "/.git/", 0) == 0) {
        dot_git[path] = st;
      } else {
        tree[path] = st;
      }
    }
  }

  // Every ref of the space: 40 hex and a newline, naming an object the repository holds; no
  // lock file of a ref left.
  void expect_whole_refs(const std::string& where) {
    const std::string folder = repo_ + "/.git/refs/openchamber/spaces/" + id_;
    for (const auto& e : std::filesystem::directory_iterator(folder)) {
      const std::string name = e.path().filename();
      EXPECT_FALSE(name.ends_with(".lock"))
          << "a lock file left after a kill at " << where << ": " << name;
      if (name.ends_with(".lock")) continue;
      const std::string text = slurp(e.path());
      ASSERT_EQ(text.size(), 41u) << name << " torn after a kill at " << where << ": " << text;
      EXPECT_EQ(text.find_first_not_of("0123456789abcdef"), 40u) << name << ": " << text;
      EXPECT_EQ(testing::git_status(repo_, {"cat-file", "-e", text.substr(0, 40)}), 0)
          << name << " names no object";
    }
  }

  std::string repo_, id_;
};

TEST_F(ApplyKillDockerTest, AKillAtEachStepOfApplyLeavesTheRepositoryWholeAndTheNextApplyFinishes) {
  GK_REQUIRE(ready(),
             "needs a Docker engine and the pinned images (cmake --build <dir> --target images)");
  std::filesystem::create_directories(repo_);
  git(repo_, {"init", "-q", "-b", "main"});
  write_file(repo_ + "/README.md", "# project\n\nline two\n");
  write_file(repo_ + "/old.txt", "to be deleted\n");
  git(repo_, {"add", "."});
  git(repo_, {"-c", "user.name=T", "-c", "user.email=t@example.invalid", "commit", "-qm", "one"});
  write_file(repo_ + "/notes.txt", "the user's own notes\n");

  const ProcessOutcome created =
      spacectl({"space", "create", "--name", "applykill", "--memory", "512m", "--repo", repo_});
  ASSERT_EQ(created.exit_code, 0) << created.out << created.err;
  const json made = json::parse(created.out);
  id_ = made["id"];
  const std::string path = made["code"]["space_path"];
  // The agent: one edit, one deletion, two new files in a new folder (four writes).
  const ProcessOutcome worked = spacectl(
      {"space", "exec", id_, "--", "sh", "-c",
       "cd \"$1\" && printf '# project\\n\\nline two (agent)\\n' > README.md && rm old.txt && "
       "mkdir src && printf 'one\\n' > src/one.c && printf 'two\\n' > src/two.c",
       "sh", path});
  ASSERT_EQ(worked.exit_code, 0) << worked.out << worked.err;
  const ProcessOutcome out = spacectl({"code", "out", id_});
  ASSERT_EQ(out.exit_code, 0) << out.out << out.err;
  const std::string result =
      trim(git(repo_, {"rev-parse", "refs/openchamber/spaces/" + id_ + "/result"}));
  const std::string record_path = live_.state() + "/spaces/" + id_ + ".json";
  const std::string record = slurp(record_path);

  // What a finished apply leaves, taken from one apply that nobody interrupts.
  RepoState initial_tree, finished_tree, ignored;
  split(capture_state({repo_}), initial_tree, ignored);
  const ProcessOutcome whole = spacectl({"apply", id_, "--as-changes"});
  ASSERT_EQ(whole.exit_code, 0) << whole.out << whole.err;
  split(capture_state({repo_}), finished_tree, ignored);
  ASSERT_NE(initial_tree, finished_tree);

  Allowed allowed = testing::allowed_for(repo_ + "/.git", id_);
  allowed.space_refs = {"applied",       "applied-from",  "applied-head",      "applying",
                        "applying-from", "applying-head", "applying-manifest", "changes-closed"};
  allowed.ref_may_move = true;

  // Each step, what apply-state then reports of the interrupted apply, and what the next apply
  // says it recovered ("" for none).
  struct Step {
    std::string line, interrupted;
  };
  for (const Step& step :
       {Step{"checking ", ""}, Step{"keeping the new content", ""},
        Step{"recording the intent", ""}, Step{"writing 4 paths", "not_started"},
        Step{"wrote 1 of 4 paths", "cut_short"}, Step{"recording the apply", "finished"}}) {
    SCOPED_TRACE(step.line);
    reset();
    RepoState before_tree, before_git, after_tree, after_git;
    split(capture_state({repo_}), before_tree, before_git);
    ASSERT_EQ(before_tree, initial_tree);
    std::string seen;
    ASSERT_TRUE(kill_at({"apply", id_, "--as-changes"}, step.line, seen)) << seen;
    split(capture_state({repo_}), after_tree, after_git);
    for (const std::string& f : forbidden_changes(before_git, after_git, allowed)) {
      ADD_FAILURE() << f;
    }
    // Every work-tree path is old or new, never anything else (no temporary left, no half file).
    std::set<std::string> paths;
    for (const auto& [p, st] : before_tree) paths.insert(p);
    for (const auto& [p, st] : after_tree) paths.insert(p);
    for (const auto& [p, st] : finished_tree) paths.insert(p);
    for (const std::string& p : paths) {
      const auto now = after_tree.find(p), old = before_tree.find(p), fin = finished_tree.find(p);
      const bool same_as_old = (now == after_tree.end()) == (old == before_tree.end()) &&
                               (now == after_tree.end() || now->second == old->second);
      const bool same_as_new = (now == after_tree.end()) == (fin == finished_tree.end()) &&
                               (now == after_tree.end() || now->second == fin->second);
      EXPECT_TRUE(same_as_old || same_as_new)
          << p << " is neither what it was nor what the apply writes";
    }
    expect_whole_refs(step.line);
    EXPECT_EQ(slurp(record_path), record) << "the host record changed";

    // apply-state (read-only) names what was left; it changes nothing.
    const RepoState quiet = capture_state({repo_});
    const ProcessOutcome state = spacectl({"apply-state", id_});
    ASSERT_EQ(state.exit_code, 0) << state.out << state.err;
    const json doc = json::parse(state.out, nullptr, false);
    ASSERT_TRUE(doc.is_object()) << state.out;
    EXPECT_EQ(doc["changes_route"], "open");
    EXPECT_EQ(doc["interrupted_apply"],
              step.interrupted.empty() ? json(nullptr) : json(step.interrupted))
        << doc.dump();
    EXPECT_EQ(capture_state({repo_}), quiet) << "apply-state wrote";

    if (step.interrupted == "cut_short") {
      // The recovery itself killed: while writing what was left, then while recording it.
      ASSERT_TRUE(kill_at({"apply", id_, "--as-changes"}, "writing the 3 paths it left", seen))
          << seen;
      expect_whole_refs("writing the paths an interrupted apply left");
      EXPECT_EQ(
          json::parse(spacectl({"apply-state", id_}).out, nullptr, false)["interrupted_apply"],
          "cut_short");
      ASSERT_TRUE(kill_at({"apply", id_, "--as-changes"}, "recording the interrupted apply", seen))
          << seen;
      expect_whole_refs("recording an interrupted apply");
      EXPECT_EQ(
          json::parse(spacectl({"apply-state", id_}).out, nullptr, false)["interrupted_apply"],
          "finished");
    }

    // The next apply finishes: the work tree is exactly the finished apply's, the refs say so.
    const ProcessOutcome again = spacectl({"apply", id_, "--as-changes"});
    ASSERT_EQ(again.exit_code, 0) << again.out << again.err;
    const json applied = json::parse(again.out, nullptr, false);
    ASSERT_TRUE(applied.is_object()) << again.out;
    const std::string recovered = step.interrupted == "cut_short" ? "finished" : step.interrupted;
    EXPECT_EQ(applied["recovered"], recovered.empty() ? json(nullptr) : json(recovered))
        << applied.dump();
    EXPECT_EQ(applied["status"], recovered == "finished" ? "nothing_to_apply" : "applied")
        << applied.dump();
    split(capture_state({repo_}), after_tree, after_git);
    EXPECT_EQ(after_tree, finished_tree);
    EXPECT_EQ(trim(git(repo_, {"rev-parse", "refs/openchamber/spaces/" + id_ + "/applied"})),
              result);
    EXPECT_EQ(testing::git_status(repo_, {"rev-parse", "--verify", "-q",
                                          "refs/openchamber/spaces/" + id_ + "/applying"}),
              1);
    expect_whole_refs("after the next apply");
  }

  // As a branch: killed right before the one ref is made, nothing is there; the next one makes it.
  reset();
  const RepoState before = capture_state({repo_});
  std::string seen;
  ASSERT_TRUE(
      kill_at({"apply", id_, "--as-branch", "agent-work"}, "creating refs/heads/agent-work", seen))
      << seen;
  EXPECT_EQ(capture_state({repo_}), before);
  const ProcessOutcome branch = spacectl({"apply", id_, "--as-branch", "agent-work"});
  ASSERT_EQ(branch.exit_code, 0) << branch.out << branch.err;
  EXPECT_EQ(trim(git(repo_, {"rev-parse", "agent-work"})), result);

  const ProcessOutcome removed = spacectl({"space", "remove", id_});
  EXPECT_EQ(removed.exit_code, 0) << removed.out << removed.err;
}

}  // namespace
}  // namespace controller::code
