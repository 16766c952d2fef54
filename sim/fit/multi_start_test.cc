#include "sim/fit/multi_start.h"

#include <gtest/gtest.h>

namespace servesim::fit {
namespace {

// Radical inverses by hand: 6 = 110 in base 2 -> 0.011 = 3/8; 6 = 20 in
// base 3 -> 0.02 = 2/9; 6 = 11 in base 5 -> 0.11 = 6/25.
TEST(HaltonPointTest, RadicalInversesInThePrimeBases) {
  const std::vector<double> p = HaltonPoint(6, 3);
  ASSERT_EQ(p.size(), 3u);
  EXPECT_DOUBLE_EQ(p[0], 3.0 / 8);
  EXPECT_DOUBLE_EQ(p[1], 2.0 / 9);
  EXPECT_DOUBLE_EQ(p[2], 6.0 / 25);
  EXPECT_DOUBLE_EQ(HaltonPoint(1, 1)[0], 0.5);
  EXPECT_DOUBLE_EQ(HaltonPoint(1, 5)[4], 1.0 / 11);  // the fifth prime
}

// The first 2^k points of base 2 fill every interval of width 2^-k once.
TEST(HaltonPointTest, FirstSixteenPointsStratifyTheUnitInterval) {
  std::vector<int> hits(16, 0);
  for (int i = 0; i < 16; ++i) ++hits[static_cast<int>(HaltonPoint(i, 1)[0] * 16)];
  for (int h : hits) EXPECT_EQ(h, 1);
}

TEST(LowestPointsTest, KeepsTheLowestInOrderAndTiesInCandidateOrder) {
  auto f = [](const std::vector<double>& x) { return (x[0] - 2) * (x[0] - 2); };
  const std::vector<std::vector<double>> lowest =
      LowestPoints(f, {{0}, {3}, {1}, {5}, {2}}, 3);
  ASSERT_EQ(lowest.size(), 3u);
  EXPECT_EQ(lowest[0][0], 2);
  EXPECT_EQ(lowest[1][0], 3);  // f = 1, before {1} with the same value
  EXPECT_EQ(lowest[2][0], 1);
  EXPECT_EQ(LowestPoints(f, {{0}}, 3).size(), 1u);
}

}  // namespace
}  // namespace servesim::fit
