// verify against canned `docker inspect` output (Engine 20.10, a container made with every flag):
// the clean document has no difference; removing one setting names exactly that check.
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "controller/io_weight.h"
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
  e.user = "70000:70000";
  e.seccomp_profile = stand_in_profile();
  e.memory = kMinSpaceMemory;
  e.cpu_shares = kSpaceCpuShares;
  e.blkio_weight = kSpaceBlkioWeight;
  e.cpu_quota = true;
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
      // What an outside review found verify did not see.
      {"extra_hosts", [](json& c) { c["HostConfig"]["ExtraHosts"] = json::array({"gatekeeper:203.0.113.7"}); }},
      {"dns", [](json& c) { c["HostConfig"]["Dns"] = json::array({"203.0.113.53"}); }},
      {"dns", [](json& c) { c["HostConfig"]["DnsOptions"] = json::array({"ndots:0"}); }},
      {"dns", [](json& c) { c["HostConfig"]["DnsSearch"] = json::array({"example.com"}); }},
      {"links", [](json& c) { c["HostConfig"]["Links"] = json::array({"/other:/t-c/other"}); }},
      {"cgroup_parent", [](json& c) { c["HostConfig"]["CgroupParent"] = "/elsewhere"; }},
      {"oom_kill_disable", [](json& c) { c["HostConfig"]["OomKillDisable"] = true; }},
      {"log_limit", [](json& c) { c["HostConfig"]["LogConfig"]["Config"]["compress"] = "true"; }},
      {"apparmor", [](json& c) { c["AppArmorProfile"] = "unconfined"; }},
      {"namespace", [](json& c) { c["HostConfig"]["IpcMode"] = ""; }},
      {"namespace", [](json& c) { c["HostConfig"]["CgroupnsMode"] = "host"; }},
      {"namespace", [](json& c) { c["HostConfig"]["PidMode"] = "container:abc"; }},
      {"namespace", [](json& c) { c["HostConfig"]["UsernsMode"] = "host"; }},
      {"core_limit", [](json& c) { c["HostConfig"]["Ulimits"] = json::array(); }},
      {"core_limit", [](json& c) { c["HostConfig"]["Ulimits"][0]["Hard"] = -1; }},
      {"core_limit", [](json& c) { c["HostConfig"]["Ulimits"][0]["Soft"] = 1; }},
      {"cpu_shares", [](json& c) { c["HostConfig"]["CpuShares"] = 0; }},
      {"cpu_quota", [](json& c) { c["HostConfig"]["NanoCpus"] = 0; }},
      {"blkio_weight", [](json& c) { c["HostConfig"]["BlkioWeight"] = 0; }},
      {"blkio_weight", [](json& c) { c["HostConfig"]["BlkioWeight"] = 500; }},
  };
  for (const Mutation& m : mutations) {
    json doc = load("container-inspect.json");
    m.apply(doc);
    // Exactly the one check the mutation breaks: a verify that reports everything for any change
    // (or names the wrong setting next to the right one) fails here.
    EXPECT_EQ(checks(doc), std::vector<std::string>{m.check}) << "mutation for " << m.check;
  }
}

TEST(VerifyTest, GatekeeperHasItsOwnWeightNoQuotaAndNoCoreDumps) {
  json doc = load("container-inspect-gatekeeper.json");
  ContainerExpectation e = canned_expectation();
  e.role = Role::kGatekeeper;
  e.cpu_shares = kGatekeeperCpuShares;
  e.cpu_quota = false;
  auto named = [&](const json& d, const char* check) {
    for (const Difference& x : verify_container(d, e))
      if (x.check == check) return true;
    return false;
  };
  EXPECT_FALSE(named(doc, "gatekeeper_cpu_shares"));
  EXPECT_FALSE(named(doc, "gatekeeper_cpu_quota"));
  EXPECT_FALSE(named(doc, "gatekeeper_core_limit"));
  json weak = doc;
  weak["HostConfig"]["CpuShares"] = kSpaceCpuShares;
  EXPECT_TRUE(named(weak, "gatekeeper_cpu_shares"));
  json quota = doc;
  quota["HostConfig"]["NanoCpus"] = 500000000;
  EXPECT_TRUE(named(quota, "gatekeeper_cpu_quota"));
  json core = doc;
  core["HostConfig"]["Ulimits"] = json::array();
  EXPECT_TRUE(named(core, "gatekeeper_core_limit"));
}

// The canned space container made into a clean gatekeeper (no init: it forks nothing; its exact
// memory limit), then one setting broken at a time: exactly that prefixed check, nothing else.
TEST(VerifyTest, GatekeeperChecksArePrefixedAndMemoryIsExact) {
  json doc = load("container-inspect.json");
  ContainerExpectation e = canned_expectation();
  e.role = Role::kGatekeeper;
  e.memory = kGatekeeperMemory;
  e.memory_exact = true;
  e.alias = true;
  doc["Config"]["Labels"]["spacectl.space.role"] = "gatekeeper";
  doc["HostConfig"]["Init"] = false;
  doc["HostConfig"]["Memory"] = kGatekeeperMemory;
  doc["HostConfig"]["MemorySwap"] = kGatekeeperMemory;
  auto gatekeeper_checks = [&](const json& d) {
    std::vector<std::string> got;
    for (const Difference& x : verify_container(d, e)) got.push_back(x.check);
    return got;
  };
  ASSERT_EQ(gatekeeper_checks(doc), std::vector<std::string>{}) << "the clean gatekeeper document";
  json more_memory = doc;
  more_memory["HostConfig"]["Memory"] = kGatekeeperMemory * 2;
  more_memory["HostConfig"]["MemorySwap"] = kGatekeeperMemory * 2;
  EXPECT_EQ(gatekeeper_checks(more_memory), std::vector<std::string>{"gatekeeper_memory_limit"});
  json with_init = doc;
  with_init["HostConfig"]["Init"] = true;
  EXPECT_EQ(gatekeeper_checks(with_init), std::vector<std::string>{"gatekeeper_init"});
  json no_alias = doc;
  no_alias["NetworkSettings"]["Networks"]["t-in"]["Aliases"] = json::array();
  EXPECT_EQ(gatekeeper_checks(no_alias), std::vector<std::string>{"gatekeeper_alias"});
}

TEST(VerifyTest, TheGatekeepersCommandIsComparedExactly) {
  json doc = load("container-inspect.json");
  ContainerExpectation e = canned_expectation();
  e.path = "sleep";
  e.command = {"1000"};
  std::vector<std::string> got;
  for (const Difference& d : verify_container(doc, e)) got.push_back(d.check);
  EXPECT_TRUE(got.empty());
  // Re-created by hand with another DNS server and a longer deadline: not the spec's command.
  doc["Config"]["Cmd"] = json::array({"sleep", "1000", "--dns-server", "203.0.113.53", "--connect-seconds", "3600"});
  doc["Args"] = json::array({"1000", "--dns-server", "203.0.113.53", "--connect-seconds", "3600"});
  got.clear();
  for (const Difference& d : verify_container(doc, e)) got.push_back(d.check);
  EXPECT_NE(std::find(got.begin(), got.end(), "command"), got.end());
}

TEST(VerifyTest, AContainerOnANetworkNamedLikeOursButWithAnotherIdIsNamed) {
  json doc = load("container-inspect.json");
  doc["NetworkSettings"]["Networks"]["t-in"]["NetworkID"] = "ffff";
  ContainerExpectation e = canned_expectation();
  e.network_ids = {{"t-in", "aaaa"}};
  std::vector<std::string> got;
  for (const Difference& d : verify_container(doc, e)) got.push_back(d.check);
  EXPECT_NE(std::find(got.begin(), got.end(), "networks"), got.end());
  e.network_ids = {{"t-in", "ffff"}};
  got.clear();
  for (const Difference& d : verify_container(doc, e)) got.push_back(d.check);
  EXPECT_TRUE(got.empty());
}

TEST(VerifyTest, AForeignContainerOnTheInnerNetworkIsNamed) {
  json net = {{"Containers", {{"aaa", {{"Name", "gk-x-space"}}}, {"bbb", {{"Name", "gk-x-gatekeeper"}}}}}};
  EXPECT_TRUE(verify_network_members(net, "n", true, {"aaa", "bbb"}).empty());
  net["Containers"]["ccc"] = {{"Name", "someone-else"}};
  const std::vector<Difference> d = verify_network_members(net, "n", true, {"aaa", "bbb"});
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].check, "network_foreign_container");
  // The outer network holds the gatekeeper only.
  EXPECT_EQ(verify_network_members(net, "o", false, {"bbb"}).size(), 2u);
}

// The engine discards --blkio-weight where the kernel cannot weight IO; a 0 is accepted only
// when the host probe said so, and any other value never.
TEST(VerifyTest, AnIoWeightTheEngineDiscardedIsAcceptedOnlyWhereTheHostCannotWeight) {
  json discarded = load("container-inspect.json");
  discarded["HostConfig"]["BlkioWeight"] = 0;
  ContainerExpectation e = canned_expectation();
  auto names = [&](const json& doc) {
    std::vector<std::string> out;
    for (const Difference& d : verify_container(doc, e)) out.push_back(d.check);
    return out;
  };
  e.io_weight_supported = false;
  EXPECT_TRUE(names(discarded).empty());
  e.io_weight_supported = true;
  EXPECT_EQ(names(discarded), std::vector<std::string>{"blkio_weight"});
  e.io_weight_supported = std::nullopt;  // cannot be seen: nothing excuses the 0
  EXPECT_EQ(names(discarded), std::vector<std::string>{"blkio_weight"});
  json higher = discarded;
  higher["HostConfig"]["BlkioWeight"] = 1000;
  e.io_weight_supported = false;
  EXPECT_EQ(names(higher), std::vector<std::string>{"blkio_weight"});
}

// What counts as "the host weights IO" is what the engines look for: on cgroup v1 CFQ's
// blkio.weight. BFQ's blkio.bfq.weight alone (the bfq module loaded) made verify expect a weight
// that Docker 20.10 and Podman 4.3 had discarded, and every space failed verify.
TEST(VerifyTest, OnCgroupV1OnlyTheCfqWeightFileMeansTheEngineKeepsTheWeight) {
  const std::filesystem::path root =
      std::filesystem::temp_directory_path() / ("gk-cgroup-" + std::to_string(::getpid()));
  std::filesystem::remove_all(root);
  std::filesystem::create_directories(root / "blkio");
  EXPECT_EQ(io_weight_supported_in(root.string()), std::optional<bool>(false))
      << "v1, no weight file";
  std::ofstream(root / "blkio" / "blkio.bfq.weight") << "100\n";
  EXPECT_EQ(io_weight_supported_in(root.string()), std::optional<bool>(false))
      << "v1, BFQ's file only";
  std::ofstream(root / "blkio" / "blkio.weight") << "500\n";
  EXPECT_EQ(io_weight_supported_in(root.string()), std::optional<bool>(true)) << "v1, CFQ's file";
  std::filesystem::remove_all(root / "blkio");
  EXPECT_EQ(io_weight_supported_in(root.string()), std::nullopt) << "neither v1 nor v2 visible";
  std::ofstream(root / "cgroup.controllers") << "cpuset cpu io memory pids\n";
  EXPECT_EQ(io_weight_supported_in(root.string()), std::optional<bool>(true)) << "v2 with io";
  std::ofstream(root / "cgroup.controllers") << "cpuset cpu memory pids\n";
  EXPECT_EQ(io_weight_supported_in(root.string()), std::optional<bool>(false)) << "v2 without io";
  std::filesystem::remove_all(root);
}

json canned_volume() {
  std::ifstream in(std::string(CONTROLLER_TESTDATA) + "/volume-inspect.json");
  return json::parse(std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()))[0];
}

const std::string kImage = "/var/lib/spacectl/disks/testowner-gk-0123456789ab-volume-home.img";

VolumeExpectation volume_want(const std::string& owner = "testowner") { return {"h", owner, "0123456789ab", kImage}; }

// /dev/loop40123 holds the expected image and is exactly as large as the label says.
LoopProbe loop_holding(std::string file, std::int64_t bytes) {
  return [file, bytes](int index) -> std::optional<LoopState> {
    if (index != 40123) return LoopState{};
    return LoopState{true, true, file, bytes};
  };
}

std::vector<std::string> volume_checks(const json& v, const LoopProbe& probe, const VolumeExpectation& want = volume_want()) {
  std::vector<std::string> out;
  for (const Difference& d : verify_volume(v, want, probe)) out.push_back(d.check);
  return out;
}

TEST(VerifyTest, AVolumeThatBindsAHostPathIsNamed) {
  const json v = canned_volume();
  const LoopProbe ok = loop_holding(kImage, 268435456);
  EXPECT_TRUE(volume_checks(v, ok).empty());
  json bind = v;
  bind["Options"] = {{"type", "none"}, {"o", "bind"}, {"device", "/"}};
  EXPECT_EQ(volume_checks(bind, ok), std::vector<std::string>{"volume_options"});
  json driver = v;
  driver["Driver"] = "sshfs";
  EXPECT_EQ(volume_checks(driver, ok), std::vector<std::string>{"volume_driver"});
  EXPECT_EQ(volume_checks(json(), ok), std::vector<std::string>{"volume_missing"});
  EXPECT_EQ(volume_checks(v, ok, volume_want("someone")), std::vector<std::string>{"volume_labels"});
}

// The size limit is proved from the kernel's side: a volume without our options (the old
// unbounded `docker volume create`), without nosuid/nodev, on another device, or on a loop
// device that holds another file or has another size is named.
TEST(VerifyTest, AVolumeWithoutItsBoundedFilesystemIsNamed) {
  const json v = canned_volume();
  const LoopProbe ok = loop_holding(kImage, 268435456);
  json unbounded = v;
  unbounded["Options"] = nullptr;
  EXPECT_EQ(volume_checks(unbounded, ok), std::vector<std::string>{"volume_options"});
  for (const char* o : {"nodev", "nosuid", "nosuid,nodev,suid", "", "nosuid,nodev,exec"}) {
    json weak = v;
    weak["Options"]["o"] = o;
    EXPECT_EQ(volume_checks(weak, ok), std::vector<std::string>{"volume_options"}) << o;
  }
  for (const char* device : {"/dev/vda", "/dev/loop0", "/dev/loop040123", "/dev/loop40123/../vda", "/dev/loop60000"}) {
    json other = v;
    other["Options"]["device"] = device;
    EXPECT_EQ(volume_checks(other, ok), std::vector<std::string>{"volume_options"}) << device;
  }
  json tmpfs = v;
  tmpfs["Options"]["type"] = "tmpfs";
  EXPECT_EQ(volume_checks(tmpfs, ok), std::vector<std::string>{"volume_options"});
  json extra = v;
  extra["Options"]["size"] = "1g";
  EXPECT_EQ(volume_checks(extra, ok), std::vector<std::string>{"volume_options"});
  for (const char* label : {"", "12", "abc", "99999999999999999999"}) {
    json bad = v;
    bad["Labels"]["spacectl.space.disk"] = label;
    EXPECT_EQ(volume_checks(bad, ok), std::vector<std::string>{"volume_disk_label"}) << label;
  }
  EXPECT_EQ(volume_checks(v, loop_holding("/tmp/other.img", 268435456)), std::vector<std::string>{"volume_disk_image"});
  EXPECT_EQ(volume_checks(v, loop_holding(kImage, 268435456 * 2)), std::vector<std::string>{"volume_disk_size"});
  EXPECT_EQ(volume_checks(v, [](int) { return std::optional<LoopState>(LoopState{true, false, "", 0}); }),
            std::vector<std::string>{"volume_disk_detached"});
  EXPECT_EQ(volume_checks(v, [](int) { return std::optional<LoopState>(); }), std::vector<std::string>{"volume_disk_unseen"});
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
