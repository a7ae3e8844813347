// What `space create` asks the Docker engine, against the recording fake `docker`
// (testing/fake_docker.cc): one `docker info` for the engine's version and cores, the subnet
// allocation's reads of the engine's networks at the same time as the engine and image queries
// (not before them), and the space image inspected once for its ID and its environment (verify
// needs both). SPACECTL_UNDER_TEST runs the same against another build.
#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "controller/docker_place.h"
#include "controller/testing/fake_docker_fixture.h"
#include "tests/support/environment.h"

namespace controller {
namespace {

TEST(EngineFactsTest, OneInfoAnswerIsTheVersionAndTheCoresAndNothingElse) {
  Result<EngineFacts> ok = engine_facts_of("28.5.1 2\n", "docker info");
  ASSERT_TRUE(ok.ok()) << ok.error().message;
  EXPECT_EQ(ok->major, 28);
  EXPECT_EQ(ok->cpus, 2);
  for (const std::string bad : {"", "28.5.1", "28.5.1  2", "28.5.1 2 3", "28 2", "x.1 2",
                                "28.5.1 0", "28.5.1 100000", "28.5.1 -1", "\x1b[2J 2"}) {
    Result<EngineFacts> r = engine_facts_of(bad, "docker info (version and CPUs)");
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_EQ(r.error().message.rfind("docker info (version and CPUs): ", 0), 0U)
        << r.error().message;
    EXPECT_EQ(r.error().message.find('\x1b'), std::string::npos);
  }
}

class DockerCreateCallsTest : public FakeDockerTest {
 protected:
  void SetUp() override {
    FakeDockerTest::SetUp();
    // Two networks someone else made: the allocation lists them and reads their subnets.
    std::ofstream(dir_ + "/networks") << std::string(64, 'e') << " 172.17.0.0/16\n"
                                      << std::string(64, 'f') << " 10.213.0.0/29\n";
    std::filesystem::create_directories(dir_ + "/marks");
  }
  // A create that stops at its first network (everything before it has been asked by then).
  ProcessOutcome create(std::vector<std::string> env = {}) {
    std::filesystem::remove(dir_ + "/log");
    std::vector<std::string> prefix = {"env", "FAKE_DOCKER_FAIL=network create",
                                       "FAKE_DOCKER_NETWORKS=" + dir_ + "/networks",
                                       "FAKE_DOCKER_MARKS=" + dir_ + "/marks"};
    prefix.insert(prefix.end(), env.begin(), env.end());
    return spacectl({"space", "create", "--name", "t", "--memory", "512m"}, {}, prefix);
  }
  std::size_t count(const std::vector<std::string>& prefix) {
    std::size_t n = 0;
    for (const Call& c : calls()) {
      if (c.argv.size() >= prefix.size() &&
          std::equal(prefix.begin(), prefix.end(), c.argv.begin())) {
        ++n;
      }
    }
    return n;
  }
  std::string waited() {
    std::ifstream in(dir_ + "/marks/waited");
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  }
};

TEST_F(DockerCreateCallsTest, TheEnginesVersionAndCoresAreOneInfoCall) {
  const ProcessOutcome o = create();
  ASSERT_NE(o.exit_code, 0);  // stopped at its first network, as meant
  ASSERT_EQ(count({"network", "create"}), 2U) << o.out << o.err;
  EXPECT_EQ(count({"version"}), 0U) << "docker version asks again what docker info answers";
  EXPECT_EQ(count({"info"}), 1U);
  EXPECT_EQ(count({"info", "--format", "{{.ServerVersion}} {{.NCPU}}"}), 1U);
}

TEST_F(DockerCreateCallsTest, TheAllocationReadsTheNetworksWhileTheEngineIsAsked) {
  // The allocation's `network ls` is held until the engine's info call has started (at most 5 s):
  // made one after the other (the allocation first), it waits alone.
  const ProcessOutcome o = create({"FAKE_DOCKER_WAIT_MARK=network ls=info-"});
  ASSERT_NE(o.exit_code, 0);
  ASSERT_EQ(count({"network", "create"}), 2U) << o.out << o.err;
  // The first `network ls` is the allocation's (the rollback lists the space's networks later).
  EXPECT_EQ(waited().substr(0, 4), "met\n")
      << "the allocation read the networks before the engine was asked";
  // The allocation still took its blocks around the engine's networks.
  std::vector<std::string> subnets;
  for (const Call& c : calls()) {
    if (c.argv.size() < 2 || c.argv[0] != "network" || c.argv[1] != "create") continue;
    const auto s = std::find(c.argv.begin(), c.argv.end(), "--subnet");
    if (s != c.argv.end() && s + 1 != c.argv.end()) subnets.push_back(*(s + 1));
  }
  std::sort(subnets.begin(), subnets.end());
  EXPECT_EQ(subnets, (std::vector<std::string>{"10.213.0.16/29", "10.213.0.8/29"}));
}

TEST_F(DockerCreateCallsTest, TheSpaceImageIsInspectedOnceForItsIdAndItsEnvironment) {
  GK_REQUIRE(gk_test::running_as_root(),
             "create attaches each volume's disk image to a loop device (root)");
  // A whole create, up to verify (whose container inspects answer for another space: it refuses
  // and the create is rolled back).
  std::filesystem::remove(dir_ + "/log");
  (void)spacectl({"space", "create", "--name", "t", "--memory", "512m"});
  ASSERT_GE(count({"container", "inspect"}), 1U) << "the create did not reach verify";
  EXPECT_EQ(count({"image", "inspect"}), 2U) << "one inspect per pinned image";
  EXPECT_EQ(count({"image", "inspect", "--format", "{{.Id}} {{json .Config.Env}}"}), 2U);
}

}  // namespace
}  // namespace controller
