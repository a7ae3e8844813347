// The transfer over a stand-in for the place's exec: a script that runs the fixed command on
// this host, with /spaces/ mapped to a temporary folder, and that can instead refuse, flood
// stderr, hang with a grandchild, lie about its refs, or send slowly. The space's git here is
// the host's own git (the stand-in's "image").
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include <gtest/gtest.h>

#include "controller/code/repo_state.h"
#include "controller/code/transfer.h"
#include "controller/code/testing/git_fixture.h"
#include "controller/process.h"

namespace controller::code {
namespace {

using testing::git;
using testing::git_status;
using testing::write_file;

constexpr const char* kSpace = "0123456789ab";

// $1 root of /spaces, $2 behaviour, then the command. Only commands that run receive-pack change
// behaviour; the fixed scripts always run.
constexpr const char* kStandIn = R"SH(#!/bin/sh
root="$1"; mode="$2"; shift 2
n=$#
for a in "$@"; do
  case "$a" in /spaces/*) a="$root${a#/spaces}";; esac
  set -- "$@" "$a"
done
shift $n
printf '%s\n' "$*" >> "$root/calls.log"
pack=no
for a in "$@"; do [ "$a" = receive-pack ] && pack=yes; done
if [ "$mode" = nogit ] && [ "$1" = /usr/bin/git ]; then echo "exec: git: not found" >&2; exit 127; fi
if [ "$mode" = oldgit ] && [ "$1" = /usr/bin/git ]; then echo "git version 2.20.1"; exit 0; fi
if [ $pack = yes ]; then
  case "$mode" in
    refuse) echo "fatal: the space says no" >&2; exit 1;;
    flood) while :; do echo "flood flood flood flood flood flood flood flood flood flood flood flood" >&2; done;;
    hang) sleep 300 & echo $! > "$root/grandchild.pid"; echo $$ > "$root/child.pid"; wait; exit 0;;
    lie) z=0000000000000000000000000000000000000000
         printf '%04x%s' $((4 + 41 + 25 + 16)) "$z capabilities^{}" | head -c 4 >/dev/null
         line="$z refs/openchamber/base"
         printf '0000' >/dev/null
         printf '%04x%s\0report-status\n' $((4 + ${#line} + 15)) "$line"
         printf '0000'
         cat >/dev/null
         for r in "unpack ok" "ok refs/openchamber/base" "ok refs/openchamber/start-index" "ok refs/openchamber/start"; do
           printf '%04x%s\n' $((5 + ${#r})) "$r"
         done
         printf '0000'; exit 0;;
    slow) "$@" | while dd bs=1 count=1 status=none 2>/dev/null; do sleep 0.2; done; exit 0;;
    garbage) printf 'zzzz'; sleep 5; exit 0;;
  esac
fi
exec "$@"
)SH";

class TransferTest : public ::testing::Test {
 protected:
  void SetUp() override {
    testing::isolate_git_environment(home_.path());
    repo_ = dir_.path() + "/repo";
    testing::make_bait(repo_);
    root_ = dir_.path() + "/spaces";
    mkdir(root_.c_str(), 0755);
    mkdir((root_ + "/" + kSpace).c_str(), 0755);
    stand_in_ = dir_.path() + "/stand-in.sh";
    write_file(stand_in_, kStandIn, 0755);
  }

  SpaceExec exec(const std::string& mode) {
    SpaceExec e;
    e.argv_prefix = {"/bin/sh", stand_in_, root_, mode};
    e.image = "stand-in:" + mode;
    e.run = [this, mode](const std::vector<std::string>& argv, std::chrono::milliseconds timeout) -> Result<ExecOutput> {
      ProcessRequest r;
      r.argv = {"/bin/sh", stand_in_, root_, mode};
      r.argv.insert(r.argv.end(), argv.begin(), argv.end());
      r.timeout = timeout;
      const ProcessOutcome o = run_process(r);
      if (!o.exited) return fail(Code::kCommandFailed, "stand-in exec: " + o.describe());
      return ExecOutput{o.exit_code, o.out, o.err};
    };
    return e;
  }

  std::string inside() const { return root_ + "/" + kSpace + "/repo"; }

  static std::string status(const std::string& dir) {
    return git(dir, {"status", "--porcelain=v1", "--untracked-files=all", "--branch"});
  }

  // Runs code in with `mode` and checks the repository kept every byte except what is allowed.
  Result<CodeInResult> code_in(const std::string& mode, std::chrono::milliseconds timeout = std::chrono::milliseconds(60000)) {
    const RepoState before = capture_state({repo_});
    TransferOptions options;
    options.timeout = timeout;
    options.inner_margin_seconds = 2;
    Result<CodeInResult> r = bring_code_in(repo_, kSpace, Mode::kUncommitted, exec(mode), options);
    for (const auto& f : forbidden_changes(before, capture_state({repo_}),
                                           testing::allowed_for(repo_ + "/.git", kSpace))) {
      ADD_FAILURE() << f;
    }
    return r;
  }

  void expect_failed_cleanly(const Result<CodeInResult>& r, Code code) {
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().code, code) << r.error().message;
    EXPECT_NE(git_status(repo_, {"rev-parse", "--verify", "--quiet", start_ref_name(kSpace)}), 0) << "start ref left behind";
  }

  testing::TempTree home_, dir_;
  std::string repo_, root_, stand_in_;
};

TEST_F(TransferTest, SpaceEqualsTheHostLineForLine) {
  // The nested repository does not travel; without it both statuses must be equal.
  ASSERT_EQ(std::system(("rm -rf '" + repo_ + "/nested'").c_str()), 0);
  Result<CodeInResult> r = code_in("ok");
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->space_path, std::string("/spaces/") + kSpace + "/repo");
  EXPECT_EQ(status(inside()), status(repo_));
  EXPECT_EQ(git(inside(), {"rev-parse", "HEAD"}), git(repo_, {"rev-parse", "HEAD"}));
  EXPECT_EQ(git(inside(), {"config", "user.name"}), "Test User\n");
  EXPECT_EQ(git(inside(), {"config", "user.email"}), "test@example.invalid\n");
  EXPECT_EQ(git(inside(), {"rev-parse", "--is-shallow-repository"}), "true\n");
  struct stat st {};
  ASSERT_EQ(stat((inside() + "/run.sh").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0755u);
  EXPECT_NE(access((inside() + "/.env").c_str(), F_OK), 0);
  EXPECT_NE(access((inside() + "/node_modules").c_str(), F_OK), 0);
  // Only the base commit travelled, not its parents.
  EXPECT_EQ(git(inside(), {"rev-list", "--count", "HEAD"}), "1\n");

  const RepoState before = capture_state({repo_});
  TransferOptions options;
  Result<HistoryStatus> h = send_history(repo_, kSpace, r->space_path, r->snapshot.base, exec("ok"), options);
  ASSERT_TRUE(h) << h.error().message;
  EXPECT_EQ(*h, HistoryStatus::kSent);
  for (const auto& f : forbidden_changes(before, capture_state({repo_}),
                                         testing::allowed_for(repo_ + "/.git", kSpace))) {
    ADD_FAILURE() << f;
  }
  EXPECT_EQ(git(inside(), {"rev-parse", "--is-shallow-repository"}), "false\n");
  EXPECT_EQ(git(inside(), {"rev-list", "--count", "HEAD"}), git(repo_, {"rev-list", "--count", "HEAD"}));
  EXPECT_EQ(status(inside()), status(repo_));
  EXPECT_NE(access((root_ + "/" + kSpace + "/.openchamber-history.git").c_str(), F_OK), 0);
  Result<HistoryStatus> again = send_history(repo_, kSpace, r->space_path, r->snapshot.base, exec("ok"), options);
  ASSERT_TRUE(again) << again.error().message;
  EXPECT_EQ(*again, HistoryStatus::kAlreadyComplete);
}

// Each fixed command is an exec round trip to the place: the version probe and the look at the
// project path go at once, receive.shallowUpdate rides on receive-pack's command line instead of a
// `git config` of its own, and the identity is set while the pack travels.
TEST_F(TransferTest, CodeInRunsSevenFixedCommandsAndSetsOnlyTheIdentityInside) {
  ASSERT_EQ(std::system(("rm -rf '" + repo_ + "/nested'").c_str()), 0);
  std::atomic<int> runs{0};
  SpaceExec e = exec("ok");
  const auto counted = e.run;
  e.run = [&runs, counted](const std::vector<std::string>& argv,
                           std::chrono::milliseconds timeout) {
    ++runs;
    return counted(argv, timeout);
  };
  TransferOptions options;
  options.inner_margin_seconds = 2;
  Result<CodeInResult> r = bring_code_in(repo_, kSpace, Mode::kUncommitted, e, options);
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(status(inside()), status(repo_));
  // git --version, test -e/-L, init, user.name, user.email, read-tree -u, read-tree; the refs
  // are one `update-ref --stdin` (fed through the exec argv, like receive-pack).
  EXPECT_EQ(runs.load(), 7);
  EXPECT_NE(git_status(inside(), {"config", "--local", "receive.shallowUpdate"}), 0)
      << "set inside";
  EXPECT_EQ(git(inside(), {"config", "user.name"}), "Test User\n");
}

std::size_t count_of(const std::string& text, const std::string& word) {
  std::size_t n = 0;
  for (std::size_t at = text.find(word); at != std::string::npos; at = text.find(word, at + 1)) ++n;
  return n;
}

// One receive-pack session carries the base and the snapshot (each session is a round trip and
// an index-pack inside), and the unfold is two commands one after another (read-tree -u, then
// read-tree of the staged tree) with HEAD set beside them: no checkout, no reset. HEAD's reflog
// still carries the user's identity (set before HEAD moves).
TEST_F(TransferTest, CodeInSendsOnePackAndUnfoldsWithoutCheckoutOrReset) {
  ASSERT_EQ(std::system(("rm -rf '" + repo_ + "/nested'").c_str()), 0);
  Result<CodeInResult> r = code_in("ok");
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(status(inside()), status(repo_));
  const std::string calls = testing::read_file(root_ + "/calls.log");
  EXPECT_EQ(count_of(calls, " receive-pack "), 1u) << calls;
  EXPECT_EQ(count_of(calls, " checkout ") + count_of(calls, " reset "), 0u) << calls;
  EXPECT_EQ(git(inside(), {"rev-parse", "HEAD"}), git(repo_, {"rev-parse", "HEAD"}));
  EXPECT_EQ(git(inside(), {"symbolic-ref", "HEAD"}), git(repo_, {"symbolic-ref", "HEAD"}));
  EXPECT_EQ(git(inside(), {"log", "-g", "-1", "--format=%gn <%ge>", "HEAD"}),
            "Test User <test@example.invalid>\n");
  EXPECT_EQ(git(inside(), {"rev-list", "--count", "HEAD"}), "1\n");
  EXPECT_EQ(count_of(calls, " update-ref "), 1u) << calls;
  EXPECT_EQ(
      git(inside(), {"for-each-ref", "--format=%(objectname) %(refname)", "refs/openchamber/"}),
      r->snapshot.base + " refs/openchamber/base\n" + r->snapshot.start +
          " refs/openchamber/start\n" + r->snapshot.staged + " refs/openchamber/start-index\n");
  // The index is the host's staged state, not the work tree's.
  EXPECT_EQ(git(inside(), {"write-tree"}), git(repo_, {"write-tree"}));
}

// History goes straight into the space's own repository: one receive-pack session (whose
// advertisement says whether the space is still shallow) carrying only what the space lacks
// (no object of the base's tree again), then one fixed command drops the shallow mark. No side
// repository, no second pack or index inside.
TEST_F(TransferTest, HistoryIsOneSessionIntoTheSpacesRepositoryWithOnlyWhatItLacks) {
  ASSERT_EQ(std::system(("rm -rf '" + repo_ + "/nested'").c_str()), 0);
  Result<CodeInResult> r = code_in("ok");
  ASSERT_TRUE(r) << r.error().message;
  std::remove((root_ + "/calls.log").c_str());
  std::atomic<int> runs{0};
  SpaceExec e = exec("ok");
  const auto counted = e.run;
  e.run = [&runs, counted](const std::vector<std::string>& argv,
                           std::chrono::milliseconds timeout) {
    ++runs;
    return counted(argv, timeout);
  };
  std::string sent;
  TransferOptions options;
  options.progress = [&sent](const std::string& line) {
    if (line.rfind("sending history: ", 0) == 0) sent = line;
  };
  const RepoState before = capture_state({repo_});
  Result<HistoryStatus> h =
      send_history(repo_, kSpace, r->space_path, r->snapshot.base, e, options);
  ASSERT_TRUE(h) << h.error().message;
  EXPECT_EQ(*h, HistoryStatus::kSent);
  for (const auto& f : forbidden_changes(before, capture_state({repo_}),
                                         testing::allowed_for(repo_ + "/.git", kSpace))) {
    ADD_FAILURE() << f;
  }
  const std::string calls = testing::read_file(root_ + "/calls.log");
  EXPECT_EQ(count_of(calls, " receive-pack "), 1u) << calls;
  EXPECT_EQ(runs.load(), 1) << calls;
  // What the space lacked: objects of the base's parents' history not in the base's tree.
  std::set<std::string> in_base;
  std::istringstream base_objects(
      git(repo_, {"rev-list", "--objects", "--no-walk", r->snapshot.base}));
  for (std::string line; std::getline(base_objects, line);) in_base.insert(line.substr(0, 40));
  std::size_t lacked = 0;
  std::istringstream older(git(repo_, {"rev-list", "--objects", r->snapshot.base + "^@"}));
  for (std::string line; std::getline(older, line);) {
    lacked += in_base.count(line.substr(0, 40)) == 0 ? 1 : 0;
  }
  ASSERT_GT(lacked, 0u);
  EXPECT_EQ(sent, "sending history: " + std::to_string(lacked) + " objects");
  EXPECT_EQ(git(inside(), {"rev-parse", "--is-shallow-repository"}), "false\n");
  EXPECT_EQ(git(inside(), {"rev-list", "--count", "HEAD"}),
            git(repo_, {"rev-list", "--count", "HEAD"}));
  EXPECT_EQ(git_status(inside(), {"fsck", "--no-dangling", "--no-progress"}), 0);
  EXPECT_EQ(status(inside()), status(repo_));
}

// The snapshot's pack is our own writer's: every object whole (no delta search), 200
// near-identical files included, in a pack the space's receive-pack keeps and checks, and the
// user's repository is not touched (the state comparison of code_in()).
TEST_F(TransferTest, TheSnapshotPackHoldsEveryObjectWholeAndTheSpaceKeepsIt) {
  ASSERT_EQ(std::system(("rm -rf '" + repo_ + "/nested'").c_str()), 0);
  std::string text;
  for (int line = 0; line < 200; ++line) {
    text += "the same line of text, number " + std::to_string(line) + "\n";
  }
  ASSERT_EQ(mkdir((repo_ + "/alike").c_str(), 0755), 0);
  for (int f = 0; f < 200; ++f) {
    write_file(repo_ + "/alike/f" + std::to_string(f) + ".txt", text + std::to_string(f) + "\n");
  }
  git(repo_, {"add", "alike"});
  git(repo_, {"commit", "-qm", "alike"});
  Result<CodeInResult> r = code_in("ok");
  ASSERT_TRUE(r) << r.error().message;
  std::vector<std::string> indexes;
  for (const auto& e : std::filesystem::directory_iterator(inside() + "/.git/objects/pack")) {
    if (e.path().extension() == ".idx") indexes.push_back(e.path().string());
  }
  ASSERT_EQ(indexes.size(), 1u) << "the space's receive-pack did not keep one pack";
  const std::string listing = git(inside(), {"verify-pack", "-v", indexes[0]});
  EXPECT_NE(listing.find("non delta: "), std::string::npos) << listing;
  EXPECT_EQ(listing.find("chain length"), std::string::npos) << listing;
  EXPECT_EQ(git_status(inside(), {"fsck", "--no-dangling", "--no-progress"}), 0);
  EXPECT_EQ(status(inside()), status(repo_));
  EXPECT_EQ(git(inside(), {"rev-parse", "HEAD:alike/f199.txt"}),
            git(repo_, {"rev-parse", "HEAD:alike/f199.txt"}));
}

// A space whose repository is shallow somewhere code in did not make it shallow: history refuses
// (dropping the mark would leave commits without their parents) and changes nothing.
TEST_F(TransferTest, HistoryRefusesARepositoryShallowElsewhere) {
  ASSERT_EQ(std::system(("rm -rf '" + repo_ + "/nested'").c_str()), 0);
  Result<CodeInResult> r = code_in("ok");
  ASSERT_TRUE(r) << r.error().message;
  const std::string shallow_file = inside() + "/.git/shallow";
  const std::string first = git(repo_, {"rev-list", "--max-parents=0", "HEAD"});
  write_file(shallow_file, testing::read_file(shallow_file) + first);
  TransferOptions options;
  Result<HistoryStatus> h =
      send_history(repo_, kSpace, r->space_path, r->snapshot.base, exec("ok"), options);
  ASSERT_FALSE(h);
  EXPECT_EQ(h.error().code, Code::kHistoryTransferFailed);
  EXPECT_NE(h.error().message.find("not only at the base"), std::string::npos) << h.error().message;
  EXPECT_EQ(testing::read_file(shallow_file), r->snapshot.base + "\n" + first);
}

TEST_F(TransferTest, DetachedHeadStaysDetached) {
  ASSERT_EQ(std::system(("rm -rf '" + repo_ + "/nested'").c_str()), 0);
  git(repo_, {"checkout", "-q", "--detach"});
  Result<CodeInResult> r = code_in("ok");
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_NE(git_status(inside(), {"symbolic-ref", "-q", "HEAD"}), 0);
  EXPECT_EQ(status(inside()), status(repo_));
  EXPECT_EQ(git(inside(), {"for-each-ref", "refs/heads"}), "") << "a detached HEAD made a branch inside";
}

TEST_F(TransferTest, CleanModeBringsHeadOnly) {
  TransferOptions options;
  Result<CodeInResult> r = bring_code_in(repo_, kSpace, Mode::kClean, exec("ok"), options);
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(git(inside(), {"status", "--porcelain"}), "");
  EXPECT_EQ(git(inside(), {"rev-parse", "HEAD"}), git(repo_, {"rev-parse", "HEAD"}));
  // The index and the work tree are one tree: one read-tree writes both.
  const std::string calls = testing::read_file(root_ + "/calls.log");
  EXPECT_EQ(count_of(calls, " read-tree "), 1u) << calls;
  EXPECT_EQ(git(inside(), {"write-tree"}), git(repo_, {"rev-parse", "HEAD^{tree}"}));
}

TEST_F(TransferTest, ProjectPathInUseIsRefused) {
  mkdir(inside().c_str(), 0755);
  expect_failed_cleanly(code_in("ok"), Code::kSpacePathInUse);
}

TEST_F(TransferTest, ImageWithoutGitIsRefusedBeforeAnythingMoves) {
  Result<CodeInResult> r = code_in("nogit");
  expect_failed_cleanly(r, Code::kSpaceGitUnusable);
  EXPECT_NE(r.error().message.find("stand-in:nogit"), std::string::npos) << r.error().message;
  EXPECT_NE(access(inside().c_str(), F_OK), 0);
}

// The looks at the space go while the snapshot is taken; a refusal of the repository still
// comes first, and nothing inside is created.
TEST_F(TransferTest, ARepositoryRefusalComesBeforeTheSpacesOwn) {
  const std::string empty = dir_.path() + "/empty";
  ASSERT_EQ(git_status("/", {"init", "-q", empty}), 0);
  write_file(empty + "/a.txt", "a\n");
  TransferOptions options;
  Result<CodeInResult> r = bring_code_in(empty, kSpace, Mode::kUncommitted, exec("nogit"), options);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, Code::kRepositoryHasNoCommit) << r.error().message;
  EXPECT_NE(access((root_ + "/" + kSpace + "/empty").c_str(), F_OK), 0);
}

TEST_F(TransferTest, ImageWithOldGitIsRefusedNamingTheVersion) {
  Result<CodeInResult> r = code_in("oldgit");
  expect_failed_cleanly(r, Code::kSpaceGitUnusable);
  EXPECT_NE(r.error().message.find("2.20.1"), std::string::npos) << r.error().message;
  EXPECT_NE(access(inside().c_str(), F_OK), 0);
}

TEST_F(TransferTest, RefusingReceiver) {
  Result<CodeInResult> r = code_in("refuse");
  expect_failed_cleanly(r, Code::kCodeTransferFailed);
  EXPECT_NE(r.error().message.find("the space says no"), std::string::npos) << r.error().message;
}

TEST_F(TransferTest, FloodingReceiverIsKilledAtTheCap) {
  const auto t0 = std::chrono::steady_clock::now();
  Result<CodeInResult> r = code_in("flood");
  expect_failed_cleanly(r, Code::kCodeTransferFailed);
  EXPECT_NE(r.error().message.find("more than"), std::string::npos) << r.error().message;
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(30));
}

TEST_F(TransferTest, HangingReceiverAndItsGrandchildDieAtTheDeadline) {
  const auto t0 = std::chrono::steady_clock::now();
  Result<CodeInResult> r = code_in("hang", std::chrono::milliseconds(2000));
  const auto took = std::chrono::steady_clock::now() - t0;
  expect_failed_cleanly(r, Code::kCodeTransferFailed);
  EXPECT_NE(r.error().message.find("timed out"), std::string::npos) << r.error().message;
  EXPECT_LT(took, std::chrono::seconds(20));
  const pid_t child = testing::read_pid_file(root_ + "/child.pid");
  const pid_t grandchild = testing::read_pid_file(root_ + "/grandchild.pid");
  ASSERT_GT(child, 0);
  ASSERT_GT(grandchild, 0);
  usleep(200000);
  EXPECT_FALSE(testing::process_alive(child)) << "receiver " << child << " survived";
  EXPECT_FALSE(testing::process_alive(grandchild)) << "grandchild " << grandchild << " survived";
}

TEST_F(TransferTest, SlowReceiverIsCutAtTheDeadline) {
  const auto t0 = std::chrono::steady_clock::now();
  Result<CodeInResult> r = code_in("slow", std::chrono::milliseconds(2000));
  expect_failed_cleanly(r, Code::kCodeTransferFailed);
  EXPECT_NE(r.error().message.find("timed out"), std::string::npos) << r.error().message;
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(20));
}

TEST_F(TransferTest, ReceiverLyingAboutItsRefsAndItsReportFailsAtTheUnfold) {
  Result<CodeInResult> r = code_in("lie");
  expect_failed_cleanly(r, Code::kCodeUnfoldFailed);
}

TEST_F(TransferTest, MalformedPacketIsRefused) {
  Result<CodeInResult> r = code_in("garbage");
  expect_failed_cleanly(r, Code::kCodeTransferFailed);
  EXPECT_NE(r.error().message.find("malformed"), std::string::npos) << r.error().message;
}

TEST(GitVersionTest, ParsesGitsOwnLinesAndRefusesOthers) {
  int major = 0, minor = 0;
  EXPECT_TRUE(parse_git_version("git version 2.39.5\n", major, minor));
  EXPECT_EQ(major, 2);
  EXPECT_EQ(minor, 39);
  EXPECT_TRUE(parse_git_version("git version 2.50.1 (Apple Git-155)\n", major, minor));
  EXPECT_TRUE(parse_git_version("git version 2.54.0.windows.1\n", major, minor));
  EXPECT_FALSE(parse_git_version("", major, minor));
  EXPECT_FALSE(parse_git_version("git version two\n", major, minor));
  EXPECT_FALSE(parse_git_version("sh: git: not found\n", major, minor));
}

}  // namespace
}  // namespace controller::code
