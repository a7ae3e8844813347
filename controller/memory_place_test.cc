// The place contract suite against the in-memory fake (label unit): the suite itself is tested on
// every build, without a runtime.
#include "controller/testing/memory_place.h"
#include "controller/manager.h"
#include "controller/place_contract_test.h"
#include "controller/registry.h"

namespace controller::contract {
namespace {

INSTANTIATE_TEST_SUITE_P(
    Memory, PlaceContractTest,
    ::testing::Values(PlaceUnderTest{
        "memory", nullptr, [](const std::string&) -> std::unique_ptr<Place> { return std::make_unique<testing::MemoryPlace>(); },
        nullptr}),
    place_name);

}  // namespace
}  // namespace controller::contract

namespace controller {
namespace {

// `spacectl place list`: every registered place, probed in turn; one that cannot be made (no host
// for docker-ssh) is "not_configured", never skipped, and only a place whose isolation probe and
// positive control both held can restrict the network.
TEST(PlaceListTest, EveryPlaceIsListedWithItsStateAndWhetherItRestrictsTheNetwork) {
  Registry r;
  r.add("memory", [](const PlaceOptions&) -> Result<std::unique_ptr<Place>> {
    return std::unique_ptr<Place>(std::make_unique<testing::MemoryPlace>());
  });
  r.add("needs-host", [](const PlaceOptions&) -> Result<std::unique_ptr<Place>> {
    return fail(Code::kUsage, "place needs-host: needs --host");
  });
  Result<nlohmann::json> doc = list_places(r, PlaceOptions{});
  ASSERT_TRUE(doc.ok());
  const nlohmann::json& places = (*doc)["places"];
  ASSERT_EQ(places.size(), 2u);
  EXPECT_EQ(places[0]["place"], "memory");
  EXPECT_EQ(places[0]["state"], "usable");
  EXPECT_EQ(places[0]["restricts_network"], true);
  EXPECT_EQ(places[1]["place"], "needs-host");
  EXPECT_EQ(places[1]["state"], "not_configured");
  EXPECT_EQ(places[1]["restricts_network"], false);
  EXPECT_EQ(places[1]["detail"], "place needs-host: needs --host");
}

TEST(PlaceListTest, TheBuiltInRegistryHoldsDockerDockerSshAndPodman) {
  EXPECT_EQ(builtin_registry().names(),
            (std::vector<std::string>{"docker", "docker-ssh", "podman"}));
  PlaceOptions o;
  Result<std::unique_ptr<Place>> ssh = builtin_registry().make("docker-ssh", o);
  ASSERT_FALSE(ssh.ok());
  EXPECT_EQ(ssh.error().code, Code::kUsage);
  o.engine.host = "ssh://gk@127.0.0.1:2222";
  EXPECT_TRUE(builtin_registry().make("docker-ssh", o).ok());
  EXPECT_EQ(builtin_registry().make("kubernetes", o).error().code, Code::kPlaceNotFound);
}

}  // namespace
}  // namespace controller
