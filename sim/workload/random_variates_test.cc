#include "sim/workload/random_variates.h"

#include <cmath>
#include <vector>

#include "gtest/gtest.h"

namespace servesim::workload {
namespace {

TEST(UniformIndexTest, MatchesThePythonReplayInMakeSharegptLengths) {
  // python3 -c "import make_sharegpt_lengths as m; r = m.Mt19937_64(7);
  //   print([m.uniform_index(r, 10) for _ in range(8)],
  //         [m.uniform_index(r, 1000003) for _ in range(3)])"
  std::mt19937_64 rng(7);
  std::vector<uint64_t> small, large;
  for (int i = 0; i < 8; ++i) small.push_back(UniformIndex(rng, 10));
  for (int i = 0; i < 3; ++i) large.push_back(UniformIndex(rng, 1000003));
  EXPECT_EQ(small, (std::vector<uint64_t>{5, 0, 8, 6, 1, 8, 9, 8}));
  EXPECT_EQ(large, (std::vector<uint64_t>{305379, 287841, 46105}));
}

TEST(UniformIndexTest, CountsAreUniformWithinFiveSigma) {
  std::mt19937_64 rng(1);
  constexpr int kBins = 7, kDraws = 700000;
  std::vector<int> counts(kBins, 0);
  for (int i = 0; i < kDraws; ++i) ++counts[UniformIndex(rng, kBins)];
  const double expected = kDraws / double(kBins);
  const double sigma = std::sqrt(kDraws * (1.0 / kBins) * (1 - 1.0 / kBins));
  for (int c : counts) EXPECT_NEAR(c, expected, 5 * sigma);
  EXPECT_EQ(UniformIndex(rng, 1), 0u);
}

TEST(UniformIntTest, CoversBothEndsInclusive) {
  std::mt19937_64 rng(3);
  bool saw_lo = false, saw_hi = false;
  for (int i = 0; i < 1000; ++i) {
    const int64_t x = UniformInt(rng, -2, 2);
    ASSERT_GE(x, -2);
    ASSERT_LE(x, 2);
    saw_lo |= x == -2;
    saw_hi |= x == 2;
  }
  EXPECT_TRUE(saw_lo && saw_hi);
}

TEST(UniformOpen01Test, NeverReturnsZeroOrOne) {
  std::mt19937_64 rng(5);
  double sum = 0;
  for (int i = 0; i < 100000; ++i) {
    const double u = UniformOpen01(rng);
    ASSERT_GT(u, 0.0);
    ASSERT_LT(u, 1.0);
    sum += u;
  }
  EXPECT_NEAR(sum / 100000, 0.5, 5 * std::sqrt(1.0 / 12 / 100000));
}

struct Moments {
  double mean;
  double variance;
};

template <typename Draw>
Moments Sample(int n, Draw draw) {
  double sum = 0, sum_sq = 0;
  for (int i = 0; i < n; ++i) {
    const double x = draw();
    sum += x;
    sum_sq += x * x;
  }
  const double mean = sum / n;
  return {mean, sum_sq / n - mean * mean};
}

TEST(StandardNormalTest, HasMeanZeroAndUnitVariance) {
  std::mt19937_64 rng(11);
  constexpr int kN = 400000;
  Moments m = Sample(kN, [&] { return StandardNormal(rng); });
  EXPECT_NEAR(m.mean, 0.0, 5 / std::sqrt(kN));
  // Var of the sample variance of a normal: 2 / n.
  EXPECT_NEAR(m.variance, 1.0, 5 * std::sqrt(2.0 / kN));
}

TEST(GammaTest, MeanAndVarianceMatchShapeTimesScale) {
  // Gamma(k, theta): mean k theta, variance k theta^2; the sample mean's sigma
  // is sqrt(k) theta / sqrt(n). The variance check uses a loose 10 % band
  // (its sigma is sqrt((6/k + 2) / n) relative, under 1 % here).
  constexpr int kN = 400000;
  for (double shape : {0.3, 1.0, 2.5, 9.0}) {
    std::mt19937_64 rng(static_cast<uint64_t>(shape * 100));
    const double scale = 0.2;
    Moments m = Sample(kN, [&] { return Gamma(rng, shape, scale); });
    EXPECT_NEAR(m.mean, shape * scale, 5 * std::sqrt(shape) * scale / std::sqrt(kN)) << shape;
    EXPECT_NEAR(m.variance, shape * scale * scale, 0.1 * shape * scale * scale) << shape;
  }
}

TEST(GammaTest, ShapeOneIsExponential) {
  // P(X > t) = exp(-t) for Exp(1): at t = 1, 0.3679.
  std::mt19937_64 rng(13);
  constexpr int kN = 200000;
  int above = 0;
  for (int i = 0; i < kN; ++i) above += Gamma(rng, 1.0, 1.0) > 1.0;
  const double p = std::exp(-1.0);
  EXPECT_NEAR(above / double(kN), p, 5 * std::sqrt(p * (1 - p) / kN));
}

}  // namespace
}  // namespace servesim::workload
