// The subnet pool live (controller/subnets.h, docs/subnets.md): with a /27 (four /29 blocks) whose
// first block another network already holds, a space gets the next two blocks on the engine, the
// next space is refused naming the pool, a removed space's blocks come back, a record left holding
// blocks is freed by sweep, and the blocks are then handed out again. Two real creates: short.
#include <unistd.h>

#include <filesystem>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "controller/docker_place.h"
#include "controller/engine_networks.h"
#include "controller/process.h"
#include "controller/records.h"
#include "controller/subnets.h"
#include "controller/testing/live_space.h"
#include "tests/support/environment.h"

namespace controller {
namespace {

using nlohmann::json;

using testing::docker;

class SubnetPoolLiveTest : public ::testing::Test {
 protected:
  // The shared live fixture (testing/live_space.h): owner, state, pins, profiles, and at the
  // end the proof that nothing of the owner is left; the pool is the one the test finds free.
  SubnetPoolLiveTest()
      : live_(
            testing::LiveSpaceOptions{"subnettest", testing::kReleasePin, std::chrono::minutes(3)}),
        foreign_("gk-subnettest-" + random_hex(4) + "-foreign") {}
  void TearDown() override {
    if (gk_test::docker_engine_answers()) (void)docker({"network", "rm", "--", foreign_});
  }
  bool ready() { return live_.ready(); }
  ProcessOutcome spacectl(const std::vector<std::string>& args) { return live_.spacectl(args); }
  static json doc(const ProcessOutcome& o) { return json::parse(o.out, nullptr, false); }
  // The subnet of a network as the engine has it.
  static std::string engine_subnet(const std::string& network) {
    ProcessOutcome o = docker({"network", "inspect", "--format",
                               "{{range .IPAM.Config}}{{.Subnet}}{{end}}", "--", network});
    while (!o.out.empty() && o.out.back() == '\n') o.out.pop_back();
    return o.out;
  }
  // A /27 in 10.213.240.0/20 that no network of the engine touches now.
  std::string free_pool(DockerPlace& place) {
    Result<std::vector<std::string>> used = engine_subnets(place, state_);
    if (!used) return {};
    std::vector<Ipv4Net> nets;
    for (const std::string& s : *used) {
      if (std::optional<Ipv4Net> n = parse_ipv4_net_loose(s); n) nets.push_back(*n);
    }
    Result<Ipv4Net> pool = first_free_block(*parse_ipv4_net("10.213.240.0/20"), 27, nets);
    return pool ? to_string(*pool) : std::string();
  }
  static std::string block(const Ipv4Net& pool, int i) {
    return to_string(Ipv4Net{pool.base + static_cast<std::uint32_t>(8 * i), 29});
  }

  testing::LiveSpace live_;
  const std::string& state_ = live_.state();
  std::string foreign_, pool_;
};

TEST_F(SubnetPoolLiveTest, SpacesTakeFreeBlocksOfTheirPoolAndGiveThemBack) {
  GK_REQUIRE(ready(),
             "needs a Docker engine, the pinned images and the seccomp profiles next to spacectl");
  PlaceOptions options;
  DockerPlace place(options);
  pool_ = free_pool(place);
  ASSERT_FALSE(pool_.empty()) << "no free /27 in 10.213.240.0/20 on this engine";
  live_.set_subnet_pool(pool_);
  const Ipv4Net pool = *parse_ipv4_net(pool_);

  // Someone else's network on the pool's first block: skipped, never overlapped.
  ASSERT_TRUE(
      docker({"network", "create", "--internal", "--subnet", block(pool, 0), "--", foreign_})
          .succeeded());

  const ProcessOutcome a =
      spacectl({"space", "create", "--name", "first", "--memory", "256m", "--disk", "64m"});
  ASSERT_EQ(a.exit_code, 0) << a.out << a.err;
  const std::string a_id = doc(a)["id"];
  EXPECT_EQ(engine_subnet("gk-" + a_id + "-network"), block(pool, 1));
  EXPECT_EQ(engine_subnet("gk-" + a_id + "-outer-network"), block(pool, 2));
  Result<SpaceRecord> a_record = read_record(state_, a_id);
  ASSERT_TRUE(a_record.ok());
  EXPECT_EQ(a_record->subnets.inner, block(pool, 1));
  EXPECT_EQ(a_record->subnets.outer, block(pool, 2));

  // One block left: the next create is refused before anything is made, naming the pool.
  const ProcessOutcome full =
      spacectl({"space", "create", "--name", "second", "--memory", "256m", "--disk", "64m"});
  EXPECT_EQ(full.exit_code, 3) << full.out << full.err;
  EXPECT_EQ(doc(full)["error"]["code"], "place_unusable") << full.out;
  EXPECT_NE(full.out.find("subnet pool " + pool_), std::string::npos) << full.out;

  // Removed: its blocks are free again. A record that outlived its space (nothing at the place
  // carries its id) holds them until sweep frees them.
  const ProcessOutcome removed = spacectl({"space", "remove", a_id});
  ASSERT_EQ(removed.exit_code, 0) << removed.out << removed.err;
  SpaceRecord stale;
  stale.subnets = {block(pool, 1), block(pool, 2)};
  ASSERT_TRUE(write_record(state_, "00000000dead", stale).ok());
  const ProcessOutcome held =
      spacectl({"space", "create", "--name", "held", "--memory", "256m", "--disk", "64m"});
  EXPECT_EQ(held.exit_code, 3) << held.out << held.err;

  const ProcessOutcome swept = spacectl({"sweep", "--grace", "0"});
  ASSERT_EQ(swept.exit_code, 0) << swept.out << swept.err;
  ASSERT_EQ(doc(swept)["subnets_freed"].size(), 1u) << swept.out;
  EXPECT_EQ(doc(swept)["subnets_freed"][0]["id"], "00000000dead") << swept.out;
  Result<SpaceRecord> kept = read_record(state_, "00000000dead");
  ASSERT_TRUE(kept.ok());
  EXPECT_TRUE(kept->subnets.inner.empty());

  const ProcessOutcome again =
      spacectl({"space", "create", "--name", "again", "--memory", "256m", "--disk", "64m"});
  ASSERT_EQ(again.exit_code, 0) << again.out << again.err;
  const std::string again_id = doc(again)["id"];
  EXPECT_EQ(engine_subnet("gk-" + again_id + "-network"), block(pool, 1));
  EXPECT_EQ(engine_subnet("gk-" + again_id + "-outer-network"), block(pool, 2));
  EXPECT_EQ(spacectl({"space", "remove", again_id}).exit_code, 0);
  EXPECT_FALSE(read_record(state_, again_id)->subnets.inner.size() > 0);
}

}  // namespace
}  // namespace controller
