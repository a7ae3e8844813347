// The benchmarks' statistics (the tables themselves are read by people, never asserted).
#include "tests/bench/common/report.h"

#include <gtest/gtest.h>

#include <vector>

namespace bench {
namespace {

std::vector<double> one_to(int n) {
  std::vector<double> v;
  for (int i = 1; i <= n; ++i) v.push_back(i);
  return v;
}

// Nearest rank: the sample of rank ceil(q * n). A floor(q * n) index (one rank high) fails here.
TEST(PercentileTest, IsTheNearestRank) {
  EXPECT_EQ(percentile(one_to(10), 0.50), 5);
  EXPECT_EQ(percentile(one_to(10), 0.90), 9);
  EXPECT_EQ(percentile(one_to(10), 0.99), 10);
  EXPECT_EQ(percentile(one_to(1000), 0.50), 500);
  EXPECT_EQ(percentile(one_to(1000), 0.99), 990);
  EXPECT_EQ(percentile(one_to(1000), 0.999), 999);
  EXPECT_EQ(percentile(one_to(4), 0.50), 2);
  EXPECT_EQ(percentile(one_to(3), 0.50), 2);
}

TEST(PercentileTest, EndsAndEdges) {
  EXPECT_EQ(percentile(one_to(10), 0.0), 1);  // rank is at least 1
  EXPECT_EQ(percentile(one_to(10), 1.0), 10);
  EXPECT_EQ(percentile({7.0}, 0.99), 7);
  EXPECT_EQ(percentile({}, 0.5), 0);
  EXPECT_EQ(nearest_rank(1000, 0.99), 990u);
  EXPECT_EQ(nearest_rank(1000, 0.991), 991u);
}

}  // namespace
}  // namespace bench
