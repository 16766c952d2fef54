#include "sim/fit/engine_fit.h"

#include <cmath>

#include "gtest/gtest.h"

namespace servesim::fit {
namespace {

// Within the 20 % scale the loss is the squared error; far beyond it, it grows
// as 2c|e| (c = 0.2): a 100 % log error costs 0.08 * (sqrt(26) - 1) = 0.3279,
// not 1.
TEST(RobustLossTest, SquaredNearZeroLinearFarOut) {
  EXPECT_NEAR(RobustLoss(1e-4), 1e-4, 1e-6);
  EXPECT_NEAR(RobustLoss(1.0), 0.08 * (std::sqrt(26.0) - 1.0), 1e-12);
  EXPECT_NEAR(RobustLoss(100.0) / RobustLoss(25.0), 2.0, 0.05);
  EXPECT_EQ(RobustLoss(0.0), 0.0);
}

}  // namespace
}  // namespace servesim::fit
