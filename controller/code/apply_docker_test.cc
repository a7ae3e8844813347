// The whole journey on real Docker (label docker; skip without an engine, fail under CI=true):
// code in → the agent changes the project inside (a commit and uncommitted edits) → code out →
// apply as a branch and as changes. The user's repository ends holding exactly the space's work,
// and `space remove` takes the space's refs away again.
#include <sys/stat.h>
#include <unistd.h>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "controller/code/testing/git_fixture.h"
#include "controller/code/testing/live_code.h"
#include "controller/process.h"
#include "tests/support/environment.h"

namespace controller::code {
namespace {

using nlohmann::json;
using testing::git;
using testing::read_file;
using testing::write_file;

std::string trim(std::string s) {
  while (!s.empty() && s.back() == '\n') s.pop_back();
  return s;
}

// The shared code fixture (controller/code/testing/live_code.h): owner, state, HOME, the leftover
// check.
class ApplyDockerTest : public testing::LiveCodeTest {
 protected:
  ApplyDockerTest() : LiveCodeTest("apply") {}
  json must(const std::vector<std::string>& args) {
    const ProcessOutcome o = spacectl(args);
    EXPECT_EQ(o.exit_code, 0) << args[0] << " " << (args.size() > 1 ? args[1] : "") << ": " << o.out
                              << o.err;
    return json::parse(o.out, nullptr, false);
  }
};

TEST_F(ApplyDockerTest, WorkMadeInsideComesBackAsABranchAndAsChanges) {
  GK_REQUIRE(ready(), "no Docker engine, images or seccomp profiles (cmake --build <dir> --target images)");
  const std::string repo = dir_.path() + "/project";
  ASSERT_EQ(testing::git_status("/", {"init", "-q", repo}), 0);
  write_file(repo + "/README.md", "# project\n\nline two\n");
  write_file(repo + "/main.c", "int main(void) { return 0; }\n");
  git(repo, {"add", "."});
  git(repo, {"commit", "-qm", "first"});
  write_file(repo + "/notes.txt", "the user's uncommitted notes\n");

  const json created = must({"space", "create", "--name", "apply", "--memory", "512m", "--repo", repo});
  ASSERT_TRUE(created.is_object());
  const std::string id = created["id"].get<std::string>();
  const std::string path = created["code"]["space_path"].get<std::string>();

  // The agent's work: one commit, then uncommitted edits and a new file.
  const std::string work =
      "cd \"$1\" && printf '# project\\n\\nline two (agent)\\n' > README.md && git commit -qam 'agent: readme' && "
      "printf 'int main(void) { return 1; }\\n' > main.c && mkdir -p src && printf 'new\\n' > src/new.c";
  const ProcessOutcome inside = spacectl({"space", "exec", id, "--", "sh", "-c", work, "sh", path}, false);
  ASSERT_EQ(inside.exit_code, 0) << inside.out << inside.err;

  const json out = must({"code", "out", id});
  ASSERT_TRUE(out.is_object());
  const std::string result = trim(git(repo, {"rev-parse", "refs/openchamber/spaces/" + id + "/result"}));

  const json branch = must({"apply", id, "--as-branch", "agent-work"});
  EXPECT_EQ(branch["commit"], result);
  EXPECT_EQ(git(repo, {"diff", "--name-only", "HEAD", "agent-work"}), "README.md\nmain.c\nnotes.txt\nsrc/new.c\n");
  EXPECT_EQ(git(repo, {"show", "agent-work:README.md"}), "# project\n\nline two (agent)\n");

  const json state = must({"apply-state", id});
  EXPECT_EQ(state["changes_route"], "open");
  const json changes = must({"apply", id, "--as-changes"});
  EXPECT_EQ(changes["status"], "applied");
  EXPECT_EQ(changes["applied_paths"], json::array({"README.md", "main.c", "src/new.c"}));
  EXPECT_EQ(read_file(repo + "/README.md"), "# project\n\nline two (agent)\n");
  EXPECT_EQ(read_file(repo + "/src/new.c"), "new\n");
  EXPECT_EQ(read_file(repo + "/notes.txt"), "the user's uncommitted notes\n");
  EXPECT_EQ(trim(git(repo, {"rev-parse", "HEAD"})), trim(git(repo, {"rev-parse", "main"})));  // HEAD never moves

  const json removed = must({"space", "remove", id});
  EXPECT_EQ(testing::git_status(repo, {"rev-parse", "--verify", "-q", "refs/openchamber/spaces/" + id + "/result"}), 1);
  EXPECT_EQ(trim(git(repo, {"rev-parse", "agent-work"})), result);  // the user's branch stays
}

}  // namespace
}  // namespace controller::code
