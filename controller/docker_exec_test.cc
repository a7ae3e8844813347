// DockerPlace's exec against the recording fake `docker` (testing/fake_docker.cc), in this process:
// a container found ours once is reached by its ID without another inspect, and what the
// shortcut skips (the label and state check) still decides when the engine refused the exec.
#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "controller/docker_place.h"
#include "controller/testing/fake_docker_fixture.h"

namespace controller {
namespace {

constexpr char kId[] = "0123456789ab";
constexpr char kContainerId[] = "87daf9328b6ddc69e2ecc32d92cc545ad3746bf3d43f63650c1ba264b3ccee7e";

class DockerExecTest : public FakeDockerTest {
 protected:
  DockerPlace place() {
    PlaceOptions o;
    o.owner = "testowner";
    o.gatekeeper_image_file = dir_ + "/gk.id";
    o.space_image_file = dir_ + "/space.id";
    return DockerPlace(o);
  }
  std::size_t count(const std::vector<std::string>& prefix) {
    std::size_t n = 0;
    for (const Call& c : calls())
      if (c.argv.size() >= prefix.size() &&
          std::equal(prefix.begin(), prefix.end(), c.argv.begin()))
        ++n;
    return n;
  }
  // The exec calls' target (the word after their `--`).
  std::vector<std::string> exec_targets() {
    std::vector<std::string> out;
    for (const Call& c : calls()) {
      if (c.argv.empty() || c.argv[0] != "exec") continue;
      const auto dash = std::find(c.argv.begin(), c.argv.end(), "--");
      if (dash != c.argv.end() && dash + 1 != c.argv.end()) out.push_back(*(dash + 1));
    }
    return out;
  }
  // Answers with the space's container in state `status` (the testdata's, otherwise unchanged).
  std::string answers_with_state(const std::string& status) {
    std::ifstream in(std::string(CONTROLLER_TESTDATA) + "/container-inspect.json");
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const std::string running = "\"Status\": \"running\"";
    text.replace(text.find(running), running.size(), "\"Status\": \"" + status + "\"");
    const std::string out = dir_ + "/answers-" + status;
    std::filesystem::create_directories(out);
    std::ofstream(out + "/container-inspect.json") << text;
    return out;
  }
};

TEST_F(DockerExecTest, ASecondExecGoesToTheInspectedIdWithoutAnotherInspect) {
  DockerPlace p = place();
  for (int i = 0; i < 3; ++i) {
    Result<ExecOutput> r = p.exec(kId, ExecTarget::kSpace, {"true"}, {}, std::chrono::seconds(10));
    ASSERT_TRUE(r.ok()) << r.error().message;
    EXPECT_EQ(r->exit_code, 0);
  }
  EXPECT_EQ(count({"container", "inspect"}), 1u);
  EXPECT_EQ(exec_targets(), std::vector<std::string>(3, kContainerId)) << "by ID, never by name";
}

TEST_F(DockerExecTest, ExecArgvNamesTheInspectedIdAndReusesIt) {
  DockerPlace p = place();
  Result<std::vector<std::string>> a = p.exec_argv(kId);
  ASSERT_TRUE(a.ok()) << a.error().message;
  EXPECT_EQ(a->back(), kContainerId);
  Result<ExecOutput> r = p.exec(kId, ExecTarget::kSpace, {"true"}, {}, std::chrono::seconds(10));
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(count({"container", "inspect"}), 1u);
}

TEST_F(DockerExecTest, ACommandsOwnFailureIsItsAnswerWithoutAnotherInspect) {
  DockerPlace p = place();
  ASSERT_TRUE(p.exec(kId, ExecTarget::kSpace, {"true"}, {}, std::chrono::seconds(10)).ok());
  setenv("FAKE_DOCKER_EXEC_EXIT", "3", 1);
  setenv("FAKE_DOCKER_EXEC_STDERR", "test: no such file", 1);
  Result<ExecOutput> r = p.exec(kId, ExecTarget::kSpace, {"false"}, {}, std::chrono::seconds(10));
  unsetenv("FAKE_DOCKER_EXEC_EXIT");
  unsetenv("FAKE_DOCKER_EXEC_STDERR");
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->exit_code, 3);
  EXPECT_EQ(count({"container", "inspect"}), 1u);
}

TEST_F(DockerExecTest, AKnownContainerThatStoppedIsSpaceNotRunningAsWithoutTheShortcut) {
  DockerPlace p = place();
  ASSERT_TRUE(p.exec(kId, ExecTarget::kSpace, {"true"}, {}, std::chrono::seconds(10)).ok());
  // Stopped behind this place's back: the engine refuses the exec, the inspect says why.
  setenv("FAKE_DOCKER_ANSWERS", answers_with_state("exited").c_str(), 1);
  setenv("FAKE_DOCKER_EXEC_EXIT", "1", 1);
  setenv("FAKE_DOCKER_EXEC_STDERR",
         "Error response from daemon: Container 87daf9328b6d is not running", 1);
  Result<ExecOutput> r = p.exec(kId, ExecTarget::kSpace, {"true"}, {}, std::chrono::seconds(10));
  unsetenv("FAKE_DOCKER_EXEC_EXIT");
  unsetenv("FAKE_DOCKER_EXEC_STDERR");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, Code::kSpaceNotRunning) << r.error().message;
  // Forgotten: the next exec inspects first and is refused before any exec.
  const std::size_t execs = exec_targets().size();
  Result<ExecOutput> again =
      p.exec(kId, ExecTarget::kSpace, {"true"}, {}, std::chrono::seconds(10));
  ASSERT_FALSE(again.ok());
  EXPECT_EQ(again.error().code, Code::kSpaceNotRunning);
  EXPECT_EQ(exec_targets().size(), execs);
}

TEST_F(DockerExecTest, AKnownContainerThatIsGoneIsSpaceNotFound) {
  DockerPlace p = place();
  ASSERT_TRUE(p.exec(kId, ExecTarget::kSpace, {"true"}, {}, std::chrono::seconds(10)).ok());
  setenv("FAKE_DOCKER_ANSWERS", (dir_ + "/nothing").c_str(),
         1);  // every inspect: no such container
  setenv("FAKE_DOCKER_EXEC_EXIT", "1", 1);
  setenv("FAKE_DOCKER_EXEC_STDERR", "Error: No such container: 87daf9328b6d", 1);
  Result<ExecOutput> r = p.exec(kId, ExecTarget::kSpace, {"true"}, {}, std::chrono::seconds(10));
  unsetenv("FAKE_DOCKER_EXEC_EXIT");
  unsetenv("FAKE_DOCKER_EXEC_STDERR");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, Code::kSpaceNotFound) << r.error().message;
}

TEST_F(DockerExecTest, StopForgetsTheKnownContainers) {
  DockerPlace p = place();
  ASSERT_TRUE(p.exec(kId, ExecTarget::kSpace, {"true"}, {}, std::chrono::seconds(10)).ok());
  ASSERT_TRUE(p.stop(kId).ok());
  const std::size_t inspects = count({"container", "inspect"});
  ASSERT_TRUE(p.exec(kId, ExecTarget::kSpace, {"true"}, {}, std::chrono::seconds(10)).ok());
  EXPECT_EQ(count({"container", "inspect"}), inspects + 1);
}

TEST(EngineRefusalText, NamesTheEnginesOwnLinesOnly) {
  EXPECT_TRUE(engine_refusal_text("Error response from daemon: Container abc is not running\n"));
  EXPECT_TRUE(engine_refusal_text("Error: No such container: gk-0123456789ab-space\n"));
  EXPECT_TRUE(engine_refusal_text(
      "Error: can only create exec sessions on running containers: container state improper\n"));
  EXPECT_TRUE(engine_refusal_text(
      "some output\nOCI runtime exec failed: exec failed: unable to start container process\n"));
  EXPECT_FALSE(engine_refusal_text(""));
  EXPECT_FALSE(engine_refusal_text("fatal: not a git repository\n"));
  EXPECT_FALSE(engine_refusal_text("the text Error: inside a line\n"));
  EXPECT_FALSE(engine_refusal_text("Errors: 3\n"));
}

}  // namespace
}  // namespace controller
