// The engine's networks for the subnet allocation (controller/engine_networks.h): the parsers
// hold the engine's output to IDs and subnets, bounded; against the recording fake `docker`
// (testing/fake_docker.cc), a create reads the same number of networks with 1 or 100 on the
// engine once spacectl has seen them, still avoids a network someone else made since, frees a
// removed network's subnet, and refuses hostile output naming the call.
#include "controller/engine_networks.h"

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "controller/docker_place.h"
#include "controller/testing/fake_docker_fixture.h"

namespace controller {
namespace {

std::string net_id(int i) {
  char head[9];
  std::snprintf(head, sizeof head, "%08x", static_cast<unsigned>(i));
  return std::string(head) + std::string(56, 'a');
}

// ---- parsers ----

TEST(EngineNetworksTest, NetworkIdsAreSixtyFourLowercaseHexDigits) {
  const std::string a = net_id(1), b = net_id(2);
  Result<std::vector<std::string>> ids =
      parse_network_ids(a + "\n" + b + "\r\n\n" + a + "\n", "ls");
  ASSERT_TRUE(ids.ok()) << ids.error().message;
  EXPECT_EQ(*ids, (std::vector<std::string>{a, b}));  // blank lines skipped, a repeat kept once
  for (const std::string& bad :
       std::vector<std::string>{a.substr(1), a + "0", std::string(64, 'A'),
                                std::string(63, 'a') + "g", "--help", " " + a, a + " x"}) {
    Result<std::vector<std::string>> r =
        parse_network_ids(bad + "\n", "docker network ls (all networks)");
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_NE(r.error().message.find("docker network ls (all networks): not a network ID"),
              std::string::npos)
        << r.error().message;
  }
  // Control bytes are never echoed.
  Result<std::vector<std::string>> r = parse_network_ids("\x1b[2Jboom\n", "ls");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message.find('\x1b'), std::string::npos);
}

TEST(EngineNetworksTest, NetworkCountIsBounded) {
  std::string text;
  for (std::size_t i = 0; i < kMaxEngineNetworks; ++i) text += net_id(static_cast<int>(i)) + "\n";
  EXPECT_TRUE(parse_network_ids(text, "ls").ok());
  text += net_id(static_cast<int>(kMaxEngineNetworks)) + "\n";
  Result<std::vector<std::string>> r = parse_network_ids(text, "ls");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("more than 16384 networks"), std::string::npos)
      << r.error().message;
}

TEST(EngineNetworksTest, SubnetsAreIpv4OrIpv6NetworksInCidrForm) {
  for (const char* good : {"10.213.0.0/29", "172.17.0.1/16", "0.0.0.0/0", "fd00::/64", "::/0",
                           "2001:db8:0:0:0:0:0:0/128", "::ffff:10.0.0.0/104", "fe80::1/64"}) {
    EXPECT_TRUE(is_engine_subnet(good)) << good;
  }
  for (const char* bad :
       {"", "10.213.0.0", "10.213.0.0/33", "10.213.0.0/08", "fd00::/129", "fd00::/", "fd00:/64",
        "fd00:::1/64", "fd00::1::2/64", "12345::/64", "fd00::g/64", "::ffff:10.0.0/104",
        "10.0.0.0/8;", "$(reboot)/8", "fd00::/64 "}) {
    EXPECT_FALSE(is_engine_subnet(bad)) << bad;
  }
}

TEST(EngineNetworksTest, SubnetLinesAnswerOnlyWhatWasAskedOnceEach) {
  const std::string a = net_id(1), b = net_id(2), c = net_id(3);
  Result<std::vector<NetworkSubnets>> ok = parse_network_subnet_lines(
      a + " 10.213.0.0/29 fd00::/64 \n" + b + " \n", {a, b, c}, "inspect");
  ASSERT_TRUE(ok.ok()) << ok.error().message;
  ASSERT_EQ(ok->size(), 2U);  // c was removed meanwhile: left out
  EXPECT_EQ((*ok)[0].subnets, (std::vector<std::string>{"10.213.0.0/29", "fd00::/64"}));
  EXPECT_TRUE((*ok)[1].subnets.empty());  // host, none: no addresses

  struct Case {
    std::string text, why;
  };
  std::string many = a;
  for (int i = 0; i <= static_cast<int>(kMaxSubnetsPerNetwork); ++i) {
    many += " 10.213.0." + std::to_string(8 * i) + "/29";
  }
  for (const Case& k : std::vector<Case>{
           {c + " 10.0.0.0/8\n", "which was not asked for"},
           {a + " 10.0.0.0/8\n" + a + " 10.1.0.0/16\n", "answered twice for network"},
           {a + " 10.0.0.0/8 <no value>\n", "not a subnet: <no"},
           {"Error: something\n", "not a network ID: Error:"},
           {many + "\n", "more than 16 subnets"},
           {a + " " + std::string(2000, '1') + "\n", "a line longer than 1024 bytes"}}) {
    Result<std::vector<NetworkSubnets>> r =
        parse_network_subnet_lines(k.text, {a, b}, "docker network inspect (2 networks)");
    ASSERT_FALSE(r.ok()) << k.text.substr(0, 80);
    EXPECT_EQ(r.error().code, Code::kCommandFailed);
    EXPECT_NE(r.error().message.find("docker network inspect (2 networks): "), std::string::npos)
        << r.error().message;
    EXPECT_NE(r.error().message.find(k.why), std::string::npos) << r.error().message;
  }
}

TEST(EngineNetworksTest, TheFileReadsBackWhatWasWrittenAndRefusesAnythingElse) {
  const std::vector<NetworkSubnets> networks = {{net_id(1), {"10.213.0.0/29"}}, {net_id(2), {}}};
  Result<std::map<std::string, std::vector<std::string>>> back =
      parse_network_subnets_file(network_subnets_text(networks));
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(back->size(), 2U);
  EXPECT_EQ(back->at(net_id(1)), (std::vector<std::string>{"10.213.0.0/29"}));
  EXPECT_FALSE(parse_network_subnets_file(net_id(1) + " x\n").ok());
  EXPECT_FALSE(parse_network_subnets_file(net_id(1) + "\n" + net_id(1) + "\n").ok());
}

// ---- against the fake docker ----

class EngineNetworksFakeTest : public FakeDockerTest {
 protected:
  void SetUp() override {
    FakeDockerTest::SetUp();
    setenv("FAKE_DOCKER_NETWORKS", (dir_ + "/networks").c_str(), 1);
  }
  void TearDown() override {
    unsetenv("FAKE_DOCKER_NETWORKS");
    FakeDockerTest::TearDown();
  }
  void set_networks(const std::vector<std::string>& lines) {
    std::ofstream out(dir_ + "/networks", std::ios::trunc);
    for (const std::string& l : lines) out << l << "\n";
  }
  // A create that stops at its first network (the allocation is done by then); the log starts
  // afresh so calls() holds this create's calls only.
  ProcessOutcome create() {
    std::filesystem::remove(dir_ + "/log");
    return spacectl({"space", "create", "--name", "t", "--memory", "512m"}, {},
                    {"env", "FAKE_DOCKER_FAIL=network create"});
  }
  // Engine requests for the engine's networks: a `network ls --no-trunc --format {{.ID}}` is one, a
  // `network inspect` with the subnet template one per network it names (the CLI asks one by one).
  struct Reads {
    std::size_t calls = 0, requests = 0;
  };
  Reads network_reads() {
    Reads r;
    for (const Call& c : calls()) {
      if (c.argv.size() >= 3 && c.argv[0] == "network" && c.argv[1] == "ls" &&
          c.argv[2] == "--no-trunc") {
        ++r.calls, ++r.requests;
      }
      if (c.argv.size() >= 4 && c.argv[0] == "network" && c.argv[1] == "inspect" &&
          c.argv[3].find("IPAM") != std::string::npos) {
        ++r.calls;
        const auto dash = std::find(c.argv.begin(), c.argv.end(), "--");
        r.requests += static_cast<std::size_t>(c.argv.end() - dash) - 1;
      }
    }
    return r;
  }
  // The --subnet of each `network create`, in order.
  std::vector<std::string> created_subnets() {
    std::vector<std::string> out;
    for (const Call& c : calls()) {
      if (c.argv.size() < 2 || c.argv[0] != "network" || c.argv[1] != "create") continue;
      const auto s = std::find(c.argv.begin(), c.argv.end(), "--subnet");
      if (s != c.argv.end() && s + 1 != c.argv.end()) out.push_back(*(s + 1));
    }
    std::sort(out.begin(), out.end());
    return out;
  }
};

TEST_F(EngineNetworksFakeTest, ReadingTheNetworksCostsTheSameWithOneOrAHundredOnTheEngine) {
  std::vector<Reads> warm;
  for (const int n : {1, 100}) {
    std::filesystem::remove_all(dir_ + "/state");
    std::vector<std::string> lines;
    for (int i = 0; i < n; ++i) {
      lines.push_back(net_id(i) + " 172.20." + std::to_string(i) + ".0/24");
    }
    set_networks(lines);
    ProcessOutcome first = create();
    ASSERT_NE(first.exit_code, 0);  // stopped at its first network, as meant
    ASSERT_FALSE(created_subnets().empty())
        << "the create did not get past the allocation: " << first.err;
    // The space made before this one left its two networks.
    lines.push_back(net_id(1000) + " 10.213.0.0/29");
    lines.push_back(net_id(1001) + " 10.213.0.8/29");
    set_networks(lines);
    (void)create();
    warm.push_back(network_reads());
    EXPECT_EQ(created_subnets(), (std::vector<std::string>{"10.213.0.16/29", "10.213.0.24/29"}));
  }
  EXPECT_EQ(warm[0].calls, 2U);
  EXPECT_EQ(warm[0].calls, warm[1].calls) << "engine calls with 1 and with 100 networks";
  EXPECT_EQ(warm[0].requests, 3U);  // the list, and the two new networks
  EXPECT_EQ(warm[0].requests, warm[1].requests) << "engine requests with 1 and with 100 networks";
}

TEST_F(EngineNetworksFakeTest, AForeignNetworkIsAvoidedAndARemovedOneFreesItsSubnet) {
  const std::string foreign = net_id(7) + " 10.213.0.0/28";  // someone else's, two blocks
  set_networks({net_id(1) + " 172.17.0.0/16", foreign});
  (void)create();
  EXPECT_EQ(created_subnets(), (std::vector<std::string>{"10.213.0.16/29", "10.213.0.24/29"}));
  // Another one, made after spacectl read the first two: read now, and avoided.
  set_networks({net_id(1) + " 172.17.0.0/16", foreign, net_id(8) + " 10.213.0.16/29"});
  (void)create();
  EXPECT_EQ(created_subnets(), (std::vector<std::string>{"10.213.0.24/29", "10.213.0.32/29"}));
  EXPECT_EQ(network_reads().requests, 2U);  // the list and the new network only
  // Both removed: their blocks are free again (what was read of them is not kept).
  set_networks({net_id(1) + " 172.17.0.0/16"});
  (void)create();
  EXPECT_EQ(created_subnets(), (std::vector<std::string>{"10.213.0.0/29", "10.213.0.8/29"}));
}

TEST_F(EngineNetworksFakeTest, HostileEngineOutputRefusesTheCreateNamingTheCall) {
  set_networks({net_id(1) + " 10.213.0.0/29 $(reboot)"});
  ProcessOutcome o = create();
  EXPECT_NE(o.exit_code, 0);
  EXPECT_NE(o.out.find("network inspect (1 networks): network " + net_id(1) +
                       ": not a subnet: $(reboot)"),
            std::string::npos)
      << o.out << o.err;
  EXPECT_TRUE(created_subnets().empty());

  set_networks({"--help 10.0.0.0/8"});
  o = create();
  EXPECT_NE(o.out.find("network ls (all networks): not a network ID: --help"), std::string::npos)
      << o.out << o.err;
  EXPECT_TRUE(created_subnets().empty());
}

TEST_F(EngineNetworksFakeTest, AnUnreadableFileOnlyCostsEngineCalls) {
  set_networks({net_id(1) + " 10.213.0.0/29"});
  (void)create();
  std::ofstream(dir_ + "/state/network-subnets", std::ios::trunc) << "garbage\n";
  (void)create();
  EXPECT_EQ(network_reads().requests, 2U);  // read again
  EXPECT_EQ(created_subnets(), (std::vector<std::string>{"10.213.0.16/29", "10.213.0.8/29"}));
}

TEST_F(EngineNetworksFakeTest, TheDockerPlaceAsksForIdsOnlyInOneCall) {
  set_networks({net_id(1) + " 10.213.0.0/29", net_id(2) + " 10.213.0.8/29"});
  PlaceOptions o;
  o.owner = "testowner";
  DockerPlace place(o);
  Result<std::vector<NetworkSubnets>> r = place.network_subnets({net_id(1), net_id(2), net_id(3)});
  ASSERT_TRUE(r.ok()) << r.error().message;  // net_id(3) is gone: left out
  EXPECT_EQ(r->size(), 2U);
  EXPECT_FALSE(place.network_subnets({"--format=x"}).ok());  // never a word that reads as a flag
}

}  // namespace
}  // namespace controller
