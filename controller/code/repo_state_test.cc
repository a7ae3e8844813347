// The state comparison's self-test: each kind of forbidden change to a repository must be seen,
// and the allowed ones (new loose objects, this space's start ref added or removed) must not.
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <functional>

#include <gtest/gtest.h>

#include "controller/code/repo_state.h"
#include "controller/code/testing/git_fixture.h"

namespace controller::code {
namespace {

using testing::git;
using testing::write_file;

constexpr const char* kSpace = "0123456789ab";

class RepoStateTest : public ::testing::Test {
 protected:
  void SetUp() override {
    testing::isolate_git_environment(home_.path());
    repo_ = dir_.path() + "/repo";
    testing::make_bait(repo_);
    git(repo_, {"config", "core.logAllRefUpdates", "false"});
    head_ = git(repo_, {"rev-parse", "HEAD"});
    head_.pop_back();
    allowed_ = testing::allowed_for(repo_ + "/.git", kSpace);
  }

  // Applies `change` and returns what the comparison says.
  std::vector<std::string> after(const std::function<void()>& change) {
    const RepoState before = capture_state({repo_});
    change();
    return forbidden_changes(before, capture_state({repo_}), allowed_);
  }

  testing::TempTree home_, dir_;
  std::string repo_, head_;
  Allowed allowed_;
};

TEST_F(RepoStateTest, NothingChangedIsClean) { EXPECT_TRUE(after([] {}).empty()); }

TEST_F(RepoStateTest, AllowsNewLooseObjectsAndThisSpacesStartRef) {
  const auto found = after([&] {
    git(repo_, {"hash-object", "-w", "--stdin"}, "a brand new object\n");
    git(repo_, {"update-ref", std::string("refs/openchamber/spaces/") + kSpace + "/start", head_, std::string(40, '0')});
  });
  EXPECT_TRUE(found.empty()) << found.front();
}

TEST_F(RepoStateTest, AllowsThisSpacesStartRefToGo) {
  git(repo_, {"update-ref", std::string("refs/openchamber/spaces/") + kSpace + "/start", head_});
  const auto found = after([&] { git(repo_, {"update-ref", "-d", std::string("refs/openchamber/spaces/") + kSpace + "/start"}); });
  EXPECT_TRUE(found.empty()) << found.front();
}

struct Forbidden {
  const char* name;
  std::function<void(const std::string& repo, const std::string& head)> change;
};

TEST_F(RepoStateTest, DetectsEveryForbiddenKindOfChange) {
  const std::string ref = std::string("refs/openchamber/spaces/") + kSpace + "/start";
  const std::vector<Forbidden> cases = {
      {"changed .git/config", [](const std::string& r, const std::string&) { git(r, {"config", "core.editor", "vi"}); }},
      {"new hook", [](const std::string& r, const std::string&) { write_file(r + "/.git/hooks/pre-commit", "#!/bin/sh\n", 0755); }},
      {"changed info/exclude", [](const std::string& r, const std::string&) { write_file(r + "/.git/info/exclude", "x\n"); }},
      {"MERGE_HEAD", [](const std::string& r, const std::string& h) { write_file(r + "/.git/MERGE_HEAD", h + "\n"); }},
      {"sharedindex", [](const std::string& r, const std::string&) { write_file(r + "/.git/sharedindex.0123", "x"); }},
      {"new empty folder", [](const std::string& r, const std::string&) { mkdir((r + "/empty-folder").c_str(), 0755); }},
      {"packed refs", [](const std::string& r, const std::string&) { git(r, {"pack-refs", "--all"}); }},
      {"a reflog", [](const std::string& r, const std::string& h) { git(r, {"update-ref", "--create-reflog", "refs/heads/other", h}); }},
      {"our ref outside the space", [](const std::string& r, const std::string& h) { git(r, {"update-ref", "refs/openchamber/start", h}); }},
      {"another space's ref", [](const std::string& r, const std::string& h) { git(r, {"update-ref", "refs/openchamber/spaces/ffffffffffff/start", h}); }},
      {"another ref in our space", [](const std::string& r, const std::string& h) { git(r, {"update-ref", std::string("refs/openchamber/spaces/") + kSpace + "/result", h}); }},
      {"rewritten loose object", [](const std::string& r, const std::string& h) {
         const std::string p = r + "/.git/objects/" + h.substr(0, 2) + "/" + h.substr(2);
         chmod(p.c_str(), 0644);
         write_file(p, "garbage", 0444);
       }},
      {"removed loose object", [](const std::string& r, const std::string& h) { unlink((r + "/.git/objects/" + h.substr(0, 2) + "/" + h.substr(2)).c_str()); }},
      {"loose object in a nested repository", [](const std::string& r, const std::string&) { git(r + "/nested", {"hash-object", "-w", "--stdin"}, "nested object\n"); }},
      {"a socket", [](const std::string& r, const std::string&) {
         const int fd = socket(AF_UNIX, SOCK_STREAM, 0);
         sockaddr_un addr{};
         addr.sun_family = AF_UNIX;
         const std::string p = r + "/sock";
         std::snprintf(addr.sun_path, sizeof addr.sun_path, "%s", p.c_str());
         ASSERT_EQ(bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
         close(fd);
       }},
      {"a FIFO", [](const std::string& r, const std::string&) { ASSERT_EQ(mkfifo((r + "/fifo").c_str(), 0644), 0); }},
      {"chmod +x of an untracked file", [](const std::string& r, const std::string&) { chmod((r + "/untracked with space.txt").c_str(), 0755); }},
      {"changed work tree bytes", [](const std::string& r, const std::string&) { write_file(r + "/run.sh", "#!/bin/sh\necho changed\n", 0755); }},
      {"changed symlink target", [](const std::string& r, const std::string&) {
         unlink((r + "/link-to-run").c_str());
         ASSERT_EQ(symlink("elsewhere", (r + "/link-to-run").c_str()), 0);
       }},
      {"changed index", [](const std::string& r, const std::string&) { git(r, {"add", "untracked with space.txt"}); }},
      {"file became a folder", [](const std::string& r, const std::string&) {
         unlink((r + "/third.txt").c_str());
         mkdir((r + "/third.txt").c_str(), 0755);
       }},
  };
  for (const Forbidden& c : cases) {
    testing::TempTree dir;
    const std::string repo = dir.path() + "/repo";
    testing::make_bait(repo);
    git(repo, {"config", "core.logAllRefUpdates", "false"});
    std::string head = git(repo, {"rev-parse", "HEAD"});
    head.pop_back();
    const Allowed allowed = testing::allowed_for(repo + "/.git", kSpace);
    const RepoState before = capture_state({repo});
    c.change(repo, head);
    EXPECT_FALSE(forbidden_changes(before, capture_state({repo}), allowed).empty()) << "not detected: " << c.name;
  }
}

TEST_F(RepoStateTest, DetectsOurStartRefMoved) {
  git(repo_, {"update-ref", std::string("refs/openchamber/spaces/") + kSpace + "/start", head_});
  const auto found = after([&] { git(repo_, {"update-ref", std::string("refs/openchamber/spaces/") + kSpace + "/start", "HEAD~1"}); });
  ASSERT_EQ(found.size(), 1u);
  EXPECT_NE(found[0].find("changed bytes"), std::string::npos) << found[0];
}

}  // namespace
}  // namespace controller::code
