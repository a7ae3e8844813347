// The engine parameter of the CLI-driven place (engine.h), the Podman side of the hardening spec
// (spec.h) and Podman's inspect documents read as Docker's (podman_inspect.h): pure, no engine.
#include <algorithm>
#include <fstream>
#include <iterator>
#include <set>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "controller/docker_cli.h"
#include "controller/docker_place.h"
#include "controller/engine.h"
#include "controller/podman_inspect.h"
#include "controller/spec.h"
#include "controller/verify.h"

namespace controller {
namespace {

using nlohmann::json;

json testdata(const std::string& name) {
  std::ifstream in(std::string(CONTROLLER_TESTDATA) + "/" + name);
  return json::parse(
      std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()), nullptr,
      false);
}

bool contains(const std::vector<std::string>& argv, const std::string& word) {
  return std::find(argv.begin(), argv.end(), word) != argv.end();
}

TEST(EngineTest, SshHostIsUserHostAndPortOnly) {
  for (const char* good :
       {"ssh://gk@127.0.0.1:2222", "ssh://host.example", "ssh://a_b@h-1:22", "ssh://u@h:65535"}) {
    EXPECT_TRUE(is_ssh_host(good)) << good;
  }
  for (const char* bad : {"", "ssh://", "tcp://h:2375", "ssh://-oProxyCommand=x", "ssh://u@-h",
                          "ssh://u@h:0", "ssh://u@h:65536", "ssh://u@h:22/path", "ssh://u h@h",
                          "ssh://u@h;id", "ssh://u@h:", "ssh://@h", "ssh://u@.h"}) {
    EXPECT_FALSE(is_ssh_host(bad)) << bad;
  }
}

TEST(EngineTest, EveryCallCarriesTheEnginesGlobalArguments) {
  Engine ssh;
  ssh.kind = EngineKind::kDockerSsh;
  ssh.host = "ssh://gk@127.0.0.1:2222";
  EXPECT_EQ(engine_global_args(ssh),
            (std::vector<std::string>{"--host", "ssh://gk@127.0.0.1:2222"}));
  EXPECT_FALSE(engine_is_local(ssh));
  Engine podman;
  podman.kind = EngineKind::kPodman;
  EXPECT_EQ(engine_program(podman), "podman");
  EXPECT_EQ(engine_global_args(podman), (std::vector<std::string>{"--runtime", "runc"}));
  EXPECT_TRUE(engine_is_local(podman));
  EXPECT_TRUE(engine_global_args(Engine{}).empty());
}

// `space exec` at a terminal: --tty is an exec flag, so it goes after `exec`, never between a
// global option and its value (it used to be inserted at argv[2]: `docker --host --tty ssh://…`).
TEST(EngineTest, TtyGoesAfterExecBehindTheGlobalArguments) {
  Engine ssh;
  ssh.kind = EngineKind::kDockerSsh;
  ssh.host = "ssh://gk@127.0.0.1:2222";
  std::vector<std::string> argv = DockerCli(ssh).prefix();
  argv.insert(argv.end(), {"exec", "--interactive", "--", "gk-x-space"});
  EXPECT_EQ(with_tty(argv),
            (std::vector<std::string>{"docker", "--host", "ssh://gk@127.0.0.1:2222", "exec",
                                      "--tty", "--interactive", "--", "gk-x-space"}));
  Engine podman;
  podman.kind = EngineKind::kPodman;
  argv = DockerCli(podman).prefix();
  argv.insert(argv.end(), {"exec", "--interactive"});
  EXPECT_EQ(with_tty(argv), (std::vector<std::string>{"podman", "--runtime", "runc", "exec",
                                                      "--tty", "--interactive"}));
  EXPECT_EQ(with_tty({"docker", "exec"}), (std::vector<std::string>{"docker", "exec", "--tty"}));
}

TEST(EngineTest, DockerSshTakesItsHostFromTheFlagOrDockerHost) {
  Result<Engine> e = engine_for_place("docker-ssh", "", "ssh://gk@127.0.0.1:2222");
  ASSERT_TRUE(e.ok());
  EXPECT_EQ(e->host, "ssh://gk@127.0.0.1:2222");
  e = engine_for_place("docker-ssh", "ssh://a@b", "ssh://gk@127.0.0.1:2222");
  ASSERT_TRUE(e.ok());
  EXPECT_EQ(e->host, "ssh://a@b");
  EXPECT_EQ(engine_for_place("docker-ssh", "", nullptr).error().code, Code::kUsage);
  EXPECT_EQ(engine_for_place("docker-ssh", "ssh://-oProxyCommand=touch", nullptr).error().code,
            Code::kUsage);
  EXPECT_EQ(engine_for_place("podman", "ssh://a@b", nullptr).error().code, Code::kUsage);
  EXPECT_EQ(engine_for_place("kubernetes", "", nullptr).error().code, Code::kPlaceNotFound);
}

TEST(EngineTest, DeadlinesGrowWithTheMeasuredRoundTrip) {
  using std::chrono::milliseconds;
  EXPECT_EQ(scaled_timeout(milliseconds(30000), milliseconds(0)), milliseconds(30000));
  EXPECT_EQ(scaled_timeout(milliseconds(30000), milliseconds(100)), milliseconds(30000));
  EXPECT_EQ(scaled_timeout(milliseconds(30000), milliseconds(101)),
            milliseconds(30000 + 303 + 3000));
  EXPECT_EQ(scaled_timeout(milliseconds(10000), milliseconds(2000)), milliseconds(19000));
}

// An engine behind SSH that cannot be reached is told by the ssh client's own words (docker -H
// ssh:// passes them through); a probe refused inside a space prints a bare "Connection refused",
// which must stay an answer from a reachable engine, not an unreachable place.
TEST(EngineTest, SshClientFailuresReadAsAnUnreachableEngine) {
  for (const char* text :
       {"error during connect: Get \"http://docker.example.com/v1.41/containers/json\": command "
        "[ssh -o ConnectTimeout=30 -T -l root -p 1 -- 127.0.0.1 docker system dial-stdio] has "
        "exited with exit status 255, make sure the URL is valid, and Docker 18.09 or later is "
        "installed on the remote host: stderr=ssh: connect to host 127.0.0.1 port 1: Connection "
        "refused\n",
        "ssh: connect to host 127.0.0.1 port 1: Connection refused",
        "Host key verification failed.", "root@127.0.0.1: Permission denied (publickey).",
        "kex_exchange_identification: read: Connection reset by peer"}) {
    EXPECT_TRUE(daemon_unreachable_text(text)) << text;
  }
  for (const char* text : {"wget: can't connect to remote host (10.89.0.1): Connection refused",
                           "connect 127.0.0.1:9099: Connection refused", "exit status 1"}) {
    EXPECT_FALSE(daemon_unreachable_text(text)) << text;
  }
}

TEST(PodmanSpecTest, GatekeeperTakesTheSubnetsSecondAddress) {
  EXPECT_EQ(podman_gatekeeper_ip("10.89.0.0/24"), "10.89.0.2");
  EXPECT_EQ(podman_gatekeeper_ip("10.89.3.128/25"), "10.89.3.130");
  EXPECT_EQ(podman_gatekeeper_ip("10.89.0.0/29"), "10.89.0.2");
  EXPECT_EQ(podman_gatekeeper_ip("10.89.0.0/30"), "");  // the gateway and one host: no room
  EXPECT_EQ(podman_gatekeeper_ip("fd00::/64"), "");
  EXPECT_EQ(podman_gatekeeper_ip("10.89.0.0"), "");
  EXPECT_EQ(podman_gatekeeper_ip("10.89.0.0/x"), "");
}

TEST(PodmanSpecTest, InnerNetworkHasNoDnsAndNoDockerOption) {
  SpaceSpec spec;
  spec.id = "0123456789ab";
  spec.engine = EngineKind::kPodman;
  const std::vector<std::string> a = inner_network_argv(spec);
  EXPECT_TRUE(contains(a, "--internal"));
  EXPECT_TRUE(contains(a, "--disable-dns"));
  EXPECT_FALSE(contains(a, "--opt"));
  spec.engine = EngineKind::kDocker;
  EXPECT_FALSE(contains(inner_network_argv(spec), "--disable-dns"));
  EXPECT_TRUE(contains(inner_network_argv(spec), "--opt"));
}

TEST(PodmanSpecTest, ContainersCarryPodmansLimitsAndTheGatekeepersAddress) {
  SpaceSpec spec;
  spec.id = "0123456789ab";
  spec.engine = EngineKind::kPodman;
  spec.space_image = "sha256:" + std::string(64, 'a');
  spec.gatekeeper_image = "sha256:" + std::string(64, 'b');
  spec.gatekeeper_inner_ip = "10.89.0.2";
  const std::vector<std::string> space = space_create_argv(spec);
  EXPECT_TRUE(contains(space, "gatekeeper:10.89.0.2"));
  EXPECT_TRUE(contains(space, "--read-only-tmpfs=false"));
  EXPECT_TRUE(contains(space, "k8s-file"));
  EXPECT_FALSE(contains(space, "local"));
  EXPECT_TRUE(contains(space, "nofile=16384:16384"));
  EXPECT_TRUE(contains(space, "nproc=16384:16384"));
  EXPECT_TRUE(contains(space, "--read-only"));
  const std::vector<std::string> gk = gatekeeper_create_argv(spec, "10.89.0.0/24");
  EXPECT_TRUE(contains(gk, "gk-0123456789ab-network:ip=10.89.0.2"));
  EXPECT_FALSE(contains(gk, "--network-alias"));
}

// The escape run on Podman found the host's resolver in the space's resolv.conf and an IPv6
// link-local address on its eth0; Docker's space gets neither flag (its engine does both itself).
TEST(PodmanSpecTest, SpaceHasNoResolvConfAndNoIpv6) {
  SpaceSpec spec;
  spec.id = "0123456789ab";
  spec.engine = EngineKind::kPodman;
  spec.space_image = "sha256:" + std::string(64, 'a');
  spec.gatekeeper_inner_ip = "10.89.0.2";
  const std::vector<std::string> space = space_create_argv(spec);
  const auto dns = std::find(space.begin(), space.end(), "--dns");
  ASSERT_NE(dns, space.end());
  EXPECT_EQ(*(dns + 1), "none");
  EXPECT_TRUE(contains(space, "net.ipv6.conf.all.disable_ipv6=1"));
  EXPECT_TRUE(contains(space, "net.ipv6.conf.default.disable_ipv6=1"));
  spec.engine = EngineKind::kDocker;
  const std::vector<std::string> docker = space_create_argv(spec);
  EXPECT_FALSE(contains(docker, "--dns"));
  EXPECT_FALSE(contains(docker, "--sysctl"));
}

TEST(PodmanInspectTest, AHardenedPodmanContainerReadsAsDockerWouldShowIt) {
  const json doc = testdata("podman-container-inspect.json");
  ASSERT_TRUE(doc.is_array() && !doc.empty());
  PodmanInspectContext context;
  context.primary_network = "gkt-b";
  context.seccomp_profiles["/opt/spacectl/seccomp/space.json"] =
      R"({"defaultAction":"SCMP_ACT_ERRNO"})";
  const json d = podman_container_as_docker(doc[0], context);
  const json& host = d["HostConfig"];
  EXPECT_EQ(d["Image"], "sha256:d546174eaff3529e20f5e8e3ce181026c5d7c1a4528dddde8a8666b36a49fdcd");
  EXPECT_EQ(host["Runtime"], "runc");
  EXPECT_EQ(host["CapDrop"], json::array({"ALL"}));
  EXPECT_EQ(host["NetworkMode"], "gkt-b");
  EXPECT_EQ(host["IpcMode"], "private");
  EXPECT_EQ(host["CgroupnsMode"], "private");
  EXPECT_EQ(host["PidMode"], "");
  EXPECT_EQ(host["Binds"], json::array());
  EXPECT_EQ(host["Mounts"][0]["Source"], "gkt-vol");
  EXPECT_EQ(host["Mounts"][0]["Target"], "/home/space");
  EXPECT_EQ(host["Tmpfs"]["/tmp"], std::string(kSpaceTmpfs));
  EXPECT_EQ(host["LogConfig"]["Type"], "local");
  EXPECT_EQ(host["SecurityOpt"][1], R"(seccomp={"defaultAction":"SCMP_ACT_ERRNO"})");
  bool core = false;
  for (const json& u : host["Ulimits"]) {
    core = core || (u["Name"] == "core" && u["Soft"] == 0 && u["Hard"] == 0);
  }
  EXPECT_TRUE(core);
}

TEST(PodmanInspectTest, WhatPodmanDoesNotSayIsNeverMadeHardened) {
  json doc = testdata("podman-container-inspect.json")[0];
  PodmanInspectContext context;
  // A process that kept capabilities, a profile path that is not the place's, an unmask, a
  // real bind mount and a log without the cap all stay visible to verify.
  doc["EffectiveCaps"] = json::array({"CAP_NET_RAW"});
  doc["HostConfig"]["SecurityOpt"] = json::array({"seccomp=/tmp/other.json", "unmask=ALL"});
  doc["Mounts"].push_back({{"Type", "bind"}, {"Source", "/"}, {"Destination", "/host"}});
  doc["HostConfig"]["LogConfig"]["Size"] = "0B";
  const json d = podman_container_as_docker(doc, context);
  EXPECT_EQ(d["HostConfig"]["CapDrop"], json::array());
  EXPECT_EQ(d["HostConfig"]["SecurityOpt"][0], "seccomp=/tmp/other.json");
  EXPECT_FALSE(d["HostConfig"].contains("MaskedPaths"));
  EXPECT_EQ(d["HostConfig"]["Mounts"].back()["Type"], "bind");
  EXPECT_EQ(d["HostConfig"]["LogConfig"]["Type"], "k8s-file");
  ContainerExpectation want;
  want.seccomp_profile = "{}";
  const std::vector<Difference> diffs = verify_container(d, want);
  std::set<std::string> checks;
  for (const Difference& x : diffs) checks.insert(x.check);
  for (const char* c :
       {"cap_drop", "seccomp", "masked_paths", "mounts", "log_limit", "security_options"}) {
    EXPECT_EQ(checks.count(c), 1u) << c;
  }
}

TEST(PodmanInspectTest, NetworkReadsAsDockerWithItsBridgeAndDns) {
  const json doc = testdata("podman-network-inspect.json");
  ASSERT_TRUE(doc.is_array() && !doc.empty());
  const json d = podman_network_as_docker(doc[0]);
  EXPECT_EQ(d["Name"], "gkt-b");
  EXPECT_EQ(d["Internal"], true);
  EXPECT_EQ(d["EnableIPv6"], false);
  EXPECT_EQ(d["Options"]["com.docker.network.bridge.name"], "podman1");
  EXPECT_EQ(d["Options"]["podman.dns_enabled"], "true");
  EXPECT_EQ(d["IPAM"]["Config"][0]["Gateway"], "10.89.0.1");
  // DNS on the inner network is a host-isolation difference on Podman, whatever the probe says.
  NetworkExpectation want;
  want.name = "gkt-b";
  want.internal = true;
  want.host_isolated = true;
  want.engine = EngineKind::kPodman;
  const HostAddressProbe guarded = [](const std::string&) -> std::optional<bool> { return false; };
  bool dns = false;
  for (const Difference& x : verify_network(d, want, guarded)) {
    dns = dns || x.message.find("DNS is enabled") != std::string::npos;
  }
  EXPECT_TRUE(dns);
  const HostAddressProbe unguarded = [](const std::string&) -> std::optional<bool> { return true; };
  bool missing = false;
  for (const Difference& x : verify_network(d, want, unguarded)) {
    missing =
        missing || x.message.find("host guard (INPUT DROP for the bridge podman1) is missing") !=
                       std::string::npos;
  }
  EXPECT_TRUE(missing);
  // Without a gateway (DNS off) the guard is still required.
  json no_gateway = d;
  no_gateway["IPAM"]["Config"][0]["Gateway"] = "";
  no_gateway["Options"]["podman.dns_enabled"] = "false";
  auto isolation = [](const std::vector<Difference>& diffs) {
    std::vector<std::string> out;
    for (const Difference& x : diffs) {
      if (x.check == "network_host_isolation") out.push_back(x.message);
    }
    return out;
  };
  EXPECT_EQ(isolation(verify_network(no_gateway, want, unguarded)).size(), 1u);
  EXPECT_TRUE(isolation(verify_network(no_gateway, want, guarded)).empty());
}

// The engine's major version picks the network options (spec.cc); an answer that is not a
// version was read as major 0, the oldest engine's options, silently.
TEST(EngineVersionTest, TheMajorIsTheDigitsBeforeTheFirstDotOfAVersion) {
  const Result<int> docker = engine_major_of("28.0.1\n", "docker version");
  ASSERT_TRUE(docker.ok()) << docker.error().message;
  EXPECT_EQ(*docker, 28);
  const Result<int> podman = engine_major_of("4.3.1", "podman version");
  ASSERT_TRUE(podman.ok()) << podman.error().message;
  EXPECT_EQ(*podman, 4);
  for (const char* bad : {"", "\n", "dev", "28", "+28.0.1", "-28.0.1", "0.9.1", "28x.0.1",
                          " 28.0.1", "99999999999.0.1", ".1"}) {
    const Result<int> got = engine_major_of(bad, "docker version");
    ASSERT_FALSE(got.ok()) << "'" << bad << "' read as " << *got;
    EXPECT_EQ(got.error().code, Code::kPlaceUnusable);
    EXPECT_NE(got.error().message.find("docker version: '"), std::string::npos)
        << got.error().message;
    EXPECT_NE(got.error().message.find("is not an engine version"), std::string::npos)
        << got.error().message;
  }
}

// A remote engine's host addresses come from its kernel's local routes: every "/32 host LOCAL"
// entry but loopback, each once (the Main and Local tables repeat them).
TEST(RemoteProbeTest, HostAddressesAreTheKernelsLocalRoutesButLoopback) {
  std::ifstream in(std::string(CONTROLLER_TESTDATA) + "/fib_trie.txt");
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const std::vector<std::string> got = local_addresses_from_fib_trie(text);
  EXPECT_EQ(got, (std::vector<std::string>{"172.17.0.1", "192.0.2.2"}));
  EXPECT_TRUE(local_addresses_from_fib_trie("").empty());
  EXPECT_TRUE(local_addresses_from_fib_trie("/32 host LOCAL\n").empty());
  EXPECT_TRUE(local_addresses_from_fib_trie("|-- not-an-address\n   /32 host LOCAL\n").empty());
}

// A remote engine's host's IPv6 addresses come from /proc/net/if_inet6; only public ones become
// --block ranges (the table refuses the rest already).
TEST(RemoteProbeTest, RemoteHostsPublicAddressesBecomeBlockRanges) {
  const std::vector<std::string> v6 = ipv6_addresses_from_if_inet6(
      "fd000000000000000000000000000002 04 40 00 82     eth0\n"
      "20010db8000000000000000000000001 05 40 00 80     eth1\n"
      "2a0014500000000000000000000000aa 06 40 00 80     eth2\n"
      "zz000000000000000000000000000002 04 40 00 82     bad\n");
  EXPECT_EQ(v6, (std::vector<std::string>{"fd00:0000:0000:0000:0000:0000:0000:0002",
                                          "2001:0db8:0000:0000:0000:0000:0000:0001",
                                          "2a00:1450:0000:0000:0000:0000:0000:00aa"}));
  std::vector<std::string> all = {"192.0.2.2", "172.17.0.1", "8.8.4.4", "8.8.4.4"};
  all.insert(all.end(), v6.begin(), v6.end());
  const std::vector<std::string> ranges = public_ranges_of(all);
  ASSERT_EQ(ranges.size(), 2u) << ranges.size();
  EXPECT_EQ(ranges[0], "8.8.4.4/32");
  EXPECT_EQ(ranges[1], "2a00:1450::aa/128");
}

}  // namespace
}  // namespace controller
