#include "sim/fit/engine_fit.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <tuple>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "gtest/gtest.h"
#include "sim/fit/validation.h"
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

// One row per fit, the fit on every run first: microseconds of step work
// in milliseconds, factors by name, a factor the fold could not fit named
// as such.
TEST(FormatFoldParametersTest, OneRowPerFitWithItsFactors) {
  scenarios::EngineParams all;
  all.set_engine(scenarios::SGLANG);
  all.set_step_cpu_us(41888.7);
  all.set_per_seq_cpu_us(149.53);
  all.set_frontend_request_us(21.57);
  all.set_prefill_time_scale(4.4527);
  all.set_rms_log_error(0.3441);
  scenarios::BackendFactor* f = all.add_backend_factors();
  f->set_backend("nsa_decode=flashmla_kv");
  f->set_time_scale(6.856);
  scenarios::EngineParams fold = all;
  fold.clear_backend_factors();
  fold.add_not_fitted("nsa_decode=flashmla_kv");
  fold.set_step_cpu_us(39300);
  scenarios::FoldFits folds;
  *folds.add_folds()->mutable_params() = all;
  scenarios::FoldFit* without = folds.add_folds();
  without->set_held_out("sglang-tp8-base");
  *without->mutable_params() = fold;
  const std::string text = FormatFoldParameters(folds);
  EXPECT_EQ(text,
            "engine  held out                       step ms  per-seq us   API us   prefill  rms log"
            "  backend factors\n"
            "sglang  - (fit on every run)             41.89       149.5     21.6     4.45x    0.344"
            "  nsa_decode=flashmla_kv x6.86\n"
            "sglang  sglang-tp8-base                  39.30       149.5     21.6     4.45x    0.344"
            "  nsa_decode=flashmla_kv not fitted\n");
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

// A small vLLM run with only the given figures measured.
LiveRun SmallVllmRun(std::map<std::string, double> measured, int output_len = 8) {
  LiveRun r;
  r.name = "small";
  r.serve_command = "vllm serve deepseek-ai/DeepSeek-V3.2 -tp 8";
  r.bench_command = absl::StrCat(
      "vllm bench serve --dataset-name random --random-input-len 64 --random-output-len ",
      output_len, " --num-prompts 8");
  r.measured = std::move(measured);
  return r;
}

// The coverage a fit records is the union of its runs' workloads as replayed:
// random prompts of --random-input-len 64 are 63 tokens as vLLM counts them
// (the BOS it leaves out) and 300 gives 299; bursts of 8 and 2 requests peak
// at 8 and 2 in flight; a run sent at 1000 requests/s is not a burst. A run
// servesim refuses (an expected failure) adds nothing.
TEST(CoverageOfTest, UnionOfTheRunsWorkloads) {
  LiveRun burst = SmallVllmRun({{"total_token_throughput", 1}});
  LiveRun pair = burst;
  pair.bench_command =
      "vllm bench serve --dataset-name random --random-input-len 300 --random-output-len 8 "
      "--num-prompts 2";
  LiveRun refused = burst;
  refused.serve_command = "vllm serve deepseek-ai/DeepSeek-V3.2 -tp 8 -dcp 8";
  refused.bench_command =
      "vllm bench serve --dataset-name random --random-input-len 5000 --random-output-len 8 "
      "--num-prompts 1";
  const runner::PredictionContext& context = runner::RepoPredictionContext();
  absl::StatusOr<scenarios::FitCoverage> c = CoverageOf(context, {burst, pair, refused});
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->model(), "deepseek-ai/DeepSeek-V3.2");
  EXPECT_EQ(c->max_prompt_tokens(), 299);
  EXPECT_EQ(c->min_peak_concurrency(), 2);
  EXPECT_EQ(c->max_peak_concurrency(), 8);
  EXPECT_TRUE(c->only_bursts());
  ASSERT_EQ(c->layouts_size(), 1);  // two runs on one layout, listed once
  EXPECT_EQ(c->layouts(0), "8 GPUs: attention TP8xDP1, MoE TP8xEP1");
  LiveRun spread = burst;
  spread.bench_command += " --request-rate 1000";
  c = CoverageOf(context, {burst, spread});
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->max_prompt_tokens(), 63);
  EXPECT_FALSE(c->only_bursts());
}

// A figure left empty in the runs file is absent: the fit matches the
// others. A run with none of the engine's fitted figures is an error, not a
// fit of the starting values.
TEST(FitEngineTest, FitsWithFiguresMissing) {
  EngineFitOptions options;
  options.max_evaluations = 8;
  absl::StatusOr<scenarios::EngineParams> p =
      FitEngine(runner::RepoPredictionContext(), {SmallVllmRun({{"mean_ttft_ms", 100}})},
                scenarios::VLLM, options);
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_TRUE(std::isfinite(p->rms_log_error()));
  EXPECT_GT(p->rms_log_error(), 0);
  EXPECT_EQ(p->fitted_on_size(), 1);
  absl::StatusOr<scenarios::EngineParams> none =
      FitEngine(runner::RepoPredictionContext(), {SmallVllmRun({{"mean_itl_ms", 100}})},
                scenarios::VLLM, options);
  ASSERT_FALSE(none.ok());
  EXPECT_NE(none.status().message().find("case small: none of the figures fit matches for vllm"),
            std::string::npos)
      << none.status();
}

// The searches run concurrently with options.threads, each deterministic and
// combined in the starts' order: the fit is the same value for value.
TEST(FitEngineTest, TheFitIsTheSameOnThreeThreads) {
  const std::vector<LiveRun> runs = {
      SmallVllmRun({{"total_token_throughput", 900}, {"mean_ttft_ms", 300}, {"mean_tpot_ms", 40}})};
  EngineFitOptions options;
  options.max_evaluations = 64;
  absl::StatusOr<scenarios::EngineParams> one =
      FitEngine(runner::RepoPredictionContext(), runs, scenarios::VLLM, options);
  options.threads = 3;
  absl::StatusOr<scenarios::EngineParams> three =
      FitEngine(runner::RepoPredictionContext(), runs, scenarios::VLLM, options);
  ASSERT_TRUE(one.ok()) << one.status();
  ASSERT_TRUE(three.ok()) << three.status();
  EXPECT_EQ(one->SerializeAsString(), three->SerializeAsString());
  EXPECT_GT(one->rms_log_error(), 0);
}

// The p99 ITL is a fitted figure where prefill chunks carry the running
// decodes (vLLM, TensorRT-LLM) and not on SGLang, whose prefill batches
// are steps of their own: a run measuring only it gives one residual on
// vLLM and none on SGLang.
TEST(ResidualsAtTest, P99ItlCountsWhereStepsAreMixed) {
  const runner::PredictionContext& context = runner::RepoPredictionContext();
  LiveRun vllm = SmallVllmRun({{"p99_itl_ms", 50}});
  LiveRun sglang = vllm;
  sglang.serve_command =
      "python3 -m sglang.launch_server --model-path deepseek-ai/DeepSeek-V3.2 --tp-size 8";
  for (const auto& [run, engine, count] :
       {std::tuple{vllm, scenarios::VLLM, 1}, std::tuple{sglang, scenarios::SGLANG, 0}}) {
    const scenarios::EngineParams* params = runner::FindEngineParams(context.params, engine);
    ASSERT_NE(params, nullptr);
    absl::StatusOr<FitResiduals> r = ResidualsAt(context, {run}, *params);
    ASSERT_TRUE(r.ok()) << r.status();
    EXPECT_EQ(r->count, count) << scenarios::EngineKind_Name(engine);
  }
  const std::vector<std::string>& trtllm = FittedMetrics(scenarios::TRTLLM);
  EXPECT_NE(std::find(trtllm.begin(), trtllm.end(), "p99_itl_ms"), trtllm.end());
}

// A NaN figure made every loss NaN, no start won, and the fit read the
// parameters of none (a crash); a figure predicted as 0 (TPOT of one-token
// outputs) makes every loss infinite, the same way.
TEST(FitEngineTest, NonFiniteFigureIsAnErrorAndInfiniteLossNoCrash) {
  EngineFitOptions options;
  options.max_evaluations = 8;
  absl::StatusOr<scenarios::EngineParams> nan_figure =
      FitEngine(runner::RepoPredictionContext(),
                {SmallVllmRun({{"total_token_throughput", std::nan("")}})}, scenarios::VLLM,
                options);
  ASSERT_FALSE(nan_figure.ok());
  EXPECT_NE(nan_figure.status().message().find("case small: total_token_throughput: not a finite"),
            std::string::npos)
      << nan_figure.status();
  absl::StatusOr<scenarios::EngineParams> zero_predicted =
      FitEngine(runner::RepoPredictionContext(), {SmallVllmRun({{"mean_tpot_ms", 20}}, 1)},
                scenarios::VLLM, options);
  ASSERT_TRUE(zero_predicted.ok()) << zero_predicted.status();
  EXPECT_TRUE(std::isinf(zero_predicted->rms_log_error()));
}

// Two fits on one run, the run's figures being what the first fit's point
// predicts: the first fit's loss is 0 at its own point, so the second,
// whose host work per step is ten times as much, is marked as stopped
// short, with the first's point as the better one; the first is not.
TEST(FormatSearchReachTest, MarksAFitBeatenAtAnotherFitsPoint) {
  const runner::PredictionContext& context = runner::RepoPredictionContext();
  const scenarios::EngineParams* committed =
      runner::FindEngineParams(context.params, scenarios::VLLM);
  ASSERT_NE(committed, nullptr);
  scenarios::EngineParams exact = *committed;
  exact.clear_fitted_on();
  exact.add_fitted_on("small");
  scenarios::EngineParams slow = exact;
  slow.set_step_cpu_us(10 * exact.step_cpu_us());
  LiveRun run = SmallVllmRun({});
  absl::StatusOr<CaseResult> at_exact = ValidateRun(runner::WithEngineParams(context, exact), run);
  ASSERT_TRUE(at_exact.ok()) << at_exact.status();
  for (const std::string& key : FittedMetrics(scenarios::VLLM)) {
    run.measured[key] = at_exact->predicted.at(key);
  }
  scenarios::FoldFits folds;
  *folds.add_folds()->mutable_params() = exact;
  scenarios::FoldFit* second = folds.add_folds();
  second->set_held_out("other");
  *second->mutable_params() = slow;
  absl::StatusOr<std::string> text = FormatSearchReach(context, {run}, folds);
  ASSERT_TRUE(text.ok()) << text.status();
  const std::vector<std::string> lines = absl::StrSplit(*text, '\n');
  ASSERT_GE(lines.size(), 3u);
  EXPECT_NE(lines[1].find("0.0000"), std::string::npos) << lines[1];
  EXPECT_EQ(lines[1].find("stopped short"), std::string::npos) << lines[1];
  EXPECT_NE(lines[2].find("(every run)  (lower: the search stopped short)"), std::string::npos)
      << lines[2];
}

// A fit made on a run the caller does not pass is an error, not a skipped row.
TEST(FormatSearchReachTest, AFitOnAnUnknownRunIsAnError) {
  scenarios::FoldFits folds;
  scenarios::EngineParams* p = folds.add_folds()->mutable_params();
  p->set_engine(scenarios::VLLM);
  p->add_fitted_on("missing");
  absl::StatusOr<std::string> text =
      FormatSearchReach(runner::RepoPredictionContext(), {SmallVllmRun({})}, folds);
  ASSERT_FALSE(text.ok());
  EXPECT_NE(text.status().message().find("missing"), std::string::npos);
}

}  // namespace
}  // namespace servesim::fit
