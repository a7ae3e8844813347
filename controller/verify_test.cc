// verify against canned `docker inspect` output (Engine 20.10, a container made with every flag):
// the clean document has no difference; removing one setting names exactly that check.
#include <fstream>
#include <iterator>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "controller/verify.h"

namespace controller {
namespace {

using nlohmann::json;

json load(const char* name) {
  std::ifstream in(std::string(CONTROLLER_TESTDATA) + "/" + name);
  return json::parse(std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()))[0];
}

std::string stand_in_profile() {
  std::ifstream in(std::string(CONTROLLER_TESTDATA) + "/seccomp-stand-in.json");
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

ContainerExpectation canned_expectation() {
  ContainerExpectation e;
  e.role = Role::kSpace;
  e.user = "1000:1000";
  e.seccomp_profile = stand_in_profile();
  e.memory = kMinSpaceMemory;
  e.inner_network = "t-in";
  e.networks = {"t-in"};
  e.tmpfs_tmp = true;
  e.volumes = {{"t-h", "/home/space"}};
  e.env_exact = {"HOME=/home/space"};
  e.owner = "testowner";
  e.id = "0123456789ab";
  return e;
}

std::vector<std::string> checks(const json& doc) {
  std::vector<std::string> out;
  for (const Difference& d : verify_container(doc, canned_expectation())) out.push_back(d.check);
  return out;
}

TEST(VerifyTest, CleanContainerHasNoDifference) {
  EXPECT_TRUE(checks(load("container-inspect.json")).empty());
}

struct Mutation {
  const char* check;
  void (*apply)(json&);
};

TEST(VerifyTest, EachMissingFlagIsNamed) {
  const Mutation mutations[] = {
      {"read_only", [](json& c) { c["HostConfig"]["ReadonlyRootfs"] = false; }},
      {"cap_drop", [](json& c) { c["HostConfig"]["CapDrop"] = nullptr; }},
      {"cap_add", [](json& c) { c["HostConfig"]["CapAdd"] = json::array({"NET_RAW"}); }},
      {"no_new_privileges", [](json& c) { c["HostConfig"]["SecurityOpt"].erase(0); }},
      {"seccomp", [](json& c) { c["HostConfig"]["SecurityOpt"] = json::array({"no-new-privileges"}); }},
      {"security_options", [](json& c) { c["HostConfig"]["SecurityOpt"].push_back("apparmor=unconfined"); }},
      {"privileged", [](json& c) { c["HostConfig"]["Privileged"] = true; }},
      {"init", [](json& c) { c["HostConfig"]["Init"] = nullptr; }},
      {"pids_limit", [](json& c) { c["HostConfig"]["PidsLimit"] = nullptr; }},
      {"memory_swap", [](json& c) { c["HostConfig"]["MemorySwap"] = -1; }},
      {"shm_size", [](json& c) { c["HostConfig"]["ShmSize"] = 1; }},
      {"log_limit", [](json& c) { c["HostConfig"]["LogConfig"]["Type"] = "json-file"; }},
      {"user", [](json& c) { c["Config"]["User"] = ""; }},
      {"binds", [](json& c) { c["HostConfig"]["Binds"] = json::array({"/:/host"}); }},
      {"runtime_socket", [](json& c) {
         c["Mounts"].push_back({{"Type", "volume"}, {"Source", "/var/run/docker.sock"}, {"Destination", "/s"}});
       }},
      {"namespace", [](json& c) { c["HostConfig"]["PidMode"] = "host"; }},
      {"namespace", [](json& c) { c["HostConfig"]["IpcMode"] = "shareable"; }},
      {"network_mode", [](json& c) { c["HostConfig"]["NetworkMode"] = "bridge"; }},
      {"networks", [](json& c) { c["NetworkSettings"]["Networks"]["bridge"] = json::object(); }},
      {"sysctls", [](json& c) { c["HostConfig"]["Sysctls"] = {{"net.ipv4.ip_forward", "1"}}; }},
      {"runtime", [](json& c) { c["HostConfig"]["Runtime"] = "runsc-unknown"; }},
      {"devices", [](json& c) { c["HostConfig"]["Devices"] = json::array({{{"PathOnHost", "/dev/kvm"}}}); }},
      {"port_bindings", [](json& c) { c["HostConfig"]["PortBindings"] = {{"80/tcp", json::array()}}; }},
      {"tmpfs", [](json& c) { c["HostConfig"]["Tmpfs"]["/run"] = "rw"; }},
      {"environment", [](json& c) { c["Config"]["Env"].push_back("OPENAI_API_KEY=x"); }},
      {"labels", [](json& c) { c["Config"]["Labels"]["spacectl.space.owner"] = "someone-else"; }},
      {"masked_paths", [](json& c) { c["HostConfig"]["MaskedPaths"] = json::array(); }},
      {"restart_policy", [](json& c) { c["HostConfig"]["RestartPolicy"]["Name"] = "always"; }},
  };
  for (const Mutation& m : mutations) {
    json doc = load("container-inspect.json");
    m.apply(doc);
    const std::vector<std::string> got = checks(doc);
    EXPECT_NE(std::find(got.begin(), got.end(), m.check), got.end()) << "mutation for " << m.check << " not reported";
  }
}

TEST(VerifyTest, GatekeeperChecksArePrefixedAndMemoryIsExact) {
  json doc = load("container-inspect.json");
  ContainerExpectation e = canned_expectation();
  e.role = Role::kGatekeeper;
  e.memory = kGatekeeperMemory;
  e.memory_exact = true;
  e.alias = true;
  doc["Config"]["Labels"]["spacectl.space.role"] = "gatekeeper";
  std::vector<std::string> got;
  for (const Difference& d : verify_container(doc, e)) got.push_back(d.check);
  EXPECT_NE(std::find(got.begin(), got.end(), "gatekeeper_memory_limit"), got.end());
  doc["NetworkSettings"]["Networks"]["t-in"]["Aliases"] = json::array();
  got.clear();
  for (const Difference& d : verify_container(doc, e)) got.push_back(d.check);
  EXPECT_NE(std::find(got.begin(), got.end(), "gatekeeper_alias"), got.end());
}

json inner_network(bool with_option, bool with_gateway) {
  json n = {{"Name", "gk-0123456789ab-network"}, {"Id", "ea453ac19416b981a66d"}, {"Driver", "bridge"},
            {"Internal", true}, {"EnableIPv6", false},
            {"Labels", {{"spacectl.space", "true"}, {"spacectl.space.id", "0123456789ab"},
                        {"spacectl.space.owner", "testowner"}, {"spacectl.space.role", "network"}}},
            {"Options", json::object()}};
  if (with_option) n["Options"]["com.docker.network.bridge.inhibit_ipv4"] = "true";
  n["IPAM"]["Config"] = json::array({{{"Subnet", "172.19.0.0/16"}}});
  if (with_gateway) n["IPAM"]["Config"][0]["Gateway"] = "172.19.0.1";
  return n;
}

std::vector<std::string> network_checks(const json& n, const HostAddressProbe& probe) {
  NetworkExpectation want{"gk-0123456789ab-network", true, true, Role::kInnerNetwork, "testowner", "0123456789ab"};
  std::vector<std::string> out;
  for (const Difference& d : verify_network(n, want, probe)) out.push_back(d.check);
  return out;
}

TEST(VerifyTest, InnerNetworkWithoutHostAddressPasses) {
  EXPECT_TRUE(network_checks(inner_network(true, false), nullptr).empty());
  // Engine 20.10 lists a gateway even with inhibit_ipv4: the bridge itself must hold no address.
  EXPECT_TRUE(network_checks(inner_network(true, true), [](const std::string& ifname) -> std::optional<bool> {
                EXPECT_EQ(ifname, "br-ea453ac19416");
                return false;
              }).empty());
}

TEST(VerifyTest, HostAddressOnInnerBridgeIsNamed) {
  const auto has = [](const std::string&) -> std::optional<bool> { return true; };
  const auto invisible = [](const std::string&) -> std::optional<bool> { return std::nullopt; };
  EXPECT_EQ(network_checks(inner_network(true, true), has), std::vector<std::string>{"network_host_isolation"});
  EXPECT_EQ(network_checks(inner_network(true, true), invisible), std::vector<std::string>{"network_host_isolation"});
  const std::vector<std::string> no_option = network_checks(inner_network(false, false), nullptr);
  EXPECT_EQ(no_option, std::vector<std::string>{"network_host_isolation"});
  json not_internal = inner_network(true, false);
  not_internal["Internal"] = false;
  EXPECT_EQ(network_checks(not_internal, nullptr), std::vector<std::string>{"network_internal"});
}

}  // namespace
}  // namespace controller
