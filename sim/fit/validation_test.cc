#include "sim/fit/validation.h"

#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <string>
#include <utility>

#include "sim/runner/repo_context_for_test.h"

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

// A live figure of 0 against a predicted 5401 has no relative error: it is
// left out of the summary (it used to count as 0 %), while 0 against 0 is
// exact and counts.
TEST(SummarizeTest, AMeasuredZeroHasNoRelativeErrorUnlessPredictedZero) {
  std::vector<CaseResult> cases(3);
  const double measured[] = {100, 0, 0};
  const double predicted[] = {150, 5401, 0};
  for (int i = 0; i < 3; ++i) {
    cases[i].name = "c";
    for (const std::string& k : ComparedMetrics()) {
      cases[i].measured[k] = measured[i];
      cases[i].predicted[k] = predicted[i];
    }
  }
  EXPECT_TRUE(cases[0].HasError("total_token_throughput"));
  EXPECT_FALSE(cases[1].HasError("total_token_throughput"));
  EXPECT_TRUE(cases[2].HasError("total_token_throughput"));
  ValidationReport r = Summarize(cases);
  EXPECT_EQ(r.per_metric.at("total_token_throughput").cases, 2);
  EXPECT_DOUBLE_EQ(r.per_metric.at("total_token_throughput").max_abs_pct, 50);
  EXPECT_NE(FormatValidationTable(r).find("n/a"), std::string::npos);
}

// A live run that failed requests the prediction completes is named on the
// completed line, with both counts; a leave-one-out table leaves the line out.
TEST(SummarizeTest, CompletedRequestsAreComparedCaseByCase) {
  std::vector<CaseResult> cases(2);
  cases[0].name = "same";
  cases[1].name = "trt";
  for (CaseResult& c : cases) {
    for (const std::string& k : ComparedMetrics()) c.measured[k] = c.predicted[k] = 1;
    c.measured["completed"] = c.predicted["completed"] = 1000;
  }
  cases[1].measured["completed"] = 984;
  const ValidationReport r = Summarize(cases);
  const std::string table = FormatValidationTable(r);
  EXPECT_NE(table.find("  completed requests as live: 1 of 2 (differ: trt 984 live, 1000 "
                       "predicted)\n"),
            std::string::npos)
      << table;
  EXPECT_EQ(FormatValidationTable(r, /*completed_line=*/false).find("completed requests"),
            std::string::npos);
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

// A live run "r" of vLLM TP8 on the random dataset with these bench flags.
LiveRun VllmTp8RandomRun(const std::string& bench_flags, std::map<std::string, double> measured) {
  LiveRun run;
  run.name = "r";
  run.serve_command = "vllm serve m -tp 8";
  run.bench_command = "vllm bench serve --dataset-name random " + bench_flags;
  run.measured = std::move(measured);
  return run;
}

// The live run's own lengths are what is predicted: 20 random requests
// that asked for 200 tokens but stopped at 20 (EOS) take far less time than
// full replies, whether the JSON lists each reply or a CSV gives the total;
// with every reply at its full 200, the prediction is the bench command's.
TEST(ValidateRunTest, PredictsTheRepliesTheLiveRunGenerated) {
  LiveRun run = VllmTp8RandomRun("--random-input-len 500 --random-output-len 200 --num-prompts 20",
                                 {{"completed", 20}, {"total_token_throughput", 1000}});
  const runner::PredictionContext& context = runner::RepoPredictionContext();
  auto throughput = [&](const LiveRun& r) {
    absl::StatusOr<CaseResult> c = ValidateRun(context, r);
    EXPECT_TRUE(c.ok()) << c.status();
    return c.ok() ? c->predicted.at("total_token_throughput") : 0.0;
  };
  const double asked = throughput(run);
  LiveRun full = run;
  full.measured["total_output_tokens"] = 20 * 200;
  EXPECT_EQ(throughput(full), asked);
  LiveRun listed = run;
  listed.output_lens.assign(20, 20);
  LiveRun total = run;
  total.measured["total_output_tokens"] = 20 * 20;
  // A tenth of the replies' tokens, and the run ends long before 200 decode
  // steps: the 10k prompt tokens over a far shorter run give more tokens per
  // second. The total spreads its mean by an EOS length law (some replies
  // longer than 20), so it gains less than the list of 20 each.
  const double from_list = throughput(listed), from_total = throughput(total);
  EXPECT_GT(from_total, asked);
  EXPECT_GT(from_list, from_total);
  listed.output_lens.resize(19);  // a list that does not match the requests
  EXPECT_EQ(std::string(ValidateRun(context, listed).status().message()),
            "case r: the live run lists 19 request lengths for 20 requests");
  // Every live request failed, the prediction completes them: not the
  // live outcome.
  LiveRun failed = run;
  failed.measured = {{"completed", 0}, {"total_token_throughput", 0}};
  absl::StatusOr<CaseResult> c = ValidateRun(context, failed);
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_FALSE(c->outcome_correct);
  EXPECT_TRUE(ValidateRun(context, full)->outcome_correct);
}

// No completed request holds more than the model's context (163840 tokens
// for DeepSeek-V3.2), per request where a JSON lists them, on average over
// the totals otherwise; a failed request (0 tokens out) may have asked for
// more. The error names the file, the case and the field.
TEST(ValidateRunTest, RefusesRequestsLongerThanTheModelsContext) {
  const runner::PredictionContext& context = runner::RepoPredictionContext();
  ASSERT_EQ(context.spec.max_position_embeddings(), 163840);
  LiveRun run = VllmTp8RandomRun(
      "--random-input-len 100 --random-output-len 10 --num-prompts 1000",
      {{"completed", 1000}, {"total_output_tokens", 99999999999.0}});
  run.source = "runs.csv";
  auto error_of = [&](const LiveRun& r) {
    absl::StatusOr<CaseResult> c = ValidateRun(context, r);
    return c.ok() ? std::string("ok") : std::string(c.status().message());
  };
  EXPECT_EQ(error_of(run),
            "--runs: runs.csv: case r: total_output_tokens: 99999999999 tokens over 1000 "
            "completed requests is more than a context each (163840 tokens, the model's "
            "max_position_embeddings)");
  run.measured = {{"completed", 1000}, {"total_input_tokens", 1e308}};
  EXPECT_NE(error_of(run).find("case r: total_input_tokens: 1e+308 tokens over 1000"),
            std::string::npos);
  run.measured = {{"completed", 2},
                  {"total_input_tokens", 163840},
                  {"total_output_tokens", 163841}};
  EXPECT_NE(error_of(run).find("total_input_tokens + total_output_tokens: 327681 tokens over 2"),
            std::string::npos);

  LiveRun listed;
  listed.name = "j";
  listed.source = "j.json";
  listed.serve_command = run.serve_command;
  listed.bench_command =
      "vllm bench serve --dataset-name random --random-input-len 100 --random-output-len 10 "
      "--num-prompts 2";
  listed.input_lens = {100, 163800};
  listed.output_lens = {10, 41};
  EXPECT_EQ(error_of(listed),
            "--runs: j.json: case j: request 1: input_lens 163800 + output_lens 41 is more than "
            "its context (163840 tokens, the model's max_position_embeddings)");
  listed.input_lens = {100, 100};  // within the window: predicted
  listed.output_lens = {10, 10};
  EXPECT_EQ(error_of(listed), "ok");
  listed.input_lens = {100, 200000};
  listed.output_lens = {10, 0};  // failed: the engine refused the prompt
  EXPECT_EQ(error_of(listed), "ok");
}

}  // namespace
}  // namespace servesim::fit
