// argv building: every hardening flag is in the `docker create` argv, and a secret never reaches
// any argv (a recording fake `docker` first in PATH sees every call of a real spacectl run).
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <set>
#include <tuple>

#include <gtest/gtest.h>

#include "controller/process.h"
#include "controller/spec.h"
#include "policy/ranges.h"
#include "controller/testing/fake_docker_fixture.h"
#include "tests/support/environment.h"

namespace controller {
namespace {

SpaceSpec sample() {
  SpaceSpec s;
  s.id = "0123456789ab";
  s.owner = "testowner";
  s.name = "t";
  s.created = "2026-01-01T00:00:00Z";
  s.space_image = "sha256:" + std::string(64, 'a');
  s.gatekeeper_image = "sha256:" + std::string(64, 'b');
  s.seccomp_space = "/p/space.json";
  s.seccomp_gatekeeper = "/p/gatekeeper.json";
  s.memory_bytes = 512ll << 20;
  s.window_key = std::string(64, 'c');
  s.engine_major = 20;
  return s;
}

bool has_pair(const std::vector<std::string>& a, const std::string& flag, const std::string& value) {
  for (std::size_t i = 0; i + 1 < a.size(); ++i)
    if (a[i] == flag && a[i + 1] == value) return true;
  return false;
}
bool has(const std::vector<std::string>& a, const std::string& flag) { return std::find(a.begin(), a.end(), flag) != a.end(); }

void expect_common(const std::vector<std::string>& a, const std::string& user, const std::string& profile, const std::string& memory) {
  EXPECT_TRUE(has_pair(a, "--user", user));
  EXPECT_TRUE(has(a, "--read-only"));
  EXPECT_TRUE(has_pair(a, "--cap-drop", "ALL"));
  EXPECT_TRUE(has_pair(a, "--security-opt", "no-new-privileges"));
  EXPECT_TRUE(has_pair(a, "--security-opt", "seccomp=" + profile));
  EXPECT_TRUE(has_pair(a, "--pids-limit", "512"));
  EXPECT_TRUE(has_pair(a, "--memory", memory));
  EXPECT_TRUE(has_pair(a, "--memory-swap", memory));
  EXPECT_TRUE(has_pair(a, "--ipc", "private"));
  EXPECT_TRUE(has_pair(a, "--cgroupns", "private"));
  EXPECT_TRUE(has_pair(a, "--log-driver", "local"));
  EXPECT_TRUE(has_pair(a, "--log-opt", "max-size=10m"));
  EXPECT_TRUE(has_pair(a, "--ulimit", "core=0:0"));  // soft and hard: the space cannot raise it
  for (const char* never : {"--privileged", "-p", "--publish", "--publish-all", "-v", "--volume", "--device", "--cap-add", "--pid", "--userns"})
    EXPECT_FALSE(has(a, never)) << never;
  for (const std::string& arg : a) EXPECT_EQ(arg.find("docker.sock"), std::string::npos);
}

TEST(ArgvTest, GatekeeperCarriesEveryHardeningFlag) {
  const std::vector<std::string> a = gatekeeper_create_argv(sample(), "172.19.0.0/16");
  expect_common(a, "65532:65532", "/p/gatekeeper.json", "268435456b");
  EXPECT_FALSE(has(a, "--init"));  // it forks nothing; its profile kills fork
  EXPECT_TRUE(has_pair(a, "--network", "gk-0123456789ab-network"));
  EXPECT_TRUE(has_pair(a, "--network-alias", "gatekeeper"));
  EXPECT_FALSE(has(a, "--mount"));
  EXPECT_FALSE(has(a, "--tmpfs"));
  EXPECT_TRUE(has_pair(a, "--cpu-shares", "2048"));  // its reserved share against a spinning space
  EXPECT_FALSE(has(a, "--cpus"));
  ASSERT_GE(a.size(), 3u);
  EXPECT_EQ(std::vector<std::string>(a.end() - 3, a.end()), (std::vector<std::string>{"serve", "--inner-subnet", "172.19.0.0/16"}));
  EXPECT_TRUE(has_pair(a, "--label", "spacectl.space.role=gatekeeper"));
  EXPECT_TRUE(has_pair(a, "--label", "spacectl.space.id=0123456789ab"));
  EXPECT_TRUE(has_pair(a, "--label", "spacectl.space.owner=testowner"));
  EXPECT_TRUE(has_pair(a, "--label", "spacectl.version=0.1.0"));
}

TEST(ArgvTest, GatekeeperBlocksTheRangesOfItsSpec) {
  SpaceSpec spec = sample();
  spec.blocked_ranges = {"203.0.113.7/32", "2001:db8::1/128"};
  const std::vector<std::string> a = gatekeeper_create_argv(spec, "172.19.0.0/16");
  ASSERT_GE(a.size(), 7u);
  EXPECT_EQ(std::vector<std::string>(a.end() - 7, a.end()),
            (std::vector<std::string>{"serve", "--inner-subnet", "172.19.0.0/16", "--block", "203.0.113.7/32",
                                      "--block", "2001:db8::1/128"}));
}

TEST(ArgvTest, HostPublicRangesAreSingleAddressesTheTableCallsPublic) {
  for (const std::string& range : host_public_ranges()) {
    const auto parsed = policy::parse_operator_range(range);
    ASSERT_TRUE(parsed.has_value()) << range;
    EXPECT_EQ(parsed->length, parsed->prefix.is_v4() ? 32 : 128) << range;
    EXPECT_FALSE(policy::classify(parsed->prefix).blocked) << range;
  }
}

TEST(ArgvTest, SpaceCarriesEveryHardeningFlagAndTheProxyEnvironment) {
  const std::vector<std::string> a = space_create_argv(sample());
  expect_common(a, "70000:70000", "/p/space.json", "536870912b");
  EXPECT_TRUE(has(a, "--init"));
  EXPECT_TRUE(has_pair(a, "--network", "gk-0123456789ab-network"));
  EXPECT_TRUE(has_pair(a, "--tmpfs", "/tmp:rw,exec,nosuid,size=256m"));
  EXPECT_TRUE(has_pair(a, "--cpus", "1"));
  EXPECT_TRUE(has_pair(a, "--cpu-shares", "512"));
  EXPECT_TRUE(has_pair(a, "--blkio-weight", "10"));  // below every host default (spec.h)
  for (const char* e : {"https_proxy=http://gatekeeper:3128", "HTTPS_PROXY=http://gatekeeper:3128", "http_proxy=http://gatekeeper:3128",
                        "HTTP_PROXY=http://gatekeeper:3128", "NO_PROXY=gatekeeper,localhost,127.0.0.1", "no_proxy=gatekeeper,localhost,127.0.0.1"})
    EXPECT_TRUE(has_pair(a, "--env", e)) << e;
  EXPECT_TRUE(has_pair(a, "--env", "GATEKEEPER_WINDOW=http://gatekeeper:8080/k/" + std::string(64, 'c')));
  for (const std::string& arg : a) EXPECT_EQ(arg.rfind("type=bind", 0), std::string::npos);
  // docs/reference-behaviour.md#container-hardening: the workspace is /spaces/<id>, never /spaces
  // itself.
  EXPECT_TRUE(has_pair(a, "--mount", "type=volume,src=gk-0123456789ab-volume-work,dst=/spaces/0123456789ab"));
}

// Each volume is a `local` ext4 volume on its own loop device, mounted nosuid,nodev, and carries
// its size as a label verify compares with the kernel's.
TEST(ArgvTest, VolumesAreBoundedExt4OnTheirLoopDevice) {
  SpaceSpec s = sample();
  s.disk_bytes = 2ll << 30;
  s.home_loop = 40001;
  s.work_loop = 40002;
  const std::vector<std::string> home = volume_argv(s, Role::kHomeVolume);
  const std::vector<std::string> work = volume_argv(s, Role::kWorkVolume);
  for (const auto& [a, device, name] : {std::tuple{home, "device=/dev/loop40001", "gk-0123456789ab-volume-home"},
                                        std::tuple{work, "device=/dev/loop40002", "gk-0123456789ab-volume-work"}}) {
    EXPECT_TRUE(has_pair(a, "--driver", "local"));
    EXPECT_TRUE(has_pair(a, "--opt", "type=ext4"));
    EXPECT_TRUE(has_pair(a, "--opt", device));
    EXPECT_TRUE(has_pair(a, "--opt", "o=nosuid,nodev"));
    EXPECT_TRUE(has_pair(a, "--label", "spacectl.space.disk=2147483648"));
    EXPECT_EQ(a.back(), name);
    EXPECT_EQ(a[a.size() - 2], "--");
  }
}

TEST(ArgvTest, SpaceCpuQuotaIsHalfThePlaceAtLeastOne) {
  EXPECT_EQ(default_space_nano_cpus(1), kNanoCpusPerCpu);
  EXPECT_EQ(default_space_nano_cpus(2), kNanoCpusPerCpu);
  EXPECT_EQ(default_space_nano_cpus(3), kNanoCpusPerCpu);
  EXPECT_EQ(default_space_nano_cpus(8), 4 * kNanoCpusPerCpu);
  SpaceSpec s = sample();
  s.nano_cpus = 1500000000;
  EXPECT_TRUE(has_pair(space_create_argv(s), "--cpus", "1.5"));
  s.nano_cpus = 250000000;
  EXPECT_TRUE(has_pair(space_create_argv(s), "--cpus", "0.25"));
}

TEST(ArgvTest, CpusTextIsParsedStrictly) {
  EXPECT_EQ(parse_cpus("2"), 2 * kNanoCpusPerCpu);
  EXPECT_EQ(parse_cpus("0.5"), kNanoCpusPerCpu / 2);
  EXPECT_EQ(parse_cpus("1.125"), 1125000000);
  for (const char* bad : {"", ".5", "1.", "1.2345", "-1", "1e3", "0x2", "1,5", " 1", "2000"})
    EXPECT_FALSE(parse_cpus(bad).has_value()) << bad;
}

TEST(ArgvTest, WorkVolumeOwnerContainerIsNeverStartedAndHardened) {
  const std::vector<std::string> a = work_volume_owner_argv(sample());
  EXPECT_EQ(a.front(), "create");  // created for the engine's copy-up, removed, never started
  expect_common(a, "70000:70000", "/p/space.json", "536870912b");
  EXPECT_TRUE(has_pair(a, "--network", "none"));
  EXPECT_TRUE(has_pair(a, "--mount", "type=volume,src=gk-0123456789ab-volume-work,dst=/spaces"));
}

TEST(ArgvTest, InnerNetworkIsInternalWithoutIpv6OrHostAddress) {
  SpaceSpec s = sample();
  std::vector<std::string> a = inner_network_argv(s);
  EXPECT_TRUE(has(a, "--internal"));
  EXPECT_TRUE(has(a, "--ipv6=false"));
  EXPECT_TRUE(has_pair(a, "--opt", "com.docker.network.bridge.inhibit_ipv4=true"));
  s.engine_major = 28;
  EXPECT_TRUE(has_pair(inner_network_argv(s), "--opt", "com.docker.network.bridge.gateway_mode_ipv4=isolated"));
  EXPECT_FALSE(has(outer_network_argv(s), "--internal"));
}

TEST_F(FakeDockerTest, GrantSecretTravelsOnStdinOnly) {
  const std::string secret = "sk-TOPSECRET-4711";
  ProcessOutcome o = spacectl({"grant", "add", "0123456789ab", "anthropic", "--upstream", "https://api.anthropic.com/v1",
                               "--header", "x-api-key"}, secret + "\n");
  EXPECT_TRUE(o.succeeded()) << o.out << o.err;
  EXPECT_EQ(o.out.find(secret), std::string::npos);
  bool delivered = false;
  for (const Call& c : calls()) {
    for (const std::string& a : c.argv) EXPECT_EQ(a.find(secret), std::string::npos) << "secret in argv";
    if (c.stdin_bytes.find(secret) != std::string::npos) {
      delivered = true;
      EXPECT_TRUE(has(c.argv, "/gatekeeper"));
      EXPECT_TRUE(has_pair(c.argv, "--user", "65532:65532"));
      EXPECT_EQ(c.argv.back(), "/grants");
    }
  }
  EXPECT_TRUE(delivered);
  std::ifstream record(dir_ + "/state/spaces/0123456789ab.json");
  const std::string text((std::istreambuf_iterator<char>(record)), std::istreambuf_iterator<char>());
  EXPECT_NE(text.find("anthropic"), std::string::npos);
  EXPECT_EQ(text.find(secret), std::string::npos);
  struct stat st{};
  ASSERT_EQ(stat((dir_ + "/state/spaces/0123456789ab.json").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
}

TEST_F(FakeDockerTest, UnsafePrivateUpstreamIsSentAndRecordedAndASecretOverHttpNeedsIt) {
  const std::string secret = "sk-LAN-0815";
  ProcessOutcome refused = spacectl({"grant", "add", "0123456789ab", "local", "--upstream", "http://192.168.1.20:11434/v1",
                                     "--header", "authorization"}, secret + "\n");
  EXPECT_FALSE(refused.succeeded()) << refused.out;
  EXPECT_NE((refused.out + refused.err).find("a secret goes over https"), std::string::npos) << refused.out << refused.err;
  ProcessOutcome o = spacectl({"grant", "add", "0123456789ab", "local", "--upstream", "http://192.168.1.20:11434/v1",
                               "--header", "authorization", "--unsafe-private-upstream"}, secret + "\n");
  ASSERT_TRUE(o.succeeded()) << o.out << o.err;
  EXPECT_NE(o.err.find("warning: grant local may reach private networks"), std::string::npos) << o.err;
  bool sent = false;
  for (const Call& c : calls()) {
    if (c.stdin_bytes.find(secret) != std::string::npos) {
      sent = c.stdin_bytes.find("\"unsafe_private_upstream\":true") != std::string::npos;
    }
  }
  EXPECT_TRUE(sent);
  std::ifstream record(dir_ + "/state/spaces/0123456789ab.json");
  const std::string text((std::istreambuf_iterator<char>(record)), std::istreambuf_iterator<char>());
  EXPECT_NE(text.find("\"unsafe_private_upstream\": true"), std::string::npos) << text;
}

// The object a create call makes: `create --name N ...`, `network create ... N`, `volume create ... N`.
std::string created_object(const Call& c) {
  const std::vector<std::string>& a = c.argv;
  if (a.size() >= 2 && a[0] == "create") {
    for (std::size_t i = 1; i + 1 < a.size(); ++i)
      if (a[i] == "--name") return "container " + a[i + 1];
  }
  if (a.size() >= 3 && (a[0] == "network" || a[0] == "volume") && a[1] == "create") return a[0] + " " + a.back();
  return {};
}

// The object a remove call removes: `rm [flags] N`, `network rm N`, `volume rm [flags] N`.
std::string removed_object(const Call& c) {
  const std::vector<std::string>& a = c.argv;
  if (a.size() >= 2 && a[0] == "rm") return "container " + a.back();
  if (a.size() >= 3 && (a[0] == "network" || a[0] == "volume") && a[1] == "rm") return a[0] + " " + a.back();
  return {};
}

TEST_F(FakeDockerTest, CreateThatFailsVerifyRemovesEverythingItMade) {
  GK_REQUIRE(gk_test::running_as_root(), "create attaches each volume's disk image to a loop device (root)");
  // The canned container belongs to another space id, so verify fails after every create step.
  ProcessOutcome o = spacectl({"space", "create", "--name", "t", "--memory", "512m"});
  EXPECT_EQ(o.exit_code, 4) << o.out << o.err;  // the container inspected is not this space's
  const std::vector<Call> all = calls();
  bool created_space = false, created_gatekeeper = false;
  std::set<std::string> created, removed;
  for (const Call& c : all) {
    if (!c.argv.empty() && c.argv[0] == "create") {
      if (has(c.argv, "serve")) created_gatekeeper = true; else if (has(c.argv, "--init")) created_space = true;
      expect_common(c.argv, has(c.argv, "serve") ? "65532:65532" : "70000:70000",
                    std::string(CONTROLLER_TESTDATA) + "/seccomp-stand-in.json",
                    has(c.argv, "serve") ? "268435456b" : "536870912b");
    }
    if (const std::string made = created_object(c); !made.empty()) created.insert(made);
    if (const std::string gone = removed_object(c); !gone.empty()) removed.insert(gone);
    EXPECT_FALSE(!c.argv.empty() && c.argv[0] == "start") << "started before verify passed";
  }
  EXPECT_TRUE(created_gatekeeper);
  EXPECT_TRUE(created_space);
  // Two networks, two volumes, the space, the gatekeeper and the volume-owner container.
  EXPECT_EQ(created.size(), 7u);
  for (const std::string& object : created) EXPECT_TRUE(removed.count(object)) << object << " was made and left behind";
  // The volumes' disk images and their loop devices go with the rollback too.
  std::error_code ec;
  EXPECT_TRUE(std::filesystem::is_empty(dir_ + "/disks", ec)) << "disk images left in " << dir_ << "/disks";
  for (const Call& c : all) {
    if (c.argv.size() < 2 || c.argv[0] != "volume" || c.argv[1] != "create") continue;
    EXPECT_TRUE(has_pair(c.argv, "--opt", "type=ext4")) << "an unbounded volume";
    EXPECT_TRUE(has_pair(c.argv, "--opt", "o=nosuid,nodev"));
    const auto device = std::find_if(c.argv.begin(), c.argv.end(), [](const std::string& a) { return a.rfind("device=/dev/loop", 0) == 0; });
    ASSERT_NE(device, c.argv.end());
    EXPECT_FALSE(std::filesystem::exists("/sys/block/" + device->substr(12))) << *device << " left attached";
  }
}

TEST_F(FakeDockerTest, EscapeTestTakesSarifAndHtmlFormats) {
  for (const char* format : {"sarif", "html"}) {
    // The format is accepted; the run then stops at the missing binary, before any Docker call.
    ProcessOutcome o = spacectl({"escape-test", "0123456789ab", "--format", format, "--binary", dir_ + "/no-such-suite"});
    EXPECT_NE(o.out.find("cannot be read (--binary)"), std::string::npos) << format << ": " << o.out << o.err;
  }
  ProcessOutcome bad = spacectl({"escape-test", "0123456789ab", "--format", "xml", "--binary", dir_ + "/no-such-suite"});
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_EQ(bad.out.find("cannot be read"), std::string::npos);
  EXPECT_NE(bad.err.find("--format"), std::string::npos) << bad.err;
}

}  // namespace
}  // namespace controller
