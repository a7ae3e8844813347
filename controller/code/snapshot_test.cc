// The host-side snapshot with libgit2: trees equal to what git itself makes from the same index
// and work tree, every refusal with the repository unchanged, and nothing of the user's git
// setup (hooks, fsmonitor, GIT_* variables) run or obeyed.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>

#include <gtest/gtest.h>

#include "controller/code/repo_state.h"
#include "controller/code/snapshot.h"
#include "controller/code/testing/git_fixture.h"

namespace controller::code {
namespace {

using testing::git;
using testing::git_status;
using testing::write_file;

constexpr const char* kSpace = "0123456789ab";

std::string trim(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r')) s.pop_back();
  return s;
}

class SnapshotTest : public ::testing::Test {
 protected:
  void SetUp() override {
    testing::isolate_git_environment(home_.path());
    repo_ = dir_.path() + "/repo";
    testing::make_bait(repo_);
  }

  // The trees git itself writes from a copy of the repository: the index, then `add --all`
  // without the nested repository.
  void expected_trees(std::string& staged, std::string& work) {
    testing::TempTree copy;
    const std::string c = copy.path() + "/c";
    ASSERT_EQ(std::system(("cp -a '" + repo_ + "' '" + c + "'").c_str()), 0);
    staged = trim(git(c, {"write-tree"}));
    git(c, {"add", "--all", "--", ".", ":(exclude,literal)nested"});
    work = trim(git(c, {"write-tree"}));
  }

  void expect_unchanged_except_allowed(const RepoState& before, const std::string& common = {}) {
    const auto found =
        forbidden_changes(before, capture_state(roots()),
                          testing::allowed_for(common.empty() ? repo_ + "/.git" : common, kSpace));
    for (const auto& f : found) ADD_FAILURE() << f;
  }

  std::vector<std::string> roots() const { return {repo_}; }

  testing::TempTree home_, dir_;
  std::string repo_;
};

TEST_F(SnapshotTest, TwoCommitsHoldTheIndexAndTheWorkTreeAsGitWouldWriteThem) {
  std::string staged_tree, work_tree;
  expected_trees(staged_tree, work_tree);
  const std::string head = trim(git(repo_, {"rev-parse", "HEAD"}));
  const RepoState before = capture_state(roots());
  Result<Snapshot> snap = take_snapshot(repo_, kSpace, Mode::kUncommitted);
  ASSERT_TRUE(snap) << snap.error().message;
  expect_unchanged_except_allowed(before);
  EXPECT_EQ(snap->base, head);
  EXPECT_EQ(snap->branch, "main");
  EXPECT_EQ(snap->folder, "repo");
  EXPECT_EQ(trim(git(repo_, {"rev-parse", snap->staged + "^{tree}"})), staged_tree);
  EXPECT_EQ(trim(git(repo_, {"rev-parse", snap->start + "^{tree}"})), work_tree);
  EXPECT_EQ(trim(git(repo_, {"rev-parse", snap->staged + "^"})), head);
  EXPECT_EQ(trim(git(repo_, {"rev-parse", snap->start + "^"})), snap->staged);
  EXPECT_EQ(trim(git(repo_, {"rev-parse", start_ref_name(kSpace)})), snap->start);
  EXPECT_EQ(trim(git(repo_, {"log", "-1", "--format=%an <%ae> %cn <%ce> %s", snap->start})),
            "OpenChamber <spaces@openchamber.invalid> OpenChamber <spaces@openchamber.invalid> "
            "openchamber: working tree snapshot");
  EXPECT_EQ(snap->user_name.value_or(""), "Test User");
  EXPECT_EQ(snap->user_email.value_or(""), "test@example.invalid");
  ASSERT_EQ(snap->not_travelling.size(), 1u);
  EXPECT_EQ(snap->not_travelling[0].path, "nested/");
  EXPECT_EQ(snap->not_travelling[0].reason, "repository");

  // What travels and what does not, by name.
  std::string names = git(repo_, {"ls-tree", "-r", "--name-only", snap->start});
  EXPECT_NE(names.find("untracked with space.txt"), std::string::npos);
  EXPECT_NE(names.find("link-to-run"), std::string::npos);
  EXPECT_EQ(names.find(".env"), std::string::npos);
  EXPECT_EQ(names.find("node_modules"), std::string::npos);
  EXPECT_EQ(names.find("secret-by-global-ignore"), std::string::npos);
  EXPECT_EQ(names.find("to-delete.txt"), std::string::npos);
  EXPECT_EQ(names.find("nested"), std::string::npos);
  const auto lines = testing::tree_lines(repo_, snap->start);
  EXPECT_NE(std::find_if(lines.begin(), lines.end(),
                         [](const std::string& l) {
                           return l.rfind("100755", 0) == 0 && l.ends_with("\trun.sh");
                         }),
            lines.end());
  EXPECT_NE(std::find_if(lines.begin(), lines.end(),
                         [](const std::string& l) {
                           return l.rfind("120000", 0) == 0 && l.ends_with("\tlink-to-run");
                         }),
            lines.end());
}

// A file rewritten with the same size and its old mtime, in the index's own second: only racy-git
// detection sees the change, and it needs the index copy to keep the index's modification time.
TEST_F(SnapshotTest, RacilyCleanFileTravelsWithItsNewContent) {
  git(repo_, {"config", "core.trustctime", "false"});
  write_file(repo_ + "/racy.txt", "AAAA\n");
  git(repo_, {"add", "racy.txt"});
  struct stat st {};
  ASSERT_EQ(stat((repo_ + "/racy.txt").c_str(), &st), 0);
  write_file(repo_ + "/racy.txt", "BBBB\n");
  const struct timespec times[2] = {st.st_atim, st.st_mtim};
  ASSERT_EQ(utimensat(AT_FDCWD, (repo_ + "/racy.txt").c_str(), times, 0), 0);
  ASSERT_EQ(utimensat(AT_FDCWD, (repo_ + "/.git/index").c_str(), times, 0), 0);
  Result<Snapshot> snap = take_snapshot(repo_, kSpace, Mode::kUncommitted);
  ASSERT_TRUE(snap) << snap.error().message;
  EXPECT_EQ(git(repo_, {"show", snap->start + ":racy.txt"}), "BBBB\n");
  EXPECT_EQ(git(repo_, {"show", snap->staged + ":racy.txt"}), "AAAA\n");
}

TEST_F(SnapshotTest, CleanModeStartsAtHeadAndWritesOnlyTheRef) {
  const std::string head = trim(git(repo_, {"rev-parse", "HEAD"}));
  const RepoState before = capture_state(roots());
  Result<Snapshot> snap = take_snapshot(repo_, kSpace, Mode::kClean);
  ASSERT_TRUE(snap) << snap.error().message;
  expect_unchanged_except_allowed(before);
  EXPECT_EQ(snap->base, head);
  EXPECT_EQ(snap->staged, head);
  EXPECT_EQ(snap->start, head);
}

TEST_F(SnapshotTest, UsersHooksFsmonitorAndGitVariablesNeitherRunNorRedirect) {
  // Expected trees first: git itself would obey the planted fsmonitor below.
  std::string staged_tree, work_tree;
  expected_trees(staged_tree, work_tree);
  testing::TempTree elsewhere;
  const std::string marker = elsewhere.path() + "/ran";
  const std::string script = "#!/bin/sh\necho \"$0\" >> '" + marker + "'\n";
  const char* hooks[] = {
      "pre-commit",   "post-commit",   "post-index-change",  "reference-transaction",
      "pre-push",     "post-checkout", "commit-msg",         "prepare-commit-msg",
      "post-rewrite", "pre-auto-gc",   "fsmonitor-watchman", "push-to-checkout",
      "post-update"};
  for (const char* h : hooks) write_file(repo_ + "/.git/hooks/" + h, script, 0755);
  mkdir((elsewhere.path() + "/hooks").c_str(), 0755);
  for (const char* h : hooks) write_file(elsewhere.path() + "/hooks/" + h, script, 0755);
  write_file(elsewhere.path() + "/fsmonitor", script, 0755);
  git(repo_, {"config", "core.fsmonitor", elsewhere.path() + "/fsmonitor"});
  write_file(home_.path() + "/.gitconfig", testing::read_file(home_.path() + "/.gitconfig") +
                                               "[core]\n\thooksPath = " + elsewhere.path() +
                                               "/hooks\n");

  // A second repository every redirecting variable points at; it must stay untouched.
  const std::string other = elsewhere.path() + "/other";
  ASSERT_EQ(git_status("/", {"init", "-q", other}), 0);
  write_file(other + "/x.txt", "x\n");
  const std::vector<std::pair<std::string, std::string>> variables = {
      {"GIT_DIR", other + "/.git"},
      {"GIT_WORK_TREE", other},
      {"GIT_INDEX_FILE", other + "/.git/index"},
      {"GIT_OBJECT_DIRECTORY", other + "/.git/objects"},
      {"GIT_ALTERNATE_OBJECT_DIRECTORIES", other + "/.git/objects"},
      {"GIT_NAMESPACE", "elsewhere"},
      {"GIT_COMMON_DIR", other + "/.git"},
      {"GIT_CEILING_DIRECTORIES", dir_.path()},
      {"GIT_CONFIG_PARAMETERS", "'core.excludesfile'='/dev/null'"},
      {"GIT_CONFIG_COUNT", "1"},
      {"GIT_CONFIG_KEY_0", "core.hooksPath"},
      {"GIT_CONFIG_VALUE_0", elsewhere.path() + "/hooks"},
      {"GIT_CONFIG_GLOBAL", "/dev/null"},
      {"GIT_CONFIG_SYSTEM", "/dev/null"},
      {"GIT_AUTHOR_NAME", "Planted"},
      {"GIT_AUTHOR_EMAIL", "planted@x"},
      {"GIT_COMMITTER_NAME", "Planted"},
      {"GIT_COMMITTER_EMAIL", "planted@x"},
      {"GIT_AUTHOR_DATE", "@1 +0000"},
      {"GIT_COMMITTER_DATE", "@1 +0000"},
      {"GIT_REPLACE_REF_BASE", "refs/planted/"},
      {"GIT_SHALLOW_FILE", other + "/shallow"},
      {"GIT_GRAFT_FILE", other + "/graft"},
      {"GIT_DEFAULT_HASH", "sha256"},
      {"GIT_ATTR_SOURCE", "HEAD~2"},
      {"GIT_LITERAL_PATHSPECS", "1"},
      {"GIT_ICASE_PATHSPECS", "1"},
      {"GIT_TRACE", marker},
      {"GIT_TRACE2", marker},
      {"GIT_TRACE_PACKET", marker},
      {"GIT_QUARANTINE_PATH", other + "/.git/objects"},
      {"GIT_INDEX_VERSION", "4"},
      {"GIT_TEMPLATE_DIR", elsewhere.path()},
  };
  for (const auto& [k, v] : variables) setenv(k.c_str(), v.c_str(), 1);
  const std::vector<std::string> both = {repo_, other};
  const RepoState before = capture_state(both);
  Result<Snapshot> snap = take_snapshot(repo_, kSpace, Mode::kUncommitted);
  for (const auto& [k, v] : variables) unsetenv(k.c_str());
  ASSERT_TRUE(snap) << snap.error().message;
  const auto found =
      forbidden_changes(before, capture_state(both), testing::allowed_for(repo_ + "/.git", kSpace));
  for (const auto& f : found) ADD_FAILURE() << f;
  EXPECT_NE(access(marker.c_str(), F_OK), 0)
      << "a hook, the fsmonitor or a trace wrote " << testing::read_file(marker);
  EXPECT_EQ(trim(git(repo_, {"rev-parse", snap->staged + "^{tree}"})), staged_tree);
  EXPECT_EQ(trim(git(repo_, {"rev-parse", snap->start + "^{tree}"})), work_tree)
      << git(repo_, {"diff", "--stat", work_tree, snap->start});
  EXPECT_EQ(trim(git(repo_, {"log", "-1", "--format=%an %cn", snap->start})),
            "OpenChamber OpenChamber");
  // Control: the planted hook does run when real git is asked to commit here.
  git(repo_, {"commit", "-qm", "control"});
  EXPECT_EQ(access(marker.c_str(), F_OK), 0)
      << "control: the planted hooks never ran for git itself";
}

TEST_F(SnapshotTest, DetachedHeadStaysDetached) {
  git(repo_, {"checkout", "-q", "--detach"});
  Result<Snapshot> snap = take_snapshot(repo_, kSpace, Mode::kUncommitted);
  ASSERT_TRUE(snap) << snap.error().message;
  EXPECT_EQ(snap->branch, "");
}

TEST_F(SnapshotTest, SubfolderProjectTravelsWithItsRepository) {
  mkdir((repo_ + "/sub").c_str(), 0755);
  write_file(repo_ + "/sub/code.c", "int main(void) { return 0; }\n");
  Result<Snapshot> snap = take_snapshot(repo_ + "/sub", kSpace, Mode::kUncommitted);
  ASSERT_TRUE(snap) << snap.error().message;
  EXPECT_EQ(snap->prefix, "sub");
  EXPECT_EQ(snap->folder, "repo");
}

TEST_F(SnapshotTest, LinkedWorktreeWritesItsRefInTheCommonFolder) {
  const std::string wt = dir_.path() + "/linked";
  git(repo_, {"worktree", "add", "-q", "-b", "side", wt});
  write_file(wt + "/in-linked.txt", "linked\n");
  const std::vector<std::string> both = {repo_, wt};
  const RepoState before = capture_state(both);
  Result<Snapshot> snap = take_snapshot(wt, kSpace, Mode::kUncommitted);
  ASSERT_TRUE(snap) << snap.error().message;
  const auto found =
      forbidden_changes(before, capture_state(both), testing::allowed_for(repo_ + "/.git", kSpace));
  for (const auto& f : found) ADD_FAILURE() << f;
  EXPECT_EQ(snap->branch, "side");
  EXPECT_NE(git(repo_, {"ls-tree", "-r", "--name-only", snap->start}).find("in-linked.txt"),
            std::string::npos);
}

TEST_F(SnapshotTest, ListingNamesExactlyWhatTheSnapshotCarries) {
  Result<FileListing> listing = list_travelling_files(repo_);
  ASSERT_TRUE(listing) << listing.error().message;
  Result<Snapshot> snap = take_snapshot(repo_, kSpace, Mode::kUncommitted);
  ASSERT_TRUE(snap) << snap.error().message;
  std::string names = git(repo_, {"ls-tree", "-r", "-z", "--name-only", snap->start});
  std::vector<std::string> in_tree;
  for (std::size_t s = 0, i = 0; i < names.size(); ++i)
    if (names[i] == '\0') {
      in_tree.push_back(names.substr(s, i - s));
      s = i + 1;
    }
  std::vector<std::string> listed;
  for (const auto& f : listing->files) listed.push_back(f.path);
  std::sort(in_tree.begin(), in_tree.end());
  EXPECT_EQ(listed, in_tree);
  std::uint64_t total = 0;
  for (const auto& f : listing->files) total += f.size;
  EXPECT_EQ(listing->total_bytes, total);
  bool nested = false, ignored_env = false;
  for (const auto& n : listing->not_travelling) {
    if (n.path == "nested/" && n.reason == "repository") nested = true;
    if (n.path == ".env" && n.reason == "ignored") ignored_env = true;
  }
  EXPECT_TRUE(nested);
  EXPECT_TRUE(ignored_env);
}

TEST_F(SnapshotTest, ListingWritesNothing) {
  const RepoState before = capture_state(roots());
  ASSERT_TRUE(list_travelling_files(repo_));
  const auto found = forbidden_changes(before, capture_state(roots()), Allowed{});
  for (const auto& f : found) ADD_FAILURE() << f;
}

TEST_F(SnapshotTest, SubmodulesAreListedAsNotTravelling) {
  const std::string lib = dir_.path() + "/lib";
  ASSERT_EQ(git_status("/", {"init", "-q", lib}), 0);
  write_file(lib + "/lib.txt", "lib\n");
  git(lib, {"add", "."});
  git(lib, {"commit", "-qm", "lib"});
  git(repo_, {"-c", "protocol.file.allow=always", "submodule", "add", "-q", lib, "vendor/lib"});
  Result<Snapshot> snap = take_snapshot(repo_, kSpace, Mode::kUncommitted);
  ASSERT_TRUE(snap) << snap.error().message;
  bool listed = false;
  for (const auto& n : snap->not_travelling)
    listed = listed || (n.path == "vendor/lib/" && n.reason == "submodule");
  EXPECT_TRUE(listed);
  Result<FileListing> listing = list_travelling_files(repo_);
  ASSERT_TRUE(listing);
  listed = false;
  for (const auto& n : listing->not_travelling)
    listed = listed || (n.path == "vendor/lib/" && n.reason == "submodule");
  EXPECT_TRUE(listed);
}

TEST_F(SnapshotTest, FiveThousandFiles) {
  for (int d = 0; d < 50; ++d) {
    const std::string folder = repo_ + "/many/d" + std::to_string(d);
    mkdir((repo_ + "/many").c_str(), 0755);
    mkdir(folder.c_str(), 0755);
    for (int f = 0; f < 100; ++f)
      write_file(folder + "/f" + std::to_string(f) + ".txt", std::to_string(d * 100 + f) + "\n");
  }
  std::string staged_tree, work_tree;
  expected_trees(staged_tree, work_tree);
  Result<Snapshot> snap = take_snapshot(repo_, kSpace, Mode::kUncommitted);
  ASSERT_TRUE(snap) << snap.error().message;
  EXPECT_EQ(trim(git(repo_, {"rev-parse", snap->start + "^{tree}"})), work_tree);
}

// Refusals: each its own code, and the repository exactly as it was.
class SnapshotRefusalTest : public SnapshotTest {
 protected:
  void expect_refused(const std::string& repo, Code code,
                      const std::vector<std::string>& roots_checked) {
    const RepoState before = capture_state(roots_checked);
    if (code != Code::kSpaceRefExists && code != Code::kProjectFolderDoesNotTravel &&
        code != Code::kInvalidArgument) {
      Result<void> early = preflight(repo);
      ASSERT_FALSE(early);
      EXPECT_EQ(early.error().code, code) << early.error().message;
    }
    Result<Snapshot> snap = take_snapshot(repo, kSpace, Mode::kUncommitted);
    ASSERT_FALSE(snap);
    EXPECT_EQ(snap.error().code, code) << snap.error().message;
    const auto found = forbidden_changes(before, capture_state(roots_checked), Allowed{});
    for (const auto& f : found) ADD_FAILURE() << f;
  }
};

TEST_F(SnapshotRefusalTest, MissingFolder) {
  expect_refused(dir_.path() + "/absent", Code::kProjectFolderMissing, {dir_.path()});
}

TEST_F(SnapshotRefusalTest, NotARepository) {
  mkdir((dir_.path() + "/plain").c_str(), 0755);
  expect_refused(dir_.path() + "/plain", Code::kNotAGitWorkTree, {dir_.path() + "/plain"});
}

TEST_F(SnapshotRefusalTest, BareRepository) {
  ASSERT_EQ(git_status("/", {"init", "-q", "--bare", dir_.path() + "/bare.git"}), 0);
  expect_refused(dir_.path() + "/bare.git", Code::kNotAGitWorkTree, {dir_.path() + "/bare.git"});
}

TEST_F(SnapshotRefusalTest, InsideTheGitFolder) {
  expect_refused(repo_ + "/.git", Code::kNotAGitWorkTree, {repo_});
}

TEST_F(SnapshotRefusalTest, EmptyRepository) {
  ASSERT_EQ(git_status("/", {"init", "-q", dir_.path() + "/empty"}), 0);
  write_file(dir_.path() + "/empty/a.txt", "a\n");
  expect_refused(dir_.path() + "/empty", Code::kRepositoryHasNoCommit, {dir_.path() + "/empty"});
}

TEST_F(SnapshotRefusalTest, UnmergedPaths) {
  git(repo_, {"stash", "-q", "-u"});
  git(repo_, {"checkout", "-q", "-b", "a"});
  write_file(repo_ + "/third.txt", "a\n");
  git(repo_, {"commit", "-qam", "a"});
  git(repo_, {"checkout", "-q", "main"});
  write_file(repo_ + "/third.txt", "main\n");
  git(repo_, {"commit", "-qam", "main"});
  EXPECT_NE(git_status(repo_, {"merge", "-q", "a"}), 0);
  expect_refused(repo_, Code::kUnmergedChanges, roots());
}

TEST_F(SnapshotRefusalTest, StartRefAlreadyThere) {
  git(repo_, {"update-ref", start_ref_name(kSpace), "HEAD"});
  expect_refused(repo_, Code::kSpaceRefExists, roots());
}

TEST_F(SnapshotRefusalTest, BranchNameStartingWithADash) {
  git(repo_, {"update-ref", "refs/heads/-x", "HEAD"});
  git(repo_, {"symbolic-ref", "HEAD", "refs/heads/-x"});
  expect_refused(repo_, Code::kInvalidBranchName, roots());
}

TEST_F(SnapshotRefusalTest, IgnoredSubfolderDoesNotTravel) {
  mkdir((repo_ + "/node_modules/pkg").c_str(), 0755);
  write_file(repo_ + "/node_modules/pkg/a.js", "1\n");
  // The snapshot commits are new objects (allowed); the ref must not be written.
  const RepoState before = capture_state(roots());
  Result<Snapshot> snap = take_snapshot(repo_ + "/node_modules", kSpace, Mode::kUncommitted);
  ASSERT_FALSE(snap);
  EXPECT_EQ(snap.error().code, Code::kProjectFolderDoesNotTravel) << snap.error().message;
  const auto found =
      forbidden_changes(before, capture_state(roots()), testing::allowed_for(repo_ + "/.git", ""));
  for (const auto& f : found) ADD_FAILURE() << f;
}

TEST_F(SnapshotRefusalTest, Sha256ObjectFormatIsNotReadByThisLibgit2) {
  ASSERT_EQ(git_status("/", {"init", "-q", "--object-format=sha256", dir_.path() + "/s256"}), 0);
  write_file(dir_.path() + "/s256/a.txt", "a\n");
  git(dir_.path() + "/s256", {"add", "."});
  git(dir_.path() + "/s256", {"commit", "-qm", "a"});
  expect_refused(dir_.path() + "/s256", Code::kRepositoryUnsupported, {dir_.path() + "/s256"});
  // The message names the repository and the reason, and so does `code files`.
  Result<Snapshot> snap = take_snapshot(dir_.path() + "/s256", kSpace, Mode::kUncommitted);
  ASSERT_FALSE(snap);
  EXPECT_NE(snap.error().message.find(dir_.path() + "/s256"), std::string::npos)
      << snap.error().message;
  EXPECT_NE(snap.error().message.find("the sha256 object format"), std::string::npos)
      << snap.error().message;
  Result<FileListing> listing = list_travelling_files(dir_.path() + "/s256");
  ASSERT_FALSE(listing);
  EXPECT_EQ(listing.error().code, Code::kRepositoryUnsupported) << listing.error().message;
  EXPECT_NE(listing.error().message.find("the sha256 object format"), std::string::npos)
      << listing.error().message;
}

TEST_F(SnapshotRefusalTest, SplitIndexIsNotRead) {
  git(repo_, {"update-index", "--split-index"});
  expect_refused(repo_, Code::kRepositoryUnsupported, roots());
}

TEST_F(SnapshotRefusalTest, BadSpaceId) {
  const RepoState before = capture_state(roots());
  Result<Snapshot> snap = take_snapshot(repo_, "0123456789AB", Mode::kUncommitted);
  ASSERT_FALSE(snap);
  EXPECT_EQ(snap.error().code, Code::kInvalidArgument);
  EXPECT_TRUE(forbidden_changes(before, capture_state(roots()), Allowed{}).empty());
}

}  // namespace
}  // namespace controller::code
