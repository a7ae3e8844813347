// Apply against real repositories: the user's is made with git, its start ref by code in's own
// snapshot, and the space's result is a commit made in a clone of the start and fetched into the
// user's repository as refs/openchamber/spaces/<id>/result (what bring-out promotes). Around every
// refusal the whole repository (work tree and .git) is compared: a refusal that keeps the route
// open changes nothing at all, one that closes it adds exactly refs/…/changes-closed.
#include <sys/stat.h>
#include <unistd.h>

#include <functional>

#include <gtest/gtest.h>

#include "controller/code/apply_internal.h"
#include "controller/code/testing/apply_fixture.h"

namespace controller::code {
namespace {

using testing::ApplyTest;
using testing::git;
using testing::kSpace;
using testing::read_file;
using testing::trim;
using testing::write_file;

// ---- as a branch ----

TEST_F(ApplyTest, BranchPointsAtTheResultAndTouchesNothingElse) {
  code_in();
  const std::string result = make_result([](const std::string& s) { write_file(s + "/new.txt", "new\n"); });
  const RepoState before = state();
  Result<BranchApplied> r = apply_as_branch(repo_, kSpace, "agent/work");
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->branch, "refs/heads/agent/work");
  EXPECT_EQ(trim(git(repo_, {"rev-parse", "refs/heads/agent/work"})), result);
  for (const auto& f : forbidden_changes(before, state(), Allowed{})) {
    if (f.find("/refs/heads/agent") == std::string::npos && f.find("/logs/") == std::string::npos) ADD_FAILURE() << f;
  }
  EXPECT_EQ(testing::git_status(repo_, {"rev-parse", "--verify", "-q", space_ref(kSpace, "applied")}), 1);
}

// refs/heads/ is the user's: a lock file there may belong to a git that is running, so apply
// names it and says what to do, and removes nothing.
TEST_F(ApplyTest, BranchBehindALockFileNamesItAndLeavesIt) {
  code_in();
  make_result([](const std::string& s) { write_file(s + "/new.txt", "new\n"); });
  write_file(repo_ + "/.git/refs/heads/w.lock", "");
  const RepoState before = state();
  Result<BranchApplied> r = apply_as_branch(repo_, kSpace, "w");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, Code::kApplyFailed) << r.error().message;
  EXPECT_NE(r.error().message.find("w.lock"), std::string::npos) << r.error().message;
  EXPECT_NE(r.error().message.find("remove it and run apply again"), std::string::npos)
      << r.error().message;
  for (const auto& f : forbidden_changes(before, state(), Allowed{})) ADD_FAILURE() << f;
}

TEST_F(ApplyTest, BranchRefusesAnExistingNameAndNeverMovesIt) {
  code_in();
  make_result([](const std::string& s) { write_file(s + "/new.txt", "new\n"); });
  git(repo_, {"branch", "taken"});
  git(repo_, {"branch", "topic/one"});
  const RepoState before = state();
  for (const char* name : {"taken", "main", "topic", "taken/sub"}) {
    Result<BranchApplied> r = apply_as_branch(repo_, kSpace, name);
    ASSERT_FALSE(r) << name;
    EXPECT_EQ(r.error().code, Code::kBranchExists) << name << ": " << r.error().message;
  }
  expect_only_marker(before, false);
}

TEST_F(ApplyTest, BranchRefusesNamesGitWouldChangeOrRefuse) {
  code_in();
  make_result([](const std::string& s) { write_file(s + "/new.txt", "new\n"); });
  const RepoState before = state();
  for (const char* name : {"", "-x", "a..b", "@{-1}", "HEAD", "x\ny", "a b", "x.lock", "trailing/", "a~1"}) {
    Result<BranchApplied> r = apply_as_branch(repo_, kSpace, name);
    ASSERT_FALSE(r) << name;
    EXPECT_EQ(r.error().code, Code::kInvalidBranchName) << name;
  }
  expect_only_marker(before, false);
}

TEST_F(ApplyTest, NothingBroughtOutIsResultMissing) {
  code_in();
  const RepoState before = state();
  Result<BranchApplied> b = apply_as_branch(repo_, kSpace, "w");
  ASSERT_FALSE(b);
  EXPECT_EQ(b.error().code, Code::kResultMissing);
  Result<ChangesApplied> c = apply();
  ASSERT_FALSE(c);
  EXPECT_EQ(c.error().code, Code::kResultMissing);
  expect_only_marker(before, false);
}

TEST_F(ApplyTest, AnotherRepositoryIsSpaceStartMissing) {
  code_in();
  make_result([](const std::string& s) { write_file(s + "/new.txt", "new\n"); });
  git(repo_, {"update-ref", "-d", start_ref_name(kSpace)});
  const RepoState before = state();
  Result<ChangesApplied> c = apply();
  ASSERT_FALSE(c);
  EXPECT_EQ(c.error().code, Code::kSpaceStartMissing);
  expect_only_marker(before, false);
}

// ---- as changes: the clean case ----

TEST_F(ApplyTest, ChangesLeaveTheWorkTreeHoldingTheResult) {
  write_file(repo_ + "/uncommitted.txt", "the user's, travelled in the start\n");
  code_in();
  const std::string result = make_result([](const std::string& s) {
    write_file(s + "/a.txt", "one\ntwo (agent)\nthree\nfour\nfive\nsix\nseven\n");
    mkdir((s + "/deep").c_str(), 0755);
    mkdir((s + "/deep/er").c_str(), 0755);
    write_file(s + "/deep/er/new.sh", "#!/bin/sh\n", 0755);
    ASSERT_EQ(::unlink((s + "/src/c.txt").c_str()), 0);
    ASSERT_EQ(symlink("a.txt", (s + "/link").c_str()), 0);
  });
  const std::string head = trim(git(repo_, {"rev-parse", "HEAD"}));
  const std::string index_before = read_file(repo_ + "/.git/index");
  const RepoState before = state();
  Result<ChangesApplied> r = apply();
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_FALSE(r->nothing_to_apply);
  EXPECT_TRUE(r->remembered);
  EXPECT_EQ(r->applied_paths, (std::vector<std::string>{"a.txt", "deep/er/new.sh", "link", "src/c.txt"}));
  EXPECT_EQ(work_tree_tree(), tree_of(result));
  struct stat st {};
  ASSERT_EQ(stat((repo_ + "/deep/er/new.sh").c_str(), &st), 0);
  EXPECT_NE(st.st_mode & 0100, 0u);
  EXPECT_EQ(trim(git(repo_, {"rev-parse", "HEAD"})), head);
  EXPECT_EQ(read_file(repo_ + "/.git/index"), index_before);
  EXPECT_EQ(trim(git(repo_, {"rev-parse", space_ref(kSpace, "applied")})), result);
  EXPECT_EQ(trim(git(repo_, {"rev-parse", space_ref(kSpace, "applied-from")})), start_);
  EXPECT_EQ(testing::git_status(repo_, {"rev-parse", "--verify", "-q", space_ref(kSpace, "applying")}), 1);
  expect_only_work_tree_and_memory(before);
  // The same result again: nothing to apply, nothing touched.
  const RepoState again = state();
  Result<ChangesApplied> second = apply();
  ASSERT_TRUE(second) << second.error().message;
  EXPECT_TRUE(second->nothing_to_apply);
  expect_only_marker(again, false);
}

TEST_F(ApplyTest, AnEditOnOtherLinesIsKeptBesideTheSpacesEdit) {
  code_in();
  make_result([](const std::string& s) { write_file(s + "/a.txt", "one (agent)\ntwo\nthree\nfour\nfive\nsix\nseven\n"); });
  write_file(repo_ + "/a.txt", "one\ntwo\nthree\nfour\nfive\nsix\nseven (user)\n");
  Result<ChangesApplied> r = apply();
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->merged_paths, std::vector<std::string>{"a.txt"});
  EXPECT_EQ(read_file(repo_ + "/a.txt"), "one (agent)\ntwo\nthree\nfour\nfive\nsix\nseven (user)\n");
}

TEST_F(ApplyTest, LineEndingsFollowTheUsersAutocrlf) {
  git(repo_, {"config", "core.autocrlf", "true"});
  write_file(repo_ + "/a.txt", "one\r\ntwo\r\nthree\r\nfour\r\nfive\r\nsix\r\nseven\r\n");  // as a checkout here makes it
  code_in();
  make_result([](const std::string& s) { write_file(s + "/a.txt", "one\ntwo (agent)\nthree\nfour\nfive\nsix\nseven\n"); });
  Result<ChangesApplied> r = apply();
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_TRUE(r->merged_paths.empty());  // the CRLF file held the old side: replaced, not merged
  EXPECT_EQ(read_file(repo_ + "/a.txt"), "one\r\ntwo (agent)\r\nthree\r\nfour\r\nfive\r\nsix\r\nseven\r\n");
}

// ---- as changes: the refusals of the dry run (route closes, marker only) ----

void expect_refused(const Result<ChangesApplied>& r, Code code) {
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, code) << r.error().message;
}

TEST_F(ApplyTest, UserEditedTheSameLineRefusesAndClosesTheRoute) {
  code_in();
  make_result([](const std::string& s) { write_file(s + "/a.txt", "one\ntwo (agent)\nthree\nfour\nfive\nsix\nseven\n"); });
  write_file(repo_ + "/a.txt", "one\ntwo (user)\nthree\nfour\nfive\nsix\nseven\n");
  const RepoState before = state();
  expect_refused(apply(), Code::kChangesDoNotApply);
  expect_only_marker(before, true);
  // Closed for good: the next call refuses at once, writing nothing more.
  const RepoState closed = state();
  expect_refused(apply(), Code::kChangesRouteClosed);
  expect_only_marker(closed, true);
  Result<ApplyState> st = describe_apply_state(repo_, kSpace, {});
  ASSERT_TRUE(st) << st.error().message;
  EXPECT_FALSE(st->route_open);
  // The branch still holds the whole work.
  EXPECT_TRUE(apply_as_branch(repo_, kSpace, "agent"));
}

TEST_F(ApplyTest, UntrackedFileInTheWayRefuses) {
  code_in();
  make_result([](const std::string& s) { write_file(s + "/new.txt", "agent\n"); });
  write_file(repo_ + "/new.txt", "user's own\n");
  const RepoState before = state();
  expect_refused(apply(), Code::kChangesDoNotApply);
  expect_only_marker(before, true);
  EXPECT_EQ(read_file(repo_ + "/new.txt"), "user's own\n");
}

TEST_F(ApplyTest, IgnoredFileInTheWayRefusesAndSaysItIsIgnored) {
  code_in();
  make_result([](const std::string& s) {
    write_file(s + "/build.log", "agent\n");
    git(s, {"add", "-f", "build.log"});  // the agent forced it in
  });
  write_file(repo_ + "/build.log", "user's log\n");
  const RepoState before = state();
  Result<ChangesApplied> r = apply();
  expect_refused(r, Code::kChangesDoNotApply);
  if (!r) {
    EXPECT_NE(r.error().message.find("ignore"), std::string::npos) << r.error().message;
  }
  expect_only_marker(before, true);
}

TEST_F(ApplyTest, UserDeletedAFileTheSpaceChangedRefuses) {
  code_in();
  make_result([](const std::string& s) { write_file(s + "/src/b.txt", "bee (agent)\n"); });
  ASSERT_EQ(::unlink((repo_ + "/src/b.txt").c_str()), 0);
  const RepoState before = state();
  expect_refused(apply(), Code::kChangesDoNotApply);
  expect_only_marker(before, true);
}

TEST_F(ApplyTest, LinkInTheWayBlocksAndNothingIsWrittenThroughIt) {
  testing::TempTree outside;
  code_in();
  make_result([](const std::string& s) { write_file(s + "/src/new.txt", "agent\n"); });
  ASSERT_EQ(::unlink((repo_ + "/src/b.txt").c_str()), 0);
  ASSERT_EQ(::unlink((repo_ + "/src/c.txt").c_str()), 0);
  ASSERT_EQ(::rmdir((repo_ + "/src").c_str()), 0);
  ASSERT_EQ(symlink(outside.path().c_str(), (repo_ + "/src").c_str()), 0);
  const RepoState before = state();
  const RepoState outside_before = capture_state({outside.path()});
  expect_refused(apply(), Code::kChangesBlockedByLink);
  expect_only_marker(before, true);
  EXPECT_TRUE(forbidden_changes(outside_before, capture_state({outside.path()}), Allowed{}).empty());
  expect_refused(apply(), Code::kChangesRouteClosed);
}

TEST_F(ApplyTest, LinkInsideTheWorkTreeBlocksToo) {
  code_in();
  make_result([](const std::string& s) {
    mkdir((s + "/alias").c_str(), 0755);
    write_file(s + "/alias/new.txt", "agent\n");
  });
  ASSERT_EQ(symlink("src", (repo_ + "/alias").c_str()), 0);
  const RepoState before = state();
  expect_refused(apply(), Code::kChangesBlockedByLink);
  expect_only_marker(before, true);
  EXPECT_NE(::access((repo_ + "/src/new.txt").c_str(), F_OK), 0);
}

TEST_F(ApplyTest, ALinkTheSpaceTurnedIntoAFolderIsReplaced) {
  ASSERT_EQ(symlink("src", (repo_ + "/alias").c_str()), 0);
  git(repo_, {"add", "alias"});
  git(repo_, {"commit", "-qm", "alias"});
  code_in();
  const std::string result = make_result([](const std::string& s) {
    ASSERT_EQ(::unlink((s + "/alias").c_str()), 0);
    mkdir((s + "/alias").c_str(), 0755);
    write_file(s + "/alias/new.txt", "agent\n");
  });
  Result<ChangesApplied> r = apply();
  ASSERT_TRUE(r) << r.error().message;
  struct stat st {};
  ASSERT_EQ(lstat((repo_ + "/alias").c_str(), &st), 0);
  EXPECT_TRUE(S_ISDIR(st.st_mode));
  EXPECT_NE(::access((repo_ + "/src/new.txt").c_str(), F_OK), 0);
  EXPECT_EQ(work_tree_tree(), tree_of(result));
}

TEST_F(ApplyTest, TypeChangesReplaceThePathAndAFileTurnedGitlinkBecomesAnEmptyFolder) {
  ASSERT_EQ(symlink("a.txt", (repo_ + "/was-link").c_str()), 0);
  git(repo_, {"add", "was-link"});
  git(repo_, {"commit", "-qm", "a link"});
  code_in();
  make_result([](const std::string& s) {
    ASSERT_EQ(::unlink((s + "/src/c.txt").c_str()), 0);
    ASSERT_EQ(symlink("b.txt", (s + "/src/c.txt").c_str()), 0);
    ASSERT_EQ(::unlink((s + "/was-link").c_str()), 0);
    write_file(s + "/was-link", "now a file\n");
    const std::string head = trim(git(s, {"rev-parse", "HEAD"}));
    // src/b.txt, a file, becomes a gitlink (an unpopulated submodule, so add -A keeps it).
    git(s, {"rm", "-q", "--cached", "src/b.txt"});
    ASSERT_EQ(::unlink((s + "/src/b.txt").c_str()), 0);
    git(s, {"update-index", "--add", "--cacheinfo", "160000," + head + ",src/b.txt"});
    mkdir((s + "/src/b.txt").c_str(), 0755);
  });
  Result<ChangesApplied> r = apply();
  ASSERT_TRUE(r) << r.error().message;
  char target[64] = {};
  ASSERT_EQ(readlink((repo_ + "/src/c.txt").c_str(), target, sizeof target - 1), 5);
  EXPECT_STREQ(target, "b.txt");
  struct stat st {};
  ASSERT_EQ(lstat((repo_ + "/was-link").c_str(), &st), 0);
  EXPECT_TRUE(S_ISREG(st.st_mode));
  EXPECT_EQ(read_file(repo_ + "/was-link"), "now a file\n");
  ASSERT_EQ(lstat((repo_ + "/src/b.txt").c_str(), &st), 0);
  EXPECT_TRUE(S_ISDIR(st.st_mode));
  EXPECT_EQ(r->nested_repositories, std::vector<std::string>{"src/b.txt"});
}

// ---- caps, names and filters refuse with the route open (no marker) ----

TEST_F(ApplyTest, OverTheCapsRefusesAndTheRouteStaysOpen) {
  code_in();
  make_result([](const std::string& s) {
    for (int i = 0; i < 3; ++i) write_file(s + "/n" + std::to_string(i) + ".txt", "x\n");
  });
  const RepoState before = state();
  ApplyLimits at_limit;
  at_limit.max_changed_entries = 2;
  expect_refused(apply(at_limit), Code::kChangesTooLarge);
  ApplyLimits bytes;
  bytes.max_changed_bytes = 5;  // three blobs of 2 bytes
  expect_refused(apply(bytes), Code::kChangesTooLarge);
  expect_only_marker(before, false);
  bytes.max_changed_bytes = 6;  // at the limit: applies
  at_limit.max_changed_entries = 3;
  ASSERT_TRUE(apply(bytes));
}

TEST_F(ApplyTest, DeepNestingIsRefusedByTheStepCap) {
  code_in();
  make_result([](const std::string& s) {
    std::string p = s;
    for (int i = 0; i < 40; ++i) {
      p += "/a";
      mkdir(p.c_str(), 0755);
    }
    write_file(p + "/f", "x\n");
  });
  const RepoState before = state();
  ApplyLimits limits;
  limits.max_changed_entries = 1;  // 1 path, 40 folders > 1 folder; steps 860 > 32
  expect_refused(apply(limits), Code::kChangesTooLarge);
  expect_only_marker(before, false);
}

TEST_F(ApplyTest, NamesTheRepositoryCannotHoldAreRefusedWithTheRouteOpen) {
  git(repo_, {"config", "core.ignorecase", "true"});
  code_in();
  make_result([](const std::string& s) { write_file(s + "/SRC.txt", "x\n"); write_file(s + "/src/B.txt", "agent\n"); });
  const RepoState before = state();
  Result<ChangesApplied> r = apply();
  expect_refused(r, Code::kNameNotAllowedHere);
  EXPECT_NE(r.error().message.find("differs_only_in_case"), std::string::npos) << r.error().message;
  expect_only_marker(before, false);
  expect_refused(apply(), Code::kNameNotAllowedHere);  // open: the same answer, not route_closed
}

TEST_F(ApplyTest, ACaseOnlyRenameIsRefusedWhereTheRepositoryFoldsCase) {
  git(repo_, {"config", "core.ignorecase", "true"});
  code_in();
  make_result([](const std::string& s) {
    ASSERT_EQ(::rename((s + "/src/b.txt").c_str(), (s + "/src/B.txt").c_str()), 0);
  });
  const RepoState before = state();
  expect_refused(apply(), Code::kCaseOnlyRename);
  expect_only_marker(before, false);
}

TEST_F(ApplyTest, CaseFoldingIsNotAppliedWhereTheRepositoryDoesNotSaySo) {
  code_in();
  make_result([](const std::string& s) { write_file(s + "/src/B.txt", "agent\n"); });
  Result<ChangesApplied> r = apply();
  ASSERT_TRUE(r) << r.error().message;
}

TEST_F(ApplyTest, WindowsNamesAreRefusedWhereTheRepositoryProtectsNtfs) {
  git(repo_, {"config", "core.protectNTFS", "true"});
  code_in();
  make_result([](const std::string& s) { write_file(s + "/con.txt", "x\n"); });
  const RepoState before = state();
  Result<ChangesApplied> r = apply();
  expect_refused(r, Code::kNameNotAllowedHere);
  EXPECT_NE(r.error().message.find("windows_device_name"), std::string::npos) << r.error().message;
  expect_only_marker(before, false);
}

TEST_F(ApplyTest, ANameLongerThan255BytesIsRefusedAnd255Passes) {
  code_in();
  make_result([](const std::string& s) { write_file(s + "/" + std::string(255, 'n'), "x\n"); });
  ASSERT_TRUE(apply());
  make_result([](const std::string& s) {
    // A name of 256 bytes cannot be made on this disk: the tree is written by hand.
    const std::string blob = trim(git(s, {"hash-object", "-w", "--stdin"}, "x\n"));
    git(s, {"update-index", "--add", "--cacheinfo", "100644," + blob + "," + std::string(256, 'm')});
    git(s, {"update-index", "--skip-worktree", std::string(256, 'm')});  // so add -A leaves it staged
  });
  const RepoState before = state();
  Result<ChangesApplied> r = apply();
  expect_refused(r, Code::kNameNotAllowedHere);
  EXPECT_NE(r.error().message.find("name_too_long"), std::string::npos) << r.error().message;
  expect_only_marker(before, false);
}

TEST_F(ApplyTest, APathUnderTheUsersFilterDriverIsRefusedWithTheRouteOpen) {
  write_file(repo_ + "/.gitattributes", "*.dat filter=crypt\n");
  git(repo_, {"add", ".gitattributes"});
  git(repo_, {"commit", "-qm", "attributes"});
  git(repo_, {"config", "filter.crypt.clean", "cat"});
  code_in();
  make_result([](const std::string& s) { write_file(s + "/x.dat", "secret\n"); });
  const RepoState before = state();
  expect_refused(apply(), Code::kChangesNeedFilter);
  expect_only_marker(before, false);
}

// Bring-out refuses such trees; apply writes files itself and checks every changed path again.
TEST_F(ApplyTest, AResultNamingTheRepositoryFolderIsRefusedWhateverItsSpelling) {
  code_in();
  for (const char* name : {".GIT", ".git", "git~1", ".git.", ".git ", ".g\xe2\x80\x8cit", ".."}) {
    const std::string blob = trim(git(space_, {"hash-object", "-w", "--stdin"}, "[core]\n\thooksPath = /tmp/x\n"));
    const std::string inner = trim(git(space_, {"mktree"}, "100644 blob " + blob + "\tconfig\n"));
    const std::string base = trim(git(space_, {"rev-parse", "HEAD^{tree}"}));
    std::string entries = git(space_, {"ls-tree", base});
    entries += "040000 tree " + inner + "\t" + name + "\n";
    const std::string tree = trim(git(space_, {"mktree", "--missing"}, entries));
    const std::string commit = trim(git(space_, {"commit-tree", tree, "-p", "HEAD", "-m", "hostile"}));
    git(repo_, {"fetch", "-q", "--no-tags", "--no-write-fetch-head", space_, "+" + commit + ":" + space_ref(kSpace, "result")});
    const RepoState before = state();
    Result<ChangesApplied> r = apply();
    expect_refused(r, Code::kNameNotAllowedHere);
    if (!r) {
      EXPECT_NE(r.error().message.find("git_folder_name"), std::string::npos) << name << ": " << r.error().message;
    }
    expect_only_marker(before, false);
  }
}

TEST(ApplyNames, FoldJoinsWhatCaseFoldingDisksJoin) {
  apply_detail::NameRules rules;
  rules.fold_case = true;
  rules.fold_unicode = true;
  EXPECT_EQ(apply_detail::fold_name("STRASSE", rules), apply_detail::fold_name("stra\xc3\x9f" "e", rules));
  EXPECT_EQ(apply_detail::fold_name("caf\xc3\xa9", rules), apply_detail::fold_name("cafe\xcc\x81", rules));  // NFC vs NFD
  EXPECT_EQ(apply_detail::fold_name("\xcf\x83", rules), apply_detail::fold_name("\xcf\x82", rules));        // σ ς
  EXPECT_NE(apply_detail::fold_name("a", rules), apply_detail::fold_name("b", rules));
  apply_detail::NameRules none;
  EXPECT_NE(apply_detail::fold_name("A", none), apply_detail::fold_name("a", none));
}

}  // namespace
}  // namespace controller::code
