#include "sim/fit/validation.h"

#include <gtest/gtest.h>

#include <cmath>

namespace servesim::fit {
namespace {

TEST(SpearmanTest, PerfectAndReversedRankings) {
  EXPECT_DOUBLE_EQ(SpearmanRho({1, 2, 3, 4}, {10, 20, 35, 90}), 1.0);
  EXPECT_DOUBLE_EQ(SpearmanRho({1, 2, 3, 4}, {4, 3, 2, 1}), -1.0);
}

// Undefined without two distinct values on each side: not a zero.
TEST(SpearmanTest, UndefinedForOneCaseOrNoSpread) {
  EXPECT_TRUE(std::isnan(SpearmanRho({5}, {7})));
  EXPECT_TRUE(std::isnan(SpearmanRho({5, 5}, {7, 8})));
}

TEST(SpearmanTest, HandComputedWithOneSwap) {
  // Ranks (1,2,3,4) vs (1,3,2,4): d^2 = 0+1+1+0 = 2; rho = 1 - 6*2/(4*15) = 0.8.
  EXPECT_NEAR(SpearmanRho({1, 2, 3, 4}, {1, 3, 2, 4}), 0.8, 1e-12);
}

TEST(SummarizeTest, MedianAndMaxOfAbsoluteErrors) {
  std::vector<CaseResult> cases(3);
  const double predicted[] = {110, 80, 100};
  for (int i = 0; i < 3; ++i) {
    cases[i].name = "c";
    cases[i].outcome_correct = true;
    for (const std::string& k : ComparedMetrics()) {
      cases[i].measured[k] = 100;
      cases[i].predicted[k] = predicted[i];
    }
  }
  ValidationReport r = Summarize(cases);
  EXPECT_DOUBLE_EQ(r.per_metric.at("mean_ttft_ms").median_abs_pct, 10);
  EXPECT_DOUBLE_EQ(r.per_metric.at("mean_ttft_ms").max_abs_pct, 20);
  EXPECT_EQ(r.outcomes_correct, 3);
}

TEST(SummarizeTest, RefusalOfAnExpectedFailureCountsAsCorrect) {
  CaseResult refused;
  refused.expected_failure = true;
  refused.refused = true;
  refused.outcome_correct = true;
  ValidationReport r = Summarize({refused});
  EXPECT_EQ(r.outcomes_correct, 1);
  EXPECT_EQ(r.per_metric.at("total_token_throughput").cases, 0);
}

}  // namespace
}  // namespace servesim::fit
