// The Apple container place without a Mac: the contract suite, the exact argv of each step,
// verify's read-back of what the CLI stored, and the place check's probes, all through the fake
// `container` (testing/fake_container.cc).
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>

#include <gtest/gtest.h>

#include "controller/apple_place.h"
#include "controller/place_contract_test.h"
#include "controller/registry.h"
#include "controller/testing/fake_place_dir.h"

namespace controller::apple {
namespace {

using nlohmann::json;

// A fresh fake Mac for one test (testing/fake_place_dir.h: a state folder for
// testing/fake_container.cc, the variables that point it there, pins by digest).
class FakeMac : public testing::FakePlaceDir {
 public:
  FakeMac() : FakePlaceDir("FAKE_CONTAINER", APPLE_TESTDATA) {
    unsetenv("FAKE_CONTAINER_FORWARDING");
    unsetenv("FAKE_CONTAINER_DOWN");
  }
  [[nodiscard]] PlaceOptions options(const std::string& owner) const {
    return FakePlaceDir::options(owner, FAKE_CONTAINER);
  }
  [[nodiscard]] json state() const {
    return FakePlaceDir::state(
        {{"containers", json::array()}, {"networks", json::array()}, {"volumes", json::array()}});
  }
  // Containers, networks and volumes of `owner` still on the Mac, and every argv the fake refused.
  [[nodiscard]] std::string leftovers(const std::string& owner) const {
    std::string out = refused();
    const json s = state();
    for (const char* kind : {"containers", "networks", "volumes"}) {
      for (const json& o : s[kind]) {
        const json labels =
            o.contains("configuration") ? o["configuration"]["labels"] : o["labels"];
        if (labels.value("spacectl.space.owner", "") == owner) {
          out += std::string(kind) + " " + o.dump().substr(0, 80) + " is left\n";
        }
      }
    }
    return out;
  }
};

}  // namespace
}  // namespace controller::apple

namespace controller::contract {
namespace {

INSTANTIATE_TEST_SUITE_P(
    AppleContainerFake, PlaceContractTest,
    ::testing::Values(over_fake<apple::FakeMac>(
        "apple_container_fake",
        [](const apple::FakeMac& mac, const std::string& owner) -> std::unique_ptr<Place> {
          return std::make_unique<apple::AppleContainerPlace>(mac.options(owner));
        })),
    place_name);

}  // namespace
}  // namespace controller::contract

namespace controller::apple {
namespace {

AppleSpec golden() {
  AppleSpec s;
  s.id = "0123456789ab";
  s.owner = "owner1";
  s.name = "golden";
  s.created = "2026-12-01T00:00:00Z";
  s.gatekeeper_image = "registry.test:5000/spaces/gatekeeper@sha256:" + std::string(64, 'd');
  s.space_image = "registry.test:5000/spaces/space@sha256:" + std::string(64, 'e');
  s.memory_bytes = 512ll << 20;
  s.cpus = 2;
  s.disk_bytes = 1ll << 30;
  s.window_key = std::string(64, 'c');
  s.inner_subnet = "192.168.64.0/24";
  s.gatekeeper_address = "192.168.64.2";
  return s;
}

std::vector<std::string> without_labels(std::vector<std::string> a) {
  std::vector<std::string> out;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (a[i] == "--label") {
      ++i;
      continue;
    }
    out.push_back(a[i]);
  }
  return out;
}

TEST(AppleArgvTest, TheSpaceIsOnTheHostOnlyNetworkOnlyWithItsLimitsAndVolumes) {
  const AppleSpec s = golden();
  EXPECT_EQ(
      without_labels(network_create_argv(s, Role::kInnerNetwork)),
      (std::vector<std::string>{"network", "create", "--internal", "gk-0123456789ab-network"}));
  EXPECT_EQ(without_labels(network_create_argv(s, Role::kOuterNetwork)),
            (std::vector<std::string>{"network", "create", "gk-0123456789ab-outer-network"}));
  EXPECT_EQ(without_labels(volume_create_argv(s, Role::kWorkVolume)),
            (std::vector<std::string>{"volume", "create", "-s", "1073741824",
                                      "gk-0123456789ab-volume-work"}));
  const std::vector<std::string> space = without_labels(space_create_argv(s));
  const std::vector<std::string> head(space.begin(), space.begin() + 26);
  EXPECT_EQ(head, (std::vector<std::string>{
                      "create",
                      "--name",
                      "gk-0123456789ab-space",
                      "--init",
                      "--user",
                      "70000:70000",
                      "--read-only",
                      "--cap-drop",
                      "ALL",
                      "--ulimit",
                      "core=0:0",
                      "--memory",
                      "512M",
                      "--cpus",
                      "2",
                      "--no-dns",
                      "--network",
                      "gk-0123456789ab-network",
                      "--tmpfs",
                      "/tmp",
                      "--mount",
                      "type=volume,source=gk-0123456789ab-volume-home,target=/home/space",
                      "--mount",
                      "type=volume,source=gk-0123456789ab-volume-work,target=/spaces/0123456789ab",
                      "--env",
                      "HOME=/home/space"}));
  EXPECT_EQ(space.back(), s.space_image);
  // No flag that shares the Mac: no -v, no --publish, no --ssh, no --virtualization, no --rosetta.
  for (const std::vector<std::string>& a :
       {space_create_argv(s), gatekeeper_create_argv(s), setup_run_argv(s)}) {
    for (const std::string& flag : a) {
      for (const char* never : {"-v", "--volume", "-p", "--publish", "--publish-socket", "--ssh",
                                "--virtualization", "--rosetta", "--cap-add=ALL"}) {
        EXPECT_NE(flag, never);
      }
    }
  }
  const std::vector<std::string> gk = without_labels(gatekeeper_create_argv(s));
  EXPECT_EQ(
      std::vector<std::string>(gk.end() - 4, gk.end()),
      (std::vector<std::string>{s.gatekeeper_image, "serve", "--inner-subnet", "192.168.64.0/24"}));
  const std::vector<std::string> env = space_environment(s);
  EXPECT_EQ(env.back(), "GATEKEEPER_WINDOW=http://192.168.64.2:8080/k/" + s.window_key);
}

class ApplePlaceTest : public ::testing::Test {
 protected:
  FakeMac mac;
  AppleContainerPlace place{mac.options("appleowner")};
  void TearDown() override { EXPECT_EQ(mac.refused(), ""); }
};

TEST_F(ApplePlaceTest, VerifyNamesWhatChangedInTheStoredConfiguration) {
  CreateRequest r;
  r.memory_bytes = 256ll << 20;
  Result<SpaceSummary> made = place.create(r);
  ASSERT_TRUE(made.ok()) << made.error().message;
  json s = mac.state();
  for (json& c : s["containers"]) {
    json& conf = c["configuration"];
    if (c["id"] == "gk-" + made->id + "-space") {
      conf["readOnly"] = false;
      conf["mounts"].push_back({{"type", {{"virtiofs", json::object()}}},
                                {"source", "/Users/user"},
                                {"destination", "/mnt"},
                                {"options", json::array()}});
      conf["publishedPorts"].push_back({{"hostPort", 8080}});
      conf["initProcess"]["environment"].push_back("OPENAI_API_KEY=sk-x");
    } else {
      conf["capAdd"].push_back("NET_ADMIN");
      conf["ssh"] = true;
    }
  }
  mac.set_state(s);
  Result<std::vector<Difference>> v = place.verify(made->id);
  ASSERT_TRUE(v.ok()) << v.error().message;
  std::string all;
  for (const Difference& d : *v) all += d.check + ": " + d.message + "\n";
  for (const char* want :
       {"read_only", "host_share", "published", "env: environment holds OPENAI_API_KEY",
        "gatekeeper_cap_add", "gatekeeper_ssh"}) {
    EXPECT_NE(all.find(want), std::string::npos) << want << "\n" << all;
  }
  Result<void> started = place.start(made->id);
  ASSERT_FALSE(started.ok());
  EXPECT_EQ(started.error().code, Code::kVerifyFailed);
  ASSERT_TRUE(place.remove(made->id).ok());
  EXPECT_EQ(mac.leftovers("appleowner"), "");
}

TEST_F(ApplePlaceTest, AMacThatForwardsCannotRestrictTheNetwork) {
  Result<CheckReport> ok = place.check();
  ASSERT_TRUE(ok.ok()) << ok.error().message;
  EXPECT_TRUE(ok->isolation_proved);
  EXPECT_TRUE(ok->positive_control);
  setenv("FAKE_CONTAINER_FORWARDING", "1", 1);
  Result<CheckReport> r = place.check();
  unsetenv("FAKE_CONTAINER_FORWARDING");
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_FALSE(r->isolation_proved);
  EXPECT_TRUE(r->positive_control);
  EXPECT_NE(r->findings.back().find("unusable for allowlist spaces"), std::string::npos)
      << r->findings.back();
  EXPECT_EQ(mac.leftovers("appleowner"), "") << "the probes are gone";
}

TEST_F(ApplePlaceTest, AStoppedApiServerIsUnreachableNeverAnEmptyList) {
  setenv("FAKE_CONTAINER_DOWN", "1", 1);
  Result<std::vector<SpaceSummary>> all = place.list();
  unsetenv("FAKE_CONTAINER_DOWN");
  ASSERT_FALSE(all.ok());
  EXPECT_EQ(all.error().code, Code::kPlaceUnreachable);
}

TEST(AppleRegistryTest, TheRegistryHoldsAppleContainer) {
  PlaceOptions o;
  o.owner = "owner1";
  EXPECT_TRUE(builtin_registry().make("apple-container", o).ok());
}

}  // namespace
}  // namespace controller::apple
