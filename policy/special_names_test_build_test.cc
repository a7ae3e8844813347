// The special-use table as built with GATEKEEPER_UNSAFE_TEST_RANGES_PUBLIC: `.test` is kept for
// the harness's dnsmasq names and the escape runner's upstream.test; every other row is refused.
#include <gtest/gtest.h>

#include <string>

#include "policy/corridor.h"
#include "policy/ranges.h"
#include "policy/special_names.h"

namespace policy {
namespace {

TEST(SpecialNamesTestBuildTest, KeepsOnlyTheTestSuffix) {
  ASSERT_TRUE(unsafe_test_ranges_public());
  for (const SpecialUseName& row : special_use_names()) {
    const std::string name = "a." + std::string(row.suffix);
    if (row.suffix == "test") {
      EXPECT_EQ(special_use_row(name), nullptr);
    } else {
      EXPECT_EQ(special_use_row(name), &row) << name;
    }
  }
  NetworkPolicy open;
  open.mode = Mode::kOpen;
  EXPECT_TRUE(decide_target("upstream.test:443", open).pending.has_value());
  EXPECT_EQ(decide_target("foo.localhost:443", open).decision.word(), Word::kDenySpecialUseName);
}

}  // namespace
}  // namespace policy
