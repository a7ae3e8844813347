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

namespace controller::apple {
namespace {

using nlohmann::json;

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

class FakeMac {
 public:
  FakeMac() {
    char tmpl[] = "/tmp/spacectl-fake-apple-XXXXXX";
    dir_ = mkdtemp(tmpl);
    setenv("FAKE_CONTAINER_STATE", dir_.c_str(), 1);
    setenv("FAKE_CONTAINER_LOG", (dir_ + "/log").c_str(), 1);
    setenv("FAKE_CONTAINER_REFUSED", (dir_ + "/refused").c_str(), 1);
    setenv("FAKE_CONTAINER_ANSWERS", APPLE_TESTDATA, 1);
    unsetenv("FAKE_CONTAINER_FORWARDING");
    unsetenv("FAKE_CONTAINER_DOWN");
    for (const char* name : {"gatekeeper", "space"}) {
      std::ofstream(dir_ + "/" + name + "-image.id")
          << "sha256:" << std::string(64, name[0] == 'g' ? 'b' : 'a') << "\n";
      std::ofstream(dir_ + "/" + name + "-image.digest")
          << "registry.test:5000/spaces/" << name
          << "@sha256:" << std::string(64, name[0] == 'g' ? 'd' : 'e') << "\n";
    }
  }
  ~FakeMac() {
    std::error_code ignored;
    std::filesystem::remove_all(dir_, ignored);
  }
  FakeMac(const FakeMac&) = delete;
  FakeMac& operator=(const FakeMac&) = delete;
  [[nodiscard]] PlaceOptions options(const std::string& owner) const {
    PlaceOptions o;
    o.owner = owner;
    o.gatekeeper_image_file = dir_ + "/gatekeeper-image.id";
    o.space_image_file = dir_ + "/space-image.id";
    o.place_program = FAKE_CONTAINER;
    return o;
  }
  [[nodiscard]] json state() const {
    const std::string t = slurp(dir_ + "/state.json");
    return t.empty() ? json{{"containers", json::array()},
                            {"networks", json::array()},
                            {"volumes", json::array()}}
                     : json::parse(t);
  }
  void set_state(const json& s) const { std::ofstream(dir_ + "/state.json") << s.dump(1); }
  [[nodiscard]] std::string refused() const { return slurp(dir_ + "/refused"); }
  [[nodiscard]] std::string leftovers(const std::string& owner) const {
    std::string out = refused();
    const json s = state();
    for (const char* kind : {"containers", "networks", "volumes"})
      for (const json& o : s[kind]) {
        const json labels =
            o.contains("configuration") ? o["configuration"]["labels"] : o["labels"];
        if (labels.value("spacectl.space.owner", "") == owner)
          out += std::string(kind) + " " + o.dump().substr(0, 80) + " is left\n";
      }
    return out;
  }

 private:
  std::string dir_;
};

std::map<std::string, std::unique_ptr<FakeMac>>& macs() {
  static std::map<std::string, std::unique_ptr<FakeMac>> m;
  return m;
}

}  // namespace
}  // namespace controller::apple

namespace controller::contract {
namespace {

INSTANTIATE_TEST_SUITE_P(AppleContainerFake, PlaceContractTest,
                         ::testing::Values(PlaceUnderTest{
                             "apple_container_fake", nullptr,
                             [](const std::string& owner) -> std::unique_ptr<Place> {
                               auto& m = apple::macs()[owner];
                               m = std::make_unique<apple::FakeMac>();
                               return std::make_unique<apple::AppleContainerPlace>(
                                   m->options(owner));
                             },
                             [](const std::string& owner) {
                               auto it = apple::macs().find(owner);
                               if (it == apple::macs().end())
                                 return std::string("no fake Mac for ") + owner;
                               std::string out = it->second->leftovers(owner);
                               apple::macs().erase(it);
                               return out;
                             }}),
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
       {space_create_argv(s), gatekeeper_create_argv(s), setup_run_argv(s)})
    for (const std::string& flag : a)
      for (const char* never : {"-v", "--volume", "-p", "--publish", "--publish-socket", "--ssh",
                                "--virtualization", "--rosetta", "--cap-add=ALL"})
        EXPECT_NE(flag, never);
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
        "gatekeeper_cap_add", "gatekeeper_ssh"})
    EXPECT_NE(all.find(want), std::string::npos) << want << "\n" << all;
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
