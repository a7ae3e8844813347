// Code out over the stand-in for the place's exec: the result commit inside, the quarantine
// fetch, promote, and the transport's failures. Hostile results are in out_hostile_test.cc.
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <fstream>

#include "controller/code/out_steps.h"
#include "controller/code/testing/out_fixture.h"

namespace controller::code {
namespace {

using testing::git;
using testing::git_status;
using testing::kOutSpace;
using testing::write_file;

class CodeOutTest : public testing::OutTest {};

std::string status_of(const std::string& dir) { return git(dir, {"status", "--porcelain=v1", "--untracked-files=all", "--branch"}); }

TEST_F(CodeOutTest, BringsOutCommitsEditsAndUntrackedFiles) {
  write_file(inside_ + "/committed.txt", "made by the agent\n");
  git(inside_, {"add", "committed.txt"});
  git(inside_, {"commit", "-q", "-m", "agent commit"});
  const std::string agent_head = git(inside_, {"rev-parse", "HEAD"}).substr(0, 40);
  write_file(inside_ + "/run.sh", "#!/bin/sh\necho changed\n", 0755);
  write_file(inside_ + "/tool.sh", "#!/bin/sh\n", 0755);
  write_file(inside_ + "/untracked in the space.txt", "new\n");
  const std::string inside_before = status_of(inside_);

  Result<BringOut> r = out();
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_TRUE(r->made_commit);
  EXPECT_EQ(r->space_head, agent_head);
  EXPECT_EQ(r->start_commit, start_);
  EXPECT_EQ(user_result(), r->result_commit);
  EXPECT_EQ(git(repo_, {"rev-parse", r->result_commit + "^"}).substr(0, 40), agent_head);
  EXPECT_EQ(git(repo_, {"log", "-1", "--format=%an <%ae>%n%s", r->result_commit}),
            "OpenChamber <spaces@openchamber.invalid>\nopenchamber: uncommitted changes from the space\n");
  EXPECT_EQ(git(repo_, {"diff", "--name-only", start_, r->result_commit}), "committed.txt\nrun.sh\ntool.sh\nuntracked in the space.txt\n");
  ASSERT_EQ(r->changed.size(), 4u);
  EXPECT_EQ(r->changed[0].path, "committed.txt");
  EXPECT_EQ(r->changed[0].kind, ChangeKind::kAdded);
  EXPECT_EQ(r->changed[1].kind, ChangeKind::kModified);
  EXPECT_EQ(r->changed[2].new_mode, 0100755u);
  EXPECT_EQ(r->changed[1].new_bytes, 23u);
  EXPECT_GT(r->new_objects, 0u);
  EXPECT_EQ(git(repo_, {"ls-tree", r->result_commit, "tool.sh"}).substr(0, 6), "100755");
  // The agent's work tree, index and branch are as they were; its ref keeps the result alive.
  EXPECT_EQ(status_of(inside_), inside_before);
  EXPECT_EQ(git(inside_, {"rev-parse", "HEAD"}).substr(0, 40), agent_head);
  EXPECT_EQ(git(inside_, {"rev-parse", "refs/openchamber/result"}).substr(0, 40), r->result_commit);
  EXPECT_EQ(git(repo_, {"fsck", "--no-dangling", "--connectivity-only"}), "");
}

TEST_F(CodeOutTest, PromoteCopiesTheQuarantinesPackOnlyWhenItHoldsNothingUnchecked) {
  write_file(inside_ + "/work.txt", "work\n");
  std::vector<std::string> said;
  OutOptions o = options();
  o.progress = [&said](const std::string& line) { said.push_back(line); };
  Result<BringOut> r = out("ok", o);
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_NE(said.back().find("(the quarantine's pack)"), std::string::npos) << said.back();
  // The space's pack-objects sends an object nothing in the result names: it never reaches the
  // user's repository; the checked objects are packed anew instead.
  const std::string junk = git(inside_, {"hash-object", "-w", "--stdin"}, "sent along, named by nothing\n").substr(0, 40);
  write_file(root_ + "/junk-hook.sh", "#!/bin/sh\n{ echo " + junk + "; cat; } | \"$@\"\n", 0755);
  write_file(inside_ + "/work.txt", "more work\n");
  said.clear();
  Result<BringOut> again = out("junk", o);
  ASSERT_TRUE(again) << again.error().message;
  EXPECT_NE(said.back().find("(a pack of the checked objects)"), std::string::npos) << said.back();
  EXPECT_NE(git_status(repo_, {"cat-file", "-e", junk}), 0) << "the unchecked object reached the user's repository";
  EXPECT_EQ(git(repo_, {"show", again->result_commit + ":work.txt"}), "more work\n");
  EXPECT_EQ(git(repo_, {"fsck", "--no-dangling", "--connectivity-only"}), "");
}

// An edit of the same size made in the same second as the agent's last index write: git finds it
// only because the index is "racily clean" (its entries as new as the index file). Code out's
// private index must keep the index file's mtime, or the edit reads as clean and is left out.
TEST_F(CodeOutTest, ASameSecondSameSizeEditAfterACommitComesOut) {
  bool same_second = false;
  for (int attempt = 0; attempt < 20 && !same_second; ++attempt) {
    write_file(inside_ + "/main.c", "int main(void) { return " + std::to_string(attempt % 10) + "; }\n");
    git(inside_, {"add", "main.c"});
    git(inside_, {"commit", "-q", "-m", "agent commit", "--allow-empty"});
    write_file(inside_ + "/main.c", "int main(void) { return X; }\n");
    struct stat file {}, index {};
    same_second = stat((inside_ + "/main.c").c_str(), &file) == 0 &&
                  stat((inside_ + "/.git/index").c_str(), &index) == 0 &&
                  file.st_ctim.tv_sec == index.st_mtim.tv_sec &&
                  file.st_mtim.tv_sec == index.st_mtim.tv_sec;
  }
  ASSERT_TRUE(same_second) << "the commit and the edit never fell in one second";
  sleep(1);  // code out runs a second later: a copied index would be newer than every entry
  Result<BringOut> r = out();
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(git(repo_, {"show", r->result_commit + ":main.c"}), "int main(void) { return X; }\n");
}

TEST_F(CodeOutTest, UnchangedTreeTakesHead) {
  git(inside_, {"add", "--all"});
  git(inside_, {"commit", "-q", "-m", "everything"});
  const std::string head = git(inside_, {"rev-parse", "HEAD"}).substr(0, 40);
  Result<BringOut> r = out();
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_FALSE(r->made_commit);
  EXPECT_EQ(r->result_commit, head);
  EXPECT_EQ(user_result(), head);
  EXPECT_TRUE(r->changed.empty()) << r->changed.front().path;
}

TEST_F(CodeOutTest, SecondBringOutMovesTheRefAndARefusalKeepsTheLastGoodOne) {
  write_file(inside_ + "/one.txt", "1\n");
  Result<BringOut> first = out();
  ASSERT_TRUE(first) << first.error().message;
  write_file(inside_ + "/two.txt", "2\n");
  Result<BringOut> second = out();
  ASSERT_TRUE(second) << second.error().message;
  EXPECT_NE(second->result_commit, first->result_commit);
  EXPECT_EQ(user_result(), second->result_commit);
  EXPECT_EQ(second->changed.size(), 2u);
  Result<BringOut> refused = out("refuse");
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().code, Code::kCodeOutFailed) << refused.error().message;
  EXPECT_EQ(user_result(), second->result_commit);
}

TEST_F(CodeOutTest, ReportsUnmergedPathsAndNestedRepositories) {
  git(inside_, {"checkout", "-q", "-b", "side"});
  write_file(inside_ + "/second.txt", "side\n");
  git(inside_, {"commit", "-q", "-am", "side"});
  git(inside_, {"checkout", "-q", "-"});
  write_file(inside_ + "/second.txt", "main\n");
  git(inside_, {"commit", "-q", "-am", "main"});
  EXPECT_NE(git_status(inside_, {"merge", "-q", "side"}), 0);
  mkdir((inside_ + "/inner").c_str(), 0755);
  git(inside_ + "/inner", {"init", "-q"});
  write_file(inside_ + "/inner/f", "x\n");
  git(inside_ + "/inner", {"add", "f"});
  git(inside_ + "/inner", {"-c", "user.name=a", "-c", "user.email=a@b.invalid", "commit", "-q", "-m", "inner"});
  Result<BringOut> r = out();
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->unmerged, std::vector<std::string>{"second.txt"});
  EXPECT_EQ(r->nested_repositories, std::vector<std::string>{"inner"});
}

TEST_F(CodeOutTest, ResultRefMovedBetweenSnapshotAndFetchStillBringsTheReportedCommit) {
  write_file(inside_ + "/work.txt", "the real work\n");
  // The stand-in's upload-pack moves refs/openchamber/result to another commit first.
  const std::string other = git(inside_, {"commit-tree", git(inside_, {"rev-parse", "HEAD^{tree}"}).substr(0, 40), "-m", "decoy"}).substr(0, 40);
  write_file(root_ + "/move-to", other);
  Result<BringOut> r = out("move");
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_NE(r->result_commit, other);
  EXPECT_EQ(user_result(), r->result_commit);
  EXPECT_EQ(git(inside_, {"rev-parse", "refs/openchamber/result"}).substr(0, 40), other) << "the stand-in did not move the ref";
  EXPECT_EQ(git(repo_, {"show", r->result_commit + ":work.txt"}), "the real work\n");
  EXPECT_NE(git_status(repo_, {"cat-file", "-e", other}), 0) << "the decoy reached the user's repository";
}

TEST_F(CodeOutTest, HookCannotWriteIntoTheReport) {
  // The space's own config points at hooks that print a planted id to their parent's stdout
  // and leave a mark; every command of the snapshot runs with hooks off.
  const std::string planted = git(inside_, {"rev-parse", "HEAD"}).substr(0, 40);
  mkdir((inside_ + "/.planted-hooks").c_str(), 0755);
  const std::string hook = "#!/bin/sh\necho " + planted + " > /proc/$PPID/fd/1\necho ran >> " + dir_.path() + "/hook-ran\n";
  for (const char* name :
       {"reference-transaction", "post-commit", "post-index-change", "pre-commit"}) {
    write_file(inside_ + "/.planted-hooks/" + name, hook, 0755);
  }
  git(inside_, {"config", "core.hooksPath", inside_ + "/.planted-hooks"});
  write_file(inside_ + "/work.txt", "work\n");
  Result<BringOut> r = out();
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_NE(r->result_commit, planted);
  EXPECT_EQ(user_result(), r->result_commit);
  EXPECT_NE(access((dir_.path() + "/hook-ran").c_str(), F_OK), 0) << "a space hook ran during the snapshot";
  // Control: the same hook does run when the space's git is not told otherwise.
  git(inside_, {"update-ref", "refs/x", "HEAD"});
  EXPECT_EQ(access((dir_.path() + "/hook-ran").c_str(), F_OK), 0);
}

TEST_F(CodeOutTest, SpaceStartMissingIsRefusedBeforeTheSpaceIsAsked) {
  git(repo_, {"update-ref", "-d", start_ref_name(kOutSpace)});
  std::remove((root_ + "/commands.log").c_str());
  Result<BringOut> r = out();
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, Code::kSpaceStartMissing) << r.error().message;
  EXPECT_NE(access((root_ + "/commands.log").c_str(), F_OK), 0) << "the space was asked";
}

TEST_F(CodeOutTest, InvalidArgumentsAreRefused) {
  OutOptions o = options();
  EXPECT_EQ(bring_code_out(repo_, "nothex", space_path_, exec("ok"), o).error().code, Code::kInvalidArgument);
  EXPECT_EQ(bring_code_out(repo_, kOutSpace, "/spaces/0123456789ab/../x", exec("ok"), o).error().code, Code::kInvalidArgument);
  o.limits.max_entries = 0;
  EXPECT_EQ(bring_code_out(repo_, kOutSpace, space_path_, exec("ok"), o).error().code, Code::kInvalidArgument);
  o = options();
  o.work_dir = "relative";
  EXPECT_EQ(bring_code_out(repo_, kOutSpace, space_path_, exec("ok"), o).error().code, Code::kInvalidArgument);
}

TEST_F(CodeOutTest, HangingUploadPackAndItsGrandchildDieAtTheDeadline) {
  write_file(inside_ + "/work.txt", "work\n");
  OutOptions o = options();
  o.timeout = std::chrono::milliseconds(2000);
  const auto t0 = std::chrono::steady_clock::now();
  Result<BringOut> r = out("hang", o);
  const auto took = std::chrono::steady_clock::now() - t0;
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, Code::kCodeOutFailed);
  EXPECT_NE(r.error().message.find("timed out"), std::string::npos) << r.error().message;
  EXPECT_LT(took, std::chrono::seconds(20));
  usleep(200000);
  const pid_t child = testing::read_pid_file(root_ + "/child.pid");
  const pid_t grandchild = testing::read_pid_file(root_ + "/grandchild.pid");
  ASSERT_GT(child, 0);
  ASSERT_GT(grandchild, 0);
  EXPECT_FALSE(testing::process_alive(child)) << "receiver " << child << " survived";
  EXPECT_FALSE(testing::process_alive(grandchild)) << "grandchild " << grandchild << " survived";
  EXPECT_EQ(user_result(), "");
}

TEST_F(CodeOutTest, GarbageFromUploadPackIsRefused) {
  write_file(inside_ + "/work.txt", "work\n");
  Result<BringOut> r = out("garbage");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, Code::kCodeOutFailed);
  EXPECT_NE(r.error().message.find("malformed"), std::string::npos) << r.error().message;
}

TEST_F(CodeOutTest, DeadOwnersQuarantinesAreSweptLiveOnesKept) {
  const pid_t child = fork();
  if (child == 0) _exit(0);
  waitpid(child, nullptr, 0);
  mkdir((state_ + "/quarantine").c_str(), 0700);
  const std::string dead = state_ + "/quarantine/" + kOutSpace + "-" + std::to_string(child) + "-0123abcd.git";
  const std::string live = state_ + "/quarantine/" + kOutSpace + "-" + std::to_string(getppid()) + "-0123abcd.git";
  for (const std::string& d : {dead, live}) {
    mkdir(d.c_str(), 0700);
    write_file(d + "/tmp_pack_x", std::string(4096, 'p'));
  }
  const std::vector<std::string> removed = sweep_quarantines(state_);
  ASSERT_EQ(removed.size(), 1u);
  EXPECT_NE(access(dead.c_str(), F_OK), 0);
  EXPECT_EQ(access(live.c_str(), F_OK), 0);
}

TEST(CodeOutParseTest, ObjectLineIsExactlyOneIdAndANewline) {
  std::string id;
  EXPECT_TRUE(parse_object_line(std::string(40, 'a') + "\n", id));
  EXPECT_EQ(id, std::string(40, 'a'));
  for (const std::string& bad :
       {std::string(40, 'a'), std::string(40, 'a') + "\n\n", std::string(40, 'A') + "\n",
        std::string(39, 'a') + "\n", std::string(41, 'a') + "\n", "x" + std::string(39, 'a') + "\n",
        std::string(40, 'a') + "\r", std::string()}) {
    EXPECT_FALSE(parse_object_line(bad, id)) << bad;
  }
}

TEST(CodeOutParseTest, UnmergedEntriesAreParsedStrictly) {
  const std::string id(40, 'b');
  const std::string text = "100644 " + id + " 1\tsame" + std::string(1, '\0') + "100644 " + id + " 2\tsame" + std::string(1, '\0') +
                           "100644 " + id + " 3\tother name" + std::string(1, '\0') + "garbage\tx" + std::string(1, '\0') + "100644 " + id +
                           " 4\tbad-stage" + std::string(1, '\0') + "100644 " + id + " 1\tcut-at-the-cap";
  EXPECT_EQ(parse_unmerged(text), (std::vector<std::string>{"same", "other name"}));
  EXPECT_TRUE(parse_unmerged("").empty());
}

}  // namespace
}  // namespace controller::code

namespace controller::code {
namespace {

// The clean-up after a failed fetch reads pids out of what the space answered: digits only,
// never init, and only whole /proc/<pid>/environ names from grep.
TEST(CodeOutCleanupTest, PidsComeOnlyFromWellFormedProcNames) {
  EXPECT_EQ(proc_pids("1\n12\nself\n0\n007\n4294967295\n12345678901\n7;kill\n\nacpi\n99\n"),
            (std::vector<std::string>{"12", "4294967295", "99"}));
  EXPECT_EQ(tagged_pids("/proc/12/environ\n/proc/1/environ\n/proc/self/environ\n/proc/12/environ/"
                        "x\nproc/3/environ\n"
                        "/proc/4/environ\n/proc//environ\n/proc/5/6/environ\n"),
            (std::vector<std::string>{"12", "4"}));
  EXPECT_TRUE(tagged_pids("").empty());
}

}  // namespace
}  // namespace controller::code
