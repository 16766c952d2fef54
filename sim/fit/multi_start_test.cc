#include "sim/fit/multi_start.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>

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

// Two valleys: the deeper at (1, 1) (value 0), a shallower at (-2, -1)
// (value 0.3).
double TwoValleys(const std::vector<double>& x) {
  const double deep = (x[0] - 1) * (x[0] - 1) + (x[1] - 1) * (x[1] - 1);
  const double shallow = 0.3 + (x[0] + 2) * (x[0] + 2) + 2 * (x[1] + 1) * (x[1] + 1);
  return std::min(deep, shallow);
}

MultiStartSearch TwoValleySearch() {
  MultiStartSearch s;
  s.fixed_starts = {{-2.5, -1.5}};  // in the shallow valley
  s.screen_base = {0, 0};
  s.screen_lower = {-4, -4};
  s.screen_upper = {4, 4};
  s.screen_points = 20;
  s.screened_starts = 2;
  s.evaluations_per_search = 80;
  s.max_polishes = 2;
  s.tolerance = 1e-10;
  return s;
}

TEST(MinimizeFromManyStartsTest, TheScreenFindsTheDeeperValley) {
  const NelderMeadResult r =
      MinimizeFromManyStarts(TwoValleys, TwoValleySearch(), {1, 1}, {-4, -4}, {4, 4});
  EXPECT_NEAR(r.x[0], 1, 1e-3);
  EXPECT_NEAR(r.x[1], 1, 1e-3);
  EXPECT_LT(r.value, 1e-6);
}

// Searches cut short by their budget rank by where they stopped: the one
// started on the shallow valley's floor (0.3) ends below the one still
// descending into the deep valley. Polishing only the lowest end keeps the
// shallow floor; polishing the two lowest carries the other to the deep one.
TEST(MinimizeFromManyStartsTest, PolishingMoreEndsReachesTheDeeperValley) {
  MultiStartSearch s;
  s.fixed_starts = {{-2, -1}, {3.5, 3.5}};
  s.evaluations_per_search = 6;
  s.max_polishes = 200;
  s.tolerance = 1e-12;
  s.polished_ends = 1;
  const NelderMeadResult one = MinimizeFromManyStarts(TwoValleys, s, {1, 1}, {-4, -4}, {4, 4});
  EXPECT_NEAR(one.value, 0.3, 1e-12);
  s.polished_ends = 2;
  const NelderMeadResult two = MinimizeFromManyStarts(TwoValleys, s, {1, 1}, {-4, -4}, {4, 4});
  EXPECT_LT(two.value, 0.1);  // in the deep valley, short of its floor at this budget
  EXPECT_NEAR(two.x[0], 1, 0.5);
  EXPECT_NEAR(two.x[1], 1, 0.5);
}

// The screen's box is not the bounds: a bound narrowed where neither the
// lowest screen points nor the searches go (x0 <= 2.5; the minimum is at
// x0 = 1) leaves every start, and so the result, the same to the bit.
// Spread over the bounds, the screen's points would all move with the bound.
TEST(MinimizeFromManyStartsTest, ABoundThatDoesNotBindLeavesTheResultUnchanged) {
  const NelderMeadResult wide =
      MinimizeFromManyStarts(TwoValleys, TwoValleySearch(), {1, 1}, {-4, -4}, {4, 4});
  const NelderMeadResult narrow =
      MinimizeFromManyStarts(TwoValleys, TwoValleySearch(), {1, 1}, {-4, -4}, {2.5, 4});
  EXPECT_EQ(wide.x, narrow.x);
  EXPECT_EQ(wide.value, narrow.value);
}

// The screen, the searches and the polishes run on four threads: the same
// end point, value and number of evaluations as on one.
TEST(MinimizeFromManyStartsTest, TheResultIsTheSameOnFourThreads) {
  MultiStartSearch s = TwoValleySearch();
  s.polished_ends = 2;
  std::atomic<int> on_one{0}, on_four{0};
  auto counted = [](std::atomic<int>* n) {
    return [n](const std::vector<double>& x) {
      ++*n;
      return TwoValleys(x);
    };
  };
  const NelderMeadResult one =
      MinimizeFromManyStarts(counted(&on_one), s, {1, 1}, {-4, -4}, {4, 4});
  s.threads = 4;
  const NelderMeadResult four =
      MinimizeFromManyStarts(counted(&on_four), s, {1, 1}, {-4, -4}, {4, 4});
  EXPECT_EQ(one.x, four.x);
  EXPECT_EQ(one.value, four.value);
  EXPECT_EQ(on_one.load(), on_four.load());
  EXPECT_EQ(LowestPoints(TwoValleys, {{0, 0}, {1, 1}, {-2, -1}, {3, 3}}, 2, /*threads=*/3),
            LowestPoints(TwoValleys, {{0, 0}, {1, 1}, {-2, -1}, {3, 3}}, 2));
}

// Of the first 16 points of base 2, 8 fall below 1/2: only those are inside
// bounds of [0, 0.49], and a point outside is dropped, not moved onto the
// bound and evaluated there.
TEST(MinimizeFromManyStartsTest, ScreenPointsOutsideTheBoundsAreNotEvaluated) {
  MultiStartSearch s;
  s.screen_base = {0};
  s.screen_lower = {0};
  s.screen_upper = {1};
  s.screen_points = 16;
  int evaluations = 0;
  auto f = [&](const std::vector<double>& x) {
    ++evaluations;
    return x[0];
  };
  MinimizeFromManyStarts(f, s, {0.1}, {0}, {0.49});
  EXPECT_EQ(evaluations, 8);
}

}  // namespace
}  // namespace servesim::fit
