#include "sim/fit/engine_fit.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "sim/runner/repo_context_for_test.h"

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

// A loss flat up to x = 1 (a host-bound step hiding a slower kernel), then a
// parabola with its minimum at 2: from a start on the plateau the scan of
// [0, 2.5] in 11 points (step 0.25) lands on 2; a start already at the
// minimum stays, and a flat loss keeps the start.
TEST(ScanForMinimumTest, CrossesAPlateauAndKeepsABetterStart) {
  auto plateau = [](double x) { return x <= 1 ? 1.0 : std::min(1.0, (x - 2) * (x - 2)); };
  EXPECT_DOUBLE_EQ(ScanForMinimum(plateau, 0.3, 0, 2.5, 11), 2.0);
  EXPECT_DOUBLE_EQ(ScanForMinimum([](double x) { return (x - 1.9) * (x - 1.9); }, 1.9, 0, 2.5, 11),
                   1.9);
  EXPECT_DOUBLE_EQ(ScanForMinimum([](double) { return 0.5; }, 0.3, 0, 2.5, 11), 0.3);
}

// SGLang prefills sequences of at most 2048 tokens with dense MHA, so its
// sparse prefill backend's factor moves nothing for 1000-token prompts and
// moves a 4000-token prompt's prediction.
TEST(FactorMovesPredictionsTest, SglangPrefillBackendOnlyPastTheDenseMhaLimit) {
  auto run_with_prompts = [](int input_len) {
    LiveRun r;
    r.name = "fa3-prefill";
    r.serve_command =
        "python3 -m sglang.launch_server --model-path deepseek-ai/DeepSeek-V3.2 --tp-size 8 "
        "--nsa-prefill-backend fa3";
    r.bench_command = absl::StrCat(
        "vllm bench serve --model deepseek-ai/DeepSeek-V3.2 --dataset-name random "
        "--random-input-len ", input_len, " --random-output-len 4 --num-prompts 4");
    r.measured["total_token_throughput"] = 1000;
    return r;
  };
  const runner::PredictionContext& context = runner::RepoPredictionContext();
  absl::StatusOr<bool> short_prompts = FactorMovesPredictions(
      context, scenarios::SGLANG, {run_with_prompts(1000)}, "nsa_prefill=fa3", 0.2, 10);
  ASSERT_TRUE(short_prompts.ok()) << short_prompts.status();
  EXPECT_FALSE(*short_prompts);
  absl::StatusOr<bool> long_prompts = FactorMovesPredictions(
      context, scenarios::SGLANG, {run_with_prompts(4000)}, "nsa_prefill=fa3", 0.2, 10);
  ASSERT_TRUE(long_prompts.ok()) << long_prompts.status();
  EXPECT_TRUE(*long_prompts);
}

}  // namespace
}  // namespace servesim::fit
