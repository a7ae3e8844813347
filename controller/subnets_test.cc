// The subnet pool (controller/subnets.h): parsing at and past each limit, the smallest block per
// network, the lowest free block skipping what the engine and the records hold, exhaustion naming
// the pool, reuse after a record is removed, and two processes allocating under the pool lock.
#include "controller/subnets.h"

#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "controller/records.h"

namespace controller {
namespace {

Ipv4Net net(const char* text) {
  const std::optional<Ipv4Net> n = parse_ipv4_net(text);
  EXPECT_TRUE(n.has_value()) << text;
  return n.value_or(Ipv4Net{});
}

TEST(SubnetsTest, ParsesNetworksStrictly) {
  EXPECT_EQ(to_string(net("10.213.0.0/16")), "10.213.0.0/16");
  EXPECT_EQ(to_string(net("0.0.0.0/0")), "0.0.0.0/0");
  EXPECT_EQ(to_string(net("255.255.255.255/32")), "255.255.255.255/32");
  for (const char* bad : {"10.213.0.1/16", "010.0.0.0/8", "10.0.0.0/33", "10.0.0/8", "10.0.0.0",
                          "10.0.0.0/", "10.0.0.0/08", "256.0.0.0/8", "10.0.0.0/8 ", " 10.0.0.0/8",
                          "a.b.c.d/8", "10..0.0/8", "fd00::/64"})
    EXPECT_FALSE(parse_ipv4_net(bad).has_value()) << bad;
  // An engine's subnet may carry host bits: the block that holds it.
  ASSERT_TRUE(parse_ipv4_net_loose("10.213.0.5/30").has_value());
  EXPECT_EQ(to_string(*parse_ipv4_net_loose("10.213.0.5/30")), "10.213.0.4/30");
}

TEST(SubnetsTest, EachNetworkGetsTheSmallestBlockThatHoldsItsHosts) {
  EXPECT_EQ(prefix_for_hosts(1), 30);
  EXPECT_EQ(prefix_for_hosts(2), 30);  // a /30 holds 2 hosts
  EXPECT_EQ(prefix_for_hosts(3), 29);  // one past it
  EXPECT_EQ(prefix_for_hosts(6), 29);
  EXPECT_EQ(prefix_for_hosts(7), 28);
  EXPECT_EQ(prefix_for_hosts(kInnerHosts), 29);
  EXPECT_EQ(prefix_for_hosts(kOuterHosts), 29);
}

TEST(SubnetsTest, PoolMustBePrivateAndHoldOneBlock) {
  for (const char* ok : {"10.213.0.0/16", "10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16",
                         "100.64.0.0/10", "172.31.255.248/29"})
    EXPECT_TRUE(parse_subnet_pool(ok).ok()) << ok;
  EXPECT_TRUE(parse_subnet_pool(kDefaultSubnetPool).ok());
  for (const char* refused :
       {"172.32.0.0/16", "172.15.0.0/16", "11.0.0.0/8", "8.8.0.0/16", "100.128.0.0/16",
        "198.18.0.0/15", "10.0.0.0/30", "0.0.0.0/0", "10.213.0.1/16", "nonsense"}) {
    Result<Ipv4Net> r = parse_subnet_pool(refused);
    ASSERT_FALSE(r.ok()) << refused;
    EXPECT_EQ(r.error().code, Code::kInvalidArgument) << refused;
    EXPECT_NE(r.error().message.find("subnet pool"), std::string::npos) << r.error().message;
  }
}

TEST(SubnetsTest, FirstFreeBlockSkipsEveryOverlap) {
  const Ipv4Net pool = net("10.213.0.0/24");
  EXPECT_EQ(to_string(*first_free_block(pool, 29, {})), "10.213.0.0/29");
  EXPECT_EQ(to_string(*first_free_block(pool, 29, {net("10.213.0.0/29")})), "10.213.0.8/29");
  // A foreign network larger than a block, one inside a block, and one outside the pool.
  EXPECT_EQ(to_string(*first_free_block(
                pool, 29, {net("10.213.0.0/25"), net("10.213.0.132/30"), net("10.212.0.0/16")})),
            "10.213.0.136/29");
  // A network covering the whole pool leaves nothing.
  EXPECT_FALSE(first_free_block(pool, 29, {net("10.0.0.0/8")}).ok());
}

TEST(SubnetsTest, ExhaustionNamesThePool) {
  const Ipv4Net pool = net("10.213.0.0/28");  // two /29s
  Result<Ipv4Net> last = first_free_block(pool, 29, {net("10.213.0.0/29")});
  ASSERT_TRUE(last.ok());
  EXPECT_EQ(to_string(*last), "10.213.0.8/29");
  Result<Ipv4Net> none = first_free_block(pool, 29, {net("10.213.0.0/29"), net("10.213.0.8/29")});
  ASSERT_FALSE(none.ok());
  EXPECT_EQ(none.error().code, Code::kPlaceUnusable);
  EXPECT_NE(none.error().message.find("subnet pool 10.213.0.0/28"), std::string::npos)
      << none.error().message;
  EXPECT_NE(none.error().message.find("--subnet-pool"), std::string::npos) << none.error().message;
}

TEST(SubnetsTest, RecordKeepsSubnetsAndRefusesBadOnes) {
  const std::string base = R"({"version":1,"mode":"allowlist","domains":[],"grants":[])";
  Result<SpaceRecord> r =
      parse_record(base + R"(,"subnets":{"inner":"10.213.0.0/29","outer":"10.213.0.8/29"}})", "t");
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->subnets.inner, "10.213.0.0/29");
  EXPECT_EQ(r->subnets.outer, "10.213.0.8/29");
  for (const char* bad :
       {R"(,"subnets":{"inner":"10.213.0.0/29"}})",
        R"(,"subnets":{"inner":"10.213.0.1/29","outer":"10.213.0.8/29"}})",
        R"(,"subnets":{"inner":"10.213.0.0/29","outer":8}})", R"(,"subnets":"10.213.0.0/29"})",
        R"(,"subnets":{"inner":"10.213.0.0/29","outer":"10.213.0.8/29","x":"y"}})"}) {
    Result<SpaceRecord> b = parse_record(base + bad, "t");
    ASSERT_FALSE(b.ok()) << bad;
    EXPECT_EQ(b.error().code, Code::kRecordUnreadable);
  }
}

class SubnetAllocationTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/subnets-test-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    state_ = tmpl;
  }
  void TearDown() override { std::filesystem::remove_all(state_); }

  // What begin_create does: a `preparing` record under the space's lock, then the allocation.
  Result<SpaceSubnets> allocate(const std::string& id, const std::string& pool,
                                const std::vector<std::string>& engine = {}) {
    Result<SpaceLock> lock = SpaceLock::acquire(state_, id, "test");
    if (!lock) return lock.error();
    SpaceRecord record;
    record.creation.state = "preparing";
    record.creation.step = "preparing";
    record.creation.started = now_utc_iso();
    if (Result<void> w = write_record(state_, id, record); !w) return w.error();
    return allocate_space_subnets(state_, id, pool, engine);
  }

  std::string state_;
};

TEST_F(SubnetAllocationTest, RecordsTwoBlocksPerSpaceAndReusesThemAfterRemoval) {
  Result<SpaceSubnets> a = allocate("00000000000a", "10.213.0.0/27");
  ASSERT_TRUE(a.ok()) << a.error().message;
  EXPECT_EQ(a->inner, "10.213.0.0/29");
  EXPECT_EQ(a->outer, "10.213.0.8/29");
  Result<SpaceRecord> written = read_record(state_, "00000000000a");
  ASSERT_TRUE(written.ok());
  EXPECT_EQ(written->subnets.inner, "10.213.0.0/29");
  EXPECT_EQ(written->subnets.outer, "10.213.0.8/29");

  Result<SpaceSubnets> b = allocate("00000000000b", "10.213.0.0/27");
  ASSERT_TRUE(b.ok()) << b.error().message;
  EXPECT_EQ(b->inner, "10.213.0.16/29");
  EXPECT_EQ(b->outer, "10.213.0.24/29");

  // The pool is full: the error names it, and the refused space's record holds nothing.
  Result<SpaceSubnets> c = allocate("00000000000c", "10.213.0.0/27");
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.error().message.find("subnet pool 10.213.0.0/27"), std::string::npos)
      << c.error().message;
  EXPECT_TRUE(read_record(state_, "00000000000c")->subnets.inner.empty());

  // Removing a space's record frees its blocks.
  ASSERT_TRUE(remove_record(state_, "00000000000a").ok());
  Result<SpaceSubnets> d = allocate("00000000000d", "10.213.0.0/27");
  ASSERT_TRUE(d.ok()) << d.error().message;
  EXPECT_EQ(d->inner, "10.213.0.0/29");
  EXPECT_EQ(d->outer, "10.213.0.8/29");
}

TEST_F(SubnetAllocationTest, SkipsTheEngineNetworksOfOthers) {
  Result<SpaceSubnets> a =
      allocate("00000000000a", "10.213.0.0/24",
               {"10.213.0.0/28", "10.213.0.17/32", "fd00::/64", "172.17.0.0/16"});
  ASSERT_TRUE(a.ok()) << a.error().message;
  EXPECT_EQ(a->inner, "10.213.0.24/29");
  EXPECT_EQ(a->outer, "10.213.0.32/29");
}

TEST_F(SubnetAllocationTest, RefusesAPoolOutsideThePrivateRanges) {
  Result<SpaceSubnets> a = allocate("00000000000a", "198.18.0.0/16");
  ASSERT_FALSE(a.ok());
  EXPECT_EQ(a.error().code, Code::kInvalidArgument);
}

TEST_F(SubnetAllocationTest, TwoProcessesNeverGetTheSameBlock) {
  constexpr int kPerProcess = 24;
  std::vector<pid_t> children;
  for (int p = 0; p < 2; ++p) {
    const pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      int failures = 0;
      for (int k = 0; k < kPerProcess; ++k) {
        char id[13];
        std::snprintf(id, sizeof id, "%06x%06x", p + 1, k);
        if (!allocate(id, "10.213.0.0/20").ok()) ++failures;
      }
      _exit(failures == 0 ? 0 : 1);
    }
    children.push_back(pid);
  }
  for (const pid_t pid : children) {
    int status = 0;
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  }
  Result<std::vector<std::pair<std::string, Ipv4Net>>> all = recorded_subnets(state_);
  ASSERT_TRUE(all.ok()) << all.error().message;
  EXPECT_EQ(all->size(), 2u * 2u * kPerProcess);
  std::set<std::string> distinct;
  for (const auto& [id, n] : *all) distinct.insert(to_string(n));
  EXPECT_EQ(distinct.size(), all->size()) << "two spaces were given the same block";
}

}  // namespace
}  // namespace controller
