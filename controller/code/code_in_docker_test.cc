// Code in on real Docker (label docker; skip without an engine, fail under CI=true): `space create
// --repo` brings a project into a real space whose git is the default image's, and the user's
// repository keeps every byte except new objects and the one start ref (gone again after
// `space remove`). Each test has its own owner and proves nothing labelled with it is left.
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "controller/code/repo_state.h"
#include "controller/code/snapshot.h"
#include "controller/code/testing/git_fixture.h"
#include "controller/code/testing/live_code.h"
#include "controller/process.h"
#include "tests/support/environment.h"

namespace controller::code {
namespace {

using nlohmann::json;
using testing::git;
using testing::git_status;
using testing::write_file;

// The shared code fixture (controller/code/testing/live_code.h): owner, state, HOME, the leftover
// check.
class CodeInDockerTest : public testing::LiveCodeTest {
 protected:
  CodeInDockerTest() : LiveCodeTest("codein") {}
};

TEST_F(CodeInDockerTest, SpaceCreateWithRepoMakesTheSpaceEqualToTheHost) {
  GK_REQUIRE(ready(), "no Docker engine, images or seccomp profiles");
  const std::string repo = dir_.path() + "/my project";
  testing::make_bait(repo);
  // A subfolder project, 5,000 more files, a submodule, and a name with a space in the folder.
  mkdir((repo + "/app").c_str(), 0755);
  write_file(repo + "/app/main.c", "int main(void) { return 0; }\n");
  mkdir((repo + "/many").c_str(), 0755);
  for (int d = 0; d < 50; ++d) {
    const std::string folder = repo + "/many/d" + std::to_string(d);
    mkdir(folder.c_str(), 0755);
    for (int f = 0; f < 100; ++f) {
      write_file(folder + "/f" + std::to_string(f), std::to_string(d * 100 + f) + "\n");
    }
  }
  const std::string lib = dir_.path() + "/lib";
  ASSERT_EQ(git_status("/", {"init", "-q", lib}), 0);
  write_file(lib + "/lib.txt", "lib\n");
  git(lib, {"add", "."});
  git(lib, {"commit", "-qm", "lib"});
  git(repo, {"-c", "protocol.file.allow=always", "submodule", "add", "-q", lib, "vendor/lib"});
  const std::vector<std::string> roots = {repo};
  const RepoState before = capture_state(roots);

  const ProcessOutcome created =
      spacectl({"space", "create", "--name", "code", "--memory", "512m", "--repo", repo + "/app"});
  const json d = json::parse(created.out, nullptr, false);
  ASSERT_EQ(created.exit_code, 0) << created.out << created.err;
  ASSERT_TRUE(d.is_object()) << created.out;
  const std::string id = d["id"].get<std::string>();
  const std::string space_path = "/spaces/" + id + "/my-project";
  EXPECT_EQ(d["code"]["space_path"], space_path);
  EXPECT_EQ(d["code"]["project_path"], space_path + "/app");
  EXPECT_EQ(d["code"]["history"], "sent") << created.err;
  EXPECT_NE(d["code"]["not_travelling"].dump().find("vendor/lib/"), std::string::npos) << d.dump();
  EXPECT_NE(d["code"]["not_travelling"].dump().find("nested/"), std::string::npos) << d.dump();
  EXPECT_NE(created.err.find("is usable"), std::string::npos) << created.err;
  for (const auto& f :
       forbidden_changes(before, capture_state(roots), testing::allowed_for(repo + "/.git", id))) {
    ADD_FAILURE() << f;
  }

  // git status inside equals the host's, line for line (the untracked nested repository stays
  // home).
  std::string host = git(repo, {"status", "--porcelain=v1", "--untracked-files=all", "--branch"});
  const std::string nested_line = "?? nested/\n";
  if (host.find(nested_line) != std::string::npos) {
    host.erase(host.find(nested_line), nested_line.size());
  }
  const std::string in_space = inside(id, {"git", "-C", space_path, "status", "--porcelain=v1",
                                           "--untracked-files=all", "--branch"});
  EXPECT_EQ(in_space.size(), host.size());
  const auto diff = std::mismatch(in_space.begin(), in_space.end(), host.begin(), host.end());
  EXPECT_TRUE(in_space == host)
      << "first difference near: space \""
      << std::string(diff.first, diff.first + std::min<long>(80, in_space.end() - diff.first))
      << "\" host \""
      << std::string(diff.second, diff.second + std::min<long>(80, host.end() - diff.second))
      << "\"";
  EXPECT_EQ(inside(id, {"git", "-C", space_path, "rev-list", "--count", "HEAD"}),
            git(repo, {"rev-list", "--count", "HEAD"}));
  EXPECT_EQ(inside(id, {"git", "-C", space_path, "config", "user.email"}),
            "test@example.invalid\n");
  EXPECT_EQ(inside(id, {"busybox", "stat", "-c", "%a", space_path + "/run.sh"}), "755\n");
  EXPECT_EQ(inside(id, {"busybox", "readlink", space_path + "/link-to-run"}), "run.sh\n");
  EXPECT_EQ(
      inside(id, {"cat", space_path + "/\xd1\x8e\xd0\xbd\xd1\x96\xd0\xba\xd0\xbe\xd0\xb4.txt"}),
      "unicode\n");
  EXPECT_EQ(inside(id, {"cat", space_path + "/untracked with space.txt"}), "space\n");
  EXPECT_EQ(inside(id, {"sh", "-c", "find " + space_path + "/many -type f | wc -l"}), "5000\n");
  const ProcessOutcome secret = spacectl(
      {"space", "exec", id, "--", "grep", "-r", "-l", "bait-secret", "/spaces", "/home/space"},
      false);
  EXPECT_EQ(secret.exit_code, 1) << "the ignored .env travelled: " << secret.out;
  EXPECT_EQ(inside(id, {"ls", "-A", space_path + "/vendor/lib"}), "")
      << "a submodule arrives as an empty folder";

  const ProcessOutcome removed = spacectl({"space", "remove", id});
  EXPECT_EQ(removed.exit_code, 0) << removed.out << removed.err;
  EXPECT_NE(removed.out.find(start_ref_name(id)), std::string::npos) << removed.out;
  // Empty ref folders may stay (git's update-ref -d leaves them too); the ref itself is gone.
  EXPECT_NE(access((repo + "/.git/" + start_ref_name(id)).c_str(), F_OK), 0);
  for (const auto& f :
       forbidden_changes(before, capture_state(roots), testing::allowed_for(repo + "/.git", id))) {
    ADD_FAILURE() << f;
  }
}

TEST_F(CodeInDockerTest, LinkedWorktreeInCleanModeAndCodeForget) {
  GK_REQUIRE(ready(), "no Docker engine, images or seccomp profiles");
  const std::string repo = dir_.path() + "/main";
  testing::make_bait(repo);
  const std::string linked = dir_.path() + "/linked";
  git(repo, {"worktree", "add", "-q", "-b", "feature", linked});
  const std::vector<std::string> roots = {repo, linked};
  const RepoState before = capture_state(roots);
  const ProcessOutcome created =
      spacectl({"space", "create", "--name", "linked", "--memory", "512m"});
  const json d = json::parse(created.out, nullptr, false);
  ASSERT_EQ(created.exit_code, 0) << created.out << created.err;
  const std::string id = d["id"].get<std::string>();
  const ProcessOutcome in = spacectl({"code", "in", id, "--repo", linked, "--mode", "clean"});
  EXPECT_EQ(in.exit_code, 0) << in.out << in.err;
  EXPECT_EQ(
      inside(id, {"git", "-C", "/spaces/" + id + "/linked", "status", "--porcelain", "--branch"}),
      "## feature\n");
  const ProcessOutcome again = spacectl({"code", "in", id, "--repo", linked});
  EXPECT_EQ(again.exit_code, exit_status(Code::kSpaceRefExists)) << again.out << again.err;
  const ProcessOutcome forgot = spacectl({"code", "forget", id});
  EXPECT_EQ(forgot.exit_code, 0) << forgot.out << forgot.err;
  EXPECT_NE(forgot.out.find(start_ref_name(id)), std::string::npos) << forgot.out;
  EXPECT_EQ(spacectl({"space", "remove", id}).exit_code, 0);
  EXPECT_NE(access((repo + "/.git/" + start_ref_name(id)).c_str(), F_OK), 0);
  for (const auto& f :
       forbidden_changes(before, capture_state(roots), testing::allowed_for(repo + "/.git", id))) {
    ADD_FAILURE() << f;
  }
}

TEST_F(CodeInDockerTest, RefusedRepositoriesCreateNoSpace) {
  GK_REQUIRE(ready(), "no Docker engine, images or seccomp profiles");
  const std::string empty = dir_.path() + "/empty";
  ASSERT_EQ(git_status("/", {"init", "-q", empty}), 0);
  write_file(empty + "/a.txt", "a\n");
  const ProcessOutcome o = spacectl({"space", "create", "--repo", empty});
  EXPECT_EQ(o.exit_code, exit_status(Code::kRepositoryHasNoCommit)) << o.out << o.err;
  EXPECT_NE(o.out.find("repository_has_no_commit"), std::string::npos) << o.out;
  // sha256 object format: this host's libgit2 cannot read it; refused before any space exists,
  // with the repository and the reason named.
  const std::string s256 = dir_.path() + "/s256";
  ASSERT_EQ(git_status("/", {"init", "-q", "--object-format=sha256", s256}), 0);
  write_file(s256 + "/a.txt", "a\n");
  git(s256, {"add", "."});
  git(s256, {"commit", "-qm", "a"});
  const RepoState s256_before = capture_state({s256});
  const ProcessOutcome s = spacectl({"space", "create", "--repo", s256});
  EXPECT_EQ(s.exit_code, exit_status(Code::kRepositoryUnsupported)) << s.out << s.err;
  EXPECT_NE(s.out.find("repository_unsupported"), std::string::npos) << s.out;
  EXPECT_NE(s.out.find(s256), std::string::npos) << s.out;
  EXPECT_NE(s.out.find("sha256 object format"), std::string::npos) << s.out;
  for (const auto& f : forbidden_changes(s256_before, capture_state({s256}), Allowed{})) {
    ADD_FAILURE() << f;
  }
  const std::string repo = dir_.path() + "/conflict";
  testing::make_bait(repo);
  git(repo, {"stash", "-q", "-u"});
  git(repo, {"checkout", "-q", "-b", "a"});
  write_file(repo + "/third.txt", "a\n");
  git(repo, {"commit", "-qam", "a"});
  git(repo, {"checkout", "-q", "main"});
  write_file(repo + "/third.txt", "main\n");
  git(repo, {"commit", "-qam", "main"});
  EXPECT_NE(git_status(repo, {"merge", "-q", "a"}), 0);
  const RepoState before = capture_state({repo});
  const ProcessOutcome u = spacectl({"space", "create", "--repo", repo});
  EXPECT_EQ(u.exit_code, exit_status(Code::kUnmergedChanges)) << u.out << u.err;
  for (const auto& f : forbidden_changes(before, capture_state({repo}), Allowed{})) {
    ADD_FAILURE() << f;
  }
  EXPECT_EQ(json::parse(spacectl({"space", "list"}).out, nullptr, false)["spaces"].size(), 0u);
}

}  // namespace
}  // namespace controller::code
