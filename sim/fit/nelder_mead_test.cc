#include "sim/fit/nelder_mead.h"

#include <gtest/gtest.h>

#include <cmath>

namespace servesim::fit {
namespace {

TEST(NelderMeadTest, FindsTheMinimumOfAShiftedQuadratic) {
  auto f = [](const std::vector<double>& x) {
    return (x[0] - 3) * (x[0] - 3) + 10 * (x[1] + 1) * (x[1] + 1);
  };
  NelderMeadResult r = MinimizeNelderMead(f, {0, 0}, {1, 1}, {-10, -10}, {10, 10}, 500, 1e-12);
  EXPECT_NEAR(r.x[0], 3, 1e-3);
  EXPECT_NEAR(r.x[1], -1, 1e-3);
}

TEST(NelderMeadTest, RespectsTheBounds) {
  auto f = [](const std::vector<double>& x) { return (x[0] - 5) * (x[0] - 5); };
  NelderMeadResult r = MinimizeNelderMead(f, {0}, {1}, {-1}, {2}, 200, 1e-12);
  EXPECT_NEAR(r.x[0], 2, 1e-6);
}

// A start on an upper bound must still be able to move off it: the first
// simplex steps down there, not up into the bound.
TEST(NelderMeadTest, LeavesAStartOnTheUpperBound) {
  auto f = [](const std::vector<double>& x) {
    return (x[0] - 1) * (x[0] - 1) + 4 * (x[1] - 0.3) * (x[1] - 0.3);
  };
  NelderMeadResult r = MinimizeNelderMead(f, {3, 0}, {1, 1}, {-5, -5}, {3, 5}, 500, 1e-12);
  EXPECT_NEAR(r.x[0], 1, 1e-3);
  EXPECT_NEAR(r.x[1], 0.3, 1e-3);
}

}  // namespace
}  // namespace servesim::fit
