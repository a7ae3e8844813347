// The place contract suite against the in-memory fake (label unit): the suite itself is tested on
// every build, without a runtime.
#include "controller/testing/memory_place.h"
#include "controller/manager.h"
#include "controller/place_contract_test.h"
#include "controller/registry.h"
#include "controller/render.h"

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
  Result<PlaceList> list = list_places(r, PlaceOptions{});
  ASSERT_TRUE(list.ok());
  const Result<nlohmann::json> doc = to_json(*list);  // the document `place list --json` prints
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

TEST(PlaceListTest, TheBuiltInRegistryHoldsEveryPlace) {
  EXPECT_EQ(builtin_registry().names(),
            (std::vector<std::string>{"apple-container", "docker", "docker-ssh", "kubernetes",
                                      "podman"}));
  PlaceOptions o;
  Result<std::unique_ptr<Place>> ssh = builtin_registry().make("docker-ssh", o);
  ASSERT_FALSE(ssh.ok());
  EXPECT_EQ(ssh.error().code, Code::kUsage);
  o.engine.host = "ssh://gk@127.0.0.1:2222";
  EXPECT_TRUE(builtin_registry().make("docker-ssh", o).ok());
  // Kubernetes needs its context and namespace base, never the kubeconfig's current ones.
  EXPECT_EQ(builtin_registry().make("kubernetes", o).error().code, Code::kUsage);
  EXPECT_EQ(builtin_registry().make("swarm", o).error().code, Code::kPlaceNotFound);
}

// place list says, for each place, how far it has been proved: the engines run live in CI; the
// Kubernetes and Apple container places are built against their documented interfaces only.
TEST(PlaceListTest, EachPlaceSaysWhetherItHasRunLive) {
  const Registry r = builtin_registry();
  for (const char* live : {"docker", "docker-ssh", "podman"}) {
    EXPECT_EQ(r.proved(live), kRunLive) << live;
  }
  for (const char* documented : {"kubernetes", "apple-container"}) {
    EXPECT_EQ(r.proved(documented), kNotRunLive) << documented;
    EXPECT_NE(r.proved(documented).find("built against the documented interface, not yet run live"),
              std::string::npos);
  }
  Registry one;
  one.add(
      "kubernetes",
      [](const PlaceOptions&) -> Result<std::unique_ptr<Place>> {
        return fail(Code::kUsage, "place kubernetes: needs --context NAME");
      },
      std::string(kNotRunLive));
  PlaceOptions o;
  Result<PlaceList> list = list_places(one, o);
  ASSERT_TRUE(list.ok());
  const Result<nlohmann::json> doc = to_json(*list);
  EXPECT_EQ((*doc)["places"][0]["state"], "not_configured");
  EXPECT_EQ((*doc)["places"][0]["proved"], std::string(kNotRunLive));
}

}  // namespace
}  // namespace controller
