// The classifier as built with GATEKEEPER_UNSAFE_TEST_RANGES_PUBLIC (library
// policy_unsafe_test_ranges): only 198.18.0.0/15 and 2001:2::/48 become public, for test
// upstreams; everything else answers exactly as in the release build.
#include <gtest/gtest.h>

#include <optional>
#include <vector>

#include "policy/corridor.h"
#include "policy/ranges.h"
#include "policy/ranges_probes_test.h"

namespace policy {
namespace {

using policy_test::Probe;
using policy_test::Verdict;

bool blocked(std::string_view text) {
  std::optional<Address> address = parse_answer(text);
  if (!address) {
    ADD_FAILURE() << "probe does not parse: " << text;
    return true;
  }
  return classify(*address).blocked;
}

void expect_probes_in_test_build(std::span<const Probe> probes) {
  for (const Probe& probe : probes) {
    bool want_blocked = probe.verdict == Verdict::kBlocked;
    EXPECT_EQ(blocked(probe.address), want_blocked) << probe.address;
  }
}

TEST(TestBuildRangesTest, SaysTheUnsafeSwitchIsOn) { EXPECT_TRUE(unsafe_test_ranges_public()); }

TEST(TestBuildRangesTest, TreatsBenchmarkingRangesAsPublic) {
  EXPECT_FALSE(blocked("198.18.0.1"));
  EXPECT_FALSE(blocked("198.18.0.0"));
  EXPECT_FALSE(blocked("198.19.255.255"));
  EXPECT_FALSE(blocked("2001:2::1"));
  EXPECT_FALSE(blocked("2001:2:0:ffff:ffff:ffff:ffff:ffff"));
}

TEST(TestBuildRangesTest, NeighboursOfBenchmarkingRangesBehaveNormally) {
  EXPECT_FALSE(blocked("198.17.255.255"));
  EXPECT_FALSE(blocked("198.20.0.0"));
  // 2001:2::/48 sits inside the blocked 2001::/23: its neighbours stay blocked.
  EXPECT_TRUE(blocked("2001:1:ffff:ffff:ffff:ffff:ffff:ffff"));
  EXPECT_TRUE(blocked("2001:2:1::"));
}

TEST(TestBuildRangesTest, LeavesEveryOtherRowBlocked) {
  EXPECT_TRUE(blocked("10.0.0.1"));
  EXPECT_TRUE(blocked("127.0.0.1"));
  EXPECT_TRUE(blocked("169.254.169.254"));
  EXPECT_TRUE(blocked("::1"));
  EXPECT_TRUE(blocked("::ffff:198.18.0.1"));  // embedded forms stay refused outright
  EXPECT_TRUE(blocked("64:ff9b::c612:1"));
}

TEST(TestBuildRangesTest, EveryIpv4ProbeMatchesReleaseExceptBenchmarking) {
  expect_probes_in_test_build(policy_test::kIpv4Probes);
}

TEST(TestBuildRangesTest, EveryIpv6ProbeMatchesReleaseExceptBenchmarking) {
  expect_probes_in_test_build(policy_test::kIpv6Probes);
}

TEST(TestBuildRangesTest, CorridorAllowsNameThatResolvesIntoBenchmarkingRange) {
  NetworkPolicy policy;
  policy.mode = Mode::kOpen;
  TargetDecision target = decide_target("upstream.example.test:443", policy);
  ASSERT_TRUE(target.pending.has_value());
  std::vector<Address> answers = {*parse_answer("198.18.0.7")};
  AnswerDecision answer = decide_answers(*target.pending, answers, {});
  EXPECT_EQ(answer.decision.text(), "allow");
  ASSERT_TRUE(answer.endpoint.has_value());
  EXPECT_EQ(answer.endpoint->address().to_string(), "198.18.0.7");
}

}  // namespace
}  // namespace policy
