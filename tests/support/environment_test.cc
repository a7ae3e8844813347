// The CI=true rule itself: GK_REQUIRE fails instead of skipping when CI is "true".
#include "tests/support/environment.h"

#include <gtest/gtest-spi.h>
#include <stdlib.h>

namespace {

void require_missing_thing() { GK_REQUIRE(false, "a thing this machine lacks"); }

TEST(EnvironmentTest, RequireFailsUnderCi) {
  ::setenv("CI", "true", 1);
  EXPECT_FATAL_FAILURE(require_missing_thing(), "required under CI=true but unavailable");
}

TEST(EnvironmentTest, CiMeansExactlyTrue) {
  ::setenv("CI", "1", 1);
  EXPECT_FALSE(gk_test::running_in_ci());
  ::setenv("CI", "true", 1);
  EXPECT_TRUE(gk_test::running_in_ci());
}

}  // namespace
