// Place::connect through a live space (LABEL docker): our static bridge, placed by the Docker place,
// carries 64 MiB each way sha256-exact, half-closes, flushes before it exits, refuses an absent
// port with no output, and cannot be replaced by the space user.
#include <unistd.h>

#include <chrono>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "controller/dispatch/testing/live_inner.h"
#include "controller/dispatch/testing/pattern.h"
#include "controller/docker_place.h"
#include "controller/process.h"
#include "controller/testing/live_space.h"
#include "escape-suite/sha256.h"
#include "tests/support/environment.h"

namespace controller::dispatch {
namespace {

constexpr std::size_t k64MiB = 64u << 20;
constexpr std::uint16_t kRawPort = 4100;

using controller::testing::kLiveBin;
using testing::pattern;

class BridgeTest : public ::testing::Test {
 protected:
  // The shared live fixture (controller/testing/live_space.h) gives the owner, pins and profiles
  // and proves at the end that nothing of the owner is left; the space is the place's own.
  BridgeTest() : live_(controller::testing::LiveSpaceOptions{"bridgetest"}) {}
  void SetUp() override {
    GK_REQUIRE(live_.ready() && testing::inner_programs_built(),
               "no Docker engine, images, seccomp profiles, spacectl-bridge or "
               "dispatch-inner-server");
    options_ = live_.place_options();
    place_ = std::make_unique<DockerPlace>(options_);
    CreateRequest request;
    request.memory_bytes = 512ll << 20;
    Result<SpaceSummary> s = place_->create(request);
    ASSERT_TRUE(s.ok()) << s.error().message;
    id_ = s->id;
    // The stand-in inner server, written and started by the space user (a test program).
    ASSERT_TRUE(testing::start_inner_server(*place_, id_, "raw " + std::to_string(kRawPort)));
  }
  void TearDown() override {
    if (place_ && !id_.empty()) {
      Result<void> r = place_->remove(id_);
      EXPECT_TRUE(r.ok()) << r.error().message;
    }
  }
  ProcessOutcome through_bridge(const std::string& in, std::function<void(bool, std::string_view)> on_output = {}) {
    Result<std::vector<std::string>> argv = place_->connect(id_, kRawPort);
    EXPECT_TRUE(argv.ok()) << argv.error().message;
    ProcessRequest r;
    if (argv) r.argv = *argv;
    r.stdin_bytes = in;
    r.timeout = std::chrono::minutes(3);
    r.on_output = std::move(on_output);
    return run_process(r);
  }

  controller::testing::LiveSpace live_;
  PlaceOptions options_;
  std::unique_ptr<DockerPlace> place_;
  std::string id_;
};

TEST_F(BridgeTest, Carries64MiBIntoTheSpaceShaExact) {
  const std::string payload = pattern(k64MiB);
  const ProcessOutcome o = through_bridge("UP\n" + payload);
  EXPECT_TRUE(o.succeeded()) << o.describe();
  // The server answers only after the bridge passed stdin's end on as a half-close.
  EXPECT_EQ(o.out, escape::sha256_hex(payload) + "\n");
}

TEST_F(BridgeTest, Carries64MiBOutOfTheSpaceShaExactAndFlushesBeforeExit) {
  std::string got;
  const ProcessOutcome o = through_bridge("DOWN " + std::to_string(k64MiB) + "\n", [&](bool is_stderr, std::string_view b) {
    if (!is_stderr) got.append(b);
  });
  EXPECT_TRUE(o.succeeded()) << o.describe();
  ASSERT_EQ(got.size(), k64MiB);  // every byte the server wrote before closing reached the host
  EXPECT_EQ(escape::sha256_hex(got), escape::sha256_hex(pattern(k64MiB)));
}

TEST_F(BridgeTest, APortNobodyListensOnFailsWithNoOutput) {
  Result<std::vector<std::string>> argv = place_->connect(id_, 4199);
  ASSERT_TRUE(argv.ok()) << argv.error().message;
  ProcessRequest r;
  r.argv = *argv;
  r.timeout = std::chrono::seconds(30);
  const ProcessOutcome o = run_process(r);
  EXPECT_TRUE(o.exited);
  EXPECT_EQ(o.exit_code, 2);
  EXPECT_EQ(o.out, "");
  EXPECT_NE(o.err.find("connect 127.0.0.1"), std::string::npos) << o.err;
}

TEST_F(BridgeTest, TheSpaceUserCannotReplaceThePlacedBridge) {
  Result<std::vector<std::string>> argv = place_->connect(id_, kRawPort);
  ASSERT_TRUE(argv.ok()) << argv.error().message;
  const std::string path = (*argv)[argv->size() - 2];
  ASSERT_EQ(path.rfind("/tmp/spacectl-bridge-", 0), 0u) << path;
  for (const std::vector<std::string>& attempt :
       {std::vector<std::string>{"sh", "-c", "echo evil > " + path}, {"rm", "-f", path}, {"mv", path, "/tmp/moved"},
        {"chmod", "777", path.substr(0, path.rfind('/'))}}) {
    Result<ExecOutput> e = place_->exec(id_, ExecTarget::kSpace, attempt, {}, std::chrono::seconds(30));
    ASSERT_TRUE(e.ok()) << e.error().message;
    EXPECT_NE(e->exit_code, 0) << attempt[0] << " succeeded as the space user";
  }
  Result<std::string> ours = read_small_file(kLiveBin + "/spacectl-bridge", 16u << 20);
  ASSERT_TRUE(ours.ok());
  Result<ExecOutput> sum = place_->exec(id_, ExecTarget::kSpace, {"sha256sum", path}, {}, std::chrono::seconds(30));
  ASSERT_TRUE(sum.ok() && sum->exit_code == 0);
  EXPECT_EQ(sum->out.substr(0, 64), escape::sha256_hex(*ours));
  // The same start of the container reuses the placement, also from another DockerPlace value
  // of this process (serve makes one per call).
  Result<std::vector<std::string>> again = place_->connect(id_, kRawPort);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ((*again)[again->size() - 2], path);
  DockerPlace other(options_);
  Result<std::vector<std::string>> third = other.connect(id_, kRawPort);
  ASSERT_TRUE(third.ok());
  EXPECT_EQ((*third)[third->size() - 2], path);
}

}  // namespace
}  // namespace controller::dispatch
