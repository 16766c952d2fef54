#include "sim/planning/plan.h"

#include <gtest/gtest.h>

#include <cmath>

#include "sim/runner/repo_context_for_test.h"

namespace servesim::planning {
namespace {

// A fake cluster that meets the SLOs from `threshold` nodes on.
std::function<absl::StatusOr<NodeTrial>(int)> Threshold(int threshold) {
  return [threshold](int n) -> absl::StatusOr<NodeTrial> {
    NodeTrial t;
    t.meets = n >= threshold;
    return t;
  };
}

std::vector<int> Tried(const std::vector<NodeTrial>& trials) {
  std::vector<int> n;
  for (const NodeTrial& t : trials) n.push_back(t.nodes);
  return n;
}

TEST(SearchFewestNodesTest, ProbesThenTriesEveryCountBelowTheFirstMeeting) {
  absl::StatusOr<std::vector<NodeTrial>> t = SearchFewestNodes(Threshold(5), 64);
  ASSERT_TRUE(t.ok());
  // 1, 2, 4 fail, 8 meets; then 3 fails, 5 meets; then 6, the count after.
  EXPECT_EQ(Tried(*t), (std::vector<int>{1, 2, 4, 8, 3, 5, 6}));
}

// More nodes can do worse (a round-robin split's phase): 7 meets, 8 fails,
// 9 on meets. A bisection between 8 (fail) and 16 (meet) would answer 9.
TEST(SearchFewestNodesTest, FindsTheFewestWhenMoreNodesDoWorse) {
  auto trial = [](int n) -> absl::StatusOr<NodeTrial> {
    NodeTrial t;
    t.meets = n == 7 || n >= 9;
    return t;
  };
  absl::StatusOr<std::vector<NodeTrial>> t = SearchFewestNodes(trial, 64);
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(Tried(*t), (std::vector<int>{1, 2, 4, 8, 16, 3, 5, 6, 7}));
  EXPECT_TRUE(t->back().meets);  // 7; 8, the count after it, was a probe and fails
}

TEST(SearchFewestNodesTest, OneNodeIsTriedWithTheNext) {
  EXPECT_EQ(Tried(*SearchFewestNodes(Threshold(1), 64)), (std::vector<int>{1, 2}));
  EXPECT_EQ(Tried(*SearchFewestNodes(Threshold(1), 1)), (std::vector<int>{1}));
}

TEST(SearchFewestNodesTest, TriesEveryCountUpToMaxNodesWhenNoProbeMeets) {
  EXPECT_EQ(Tried(*SearchFewestNodes(Threshold(100), 10)),
            (std::vector<int>{1, 2, 4, 8, 10, 3, 5, 6, 7, 9}));
  EXPECT_FALSE(SearchFewestNodes(Threshold(1), 0).ok());
}

// Only 7 of 1..8 meets (more nodes can do worse): every probe (1, 2, 4, 8)
// fails, and the answer is still 7, not "none within 8".
TEST(SearchFewestNodesTest, FindsACountBetweenFailingProbes) {
  auto trial = [](int n) -> absl::StatusOr<NodeTrial> {
    NodeTrial t;
    t.meets = n == 7;
    return t;
  };
  absl::StatusOr<std::vector<NodeTrial>> t = SearchFewestNodes(trial, 8);
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(Tried(*t), (std::vector<int>{1, 2, 4, 8, 3, 5, 6, 7}));
}

// Requests the engine turns away fail at every node count: no more trials.
TEST(SearchFewestNodesTest, StopsAtTheFirstTrialWithFailedRequests) {
  auto trial = [](int) -> absl::StatusOr<NodeTrial> {
    NodeTrial t;
    t.figures.failed = 3;
    return t;
  };
  EXPECT_EQ(Tried(*SearchFewestNodes(trial, 64)), (std::vector<int>{1}));
}

TEST(CheckSlosTest, ReportsWhichSloFailsAndByHowMuch) {
  PointFigures f;
  f.p99_ttft_ms = 3000;
  f.mean_tpot_ms = 40;
  f.p99_itl_ms = 90;
  f.output_throughput = 900;
  Slo slo{2000, 50, 100, 1000};
  std::vector<SloCheck> c = CheckSlos(f, slo);
  ASSERT_EQ(c.size(), 5u);
  EXPECT_FALSE(c[0].ok());
  EXPECT_DOUBLE_EQ(c[0].excess_pct(), 50);  // 3000 vs 2000
  EXPECT_TRUE(c[1].ok());
  EXPECT_DOUBLE_EQ(c[1].excess_pct(), 0);
  EXPECT_TRUE(c[2].ok());
  EXPECT_FALSE(c[3].ok());
  EXPECT_DOUBLE_EQ(c[3].excess_pct(), 10);  // 900 tok/s short of 1000
  EXPECT_TRUE(c[4].ok());                   // no failed requests
  EXPECT_FALSE(MeetsAll(c));
  f.failed = 1;
  EXPECT_FALSE(CheckSlos(f, slo)[4].ok());
}

TEST(GpuHoursTest, NodesTimesEightGpusTimesDurationPerMillionTokens) {
  PointFigures f;
  f.duration_s = 3600;
  f.total_output_tokens = 16'000'000;
  // 2 nodes x 8 GPUs x 1 h = 16 GPU-hours over 16 M tokens.
  EXPECT_DOUBLE_EQ(GpuHoursPerMillionOutputTokens(2, f), 1.0);
}

TEST(TraceBenchCommandTest, RateScaleIsTheInverseTimeScale) {
  EXPECT_EQ(*TraceBenchCommand("/t/azure conv.csv", 4, 600),
            "vllm bench serve --dataset-name trace --dataset-path '/t/azure conv.csv' "
            "--trace-time-scale 0.25 --num-prompts 600");
  EXPECT_EQ(std::string(TraceBenchCommand("t.csv", 0, 600).status().message()),
            "--rate-scale: must be a finite number > 0, got 0");
  EXPECT_EQ(std::string(TraceBenchCommand("t.csv", 1, 0).status().message()),
            "--num-prompts: must be >= 1, got 0");
}

TEST(ParseCandidatesTest, SkipsALeadingByteOrderMark) {
  absl::StatusOr<std::vector<std::string>> c =
      ParseCandidates("\xEF\xBB\xBF" "vllm serve m -tp 8\n", "f");
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(*c, (std::vector<std::string>{"vllm serve m -tp 8"}));
}

// A binary file is refused at its first control byte, not read as commands.
TEST(ParseCandidatesTest, RefusesAFileThatIsNotText) {
  absl::StatusOr<std::vector<std::string>> binary =
      ParseCandidates(std::string("vllm serve m -tp 8\n\x7f"
                                  "ELF\x02\x01",
                                  25),
                      "c.bin");
  EXPECT_EQ(binary.status().message(), "c.bin:2: not a text file (control byte 0x7f at column 1)");
  // Tabs and a Windows line end are text.
  EXPECT_TRUE(ParseCandidates("vllm serve m\t-tp 8\r\n", "c.txt").ok());
  EXPECT_EQ(ParseCandidates("vllm serve m\r-tp 8\n", "c.txt").status().message(),
            "c.txt:1: not a text file (control byte 0x0d at column 13)");
}

TEST(ParseCandidatesTest, SkipsCommentsAndJoinsContinuations) {
  absl::StatusOr<std::vector<std::string>> c = ParseCandidates(
      "# vLLM\nvllm serve m -tp 8\n\n  python3 -m sglang.launch_server \\\n  --tp 8\n", "f");
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(*c, (std::vector<std::string>{"vllm serve m -tp 8",
                                          "python3 -m sglang.launch_server --tp 8"}));
  EXPECT_EQ(std::string(ParseCandidates("# nothing\n", "f").status().message()),
            "f: no serve commands");
}

// A trailing comment is no part of the command (an audit found it read as an
// argument); a '#' inside quotes or a word is.
TEST(ParseCandidatesTest, DropsTrailingComments) {
  absl::StatusOr<std::vector<std::string>> c = ParseCandidates(
      "vllm serve m -tp 8  # the baseline\n"
      "vllm serve m --served-model-name 'a #1' --x=#2 \\\n"
      "  -dp 8  # eight ranks\n",
      "f");
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(*c, (std::vector<std::string>{"vllm serve m -tp 8",
                                          "vllm serve m --served-model-name 'a #1' --x=#2 -dp 8"}));
}

const runner::PredictionContext& Context() { return runner::RepoPredictionContext(); }

// The acceptance test: the Azure conversation trace (its first 600
// requests, for speed) at 1x, 4x and 16x its real rate, vLLM TP8 per node,
// chat SLOs (2 s P99 TTFT, 50 ms mean TPOT = 20 tok/s per user). More load
// must never need fewer nodes, and 16x must need more than 1x.
constexpr char kAzureConversations[] =
    SERVESIM_SHARED_DIR "/traces/AzureLLMInferenceTrace_conv.csv";
constexpr char kVllmTp8[] = "vllm serve deepseek-ai/DeepSeek-V3.2 -tp 8";

// Chat SLOs: 2 s P99 TTFT, 50 ms mean TPOT (20 tok/s per user).
Slo ChatSlo() {
  Slo slo;
  slo.ttft_p99_ms = 2000;
  slo.tpot_mean_ms = 50;
  return slo;
}

TEST(PlanTest, AzureConversationNodeCountIsMonotoneInLoad) {
  const std::string trace = kAzureConversations;
  const std::string candidate = kVllmTp8;
  const Slo slo = ChatSlo();
  PlanOptions options;
  options.threads = 2;
  std::vector<int> nodes;
  for (double scale : {1.0, 4.0, 16.0}) {
    absl::StatusOr<std::string> bench = TraceBenchCommand(trace, scale, 600);
    ASSERT_TRUE(bench.ok());
    absl::StatusOr<PlanResult> r = Plan(Context(), *bench, {candidate}, slo, options);
    ASSERT_TRUE(r.ok()) << r.status();
    ASSERT_EQ(r->ranked.size(), 1u);
    const CandidateResult& c = r->ranked[0];
    ASSERT_EQ(c.status, PointStatus::kOk) << c.reason;
    ASSERT_GT(c.nodes, 0) << "no node count up to 64 meets the SLOs at " << scale << "x";
    EXPECT_EQ(r->num_requests, 600);
    // The answer is tight: one node fewer was simulated and fails.
    if (c.nodes > 1) {
      bool fewer_fails = false;
      for (const NodeTrial& t : c.trials) fewer_fails |= t.nodes == c.nodes - 1 && !t.meets;
      EXPECT_TRUE(fewer_fails) << scale << "x";
    }
    EXPECT_GT(c.gpu_hours_per_million_output_tokens, 0);
    nodes.push_back(c.nodes);
  }
  EXPECT_LE(nodes[0], nodes[1]);
  EXPECT_LE(nodes[1], nodes[2]);
  EXPECT_LT(nodes[0], nodes[2]);
}

// The progress callback sees every trial as the search makes it: the same
// node counts, verdicts and candidates, in the order tried (the report's
// list keeps that order).
TEST(PlanTest, OnTrialReportsEachTrialInTheOrderTried) {
  absl::StatusOr<std::string> bench = TraceBenchCommand(kAzureConversations, 4.0, 300);
  ASSERT_TRUE(bench.ok());
  PlanOptions options;
  options.threads = 2;
  options.max_nodes = 8;
  std::vector<std::pair<size_t, NodeTrial>> seen;
  options.on_trial = [&seen](size_t candidate, const NodeTrial& t) {
    seen.emplace_back(candidate, t);
  };
  const std::string refused = "vllm serve deepseek-ai/DeepSeek-V3.2 -tp 3";
  absl::StatusOr<PlanResult> r = Plan(Context(), *bench, {refused, kVllmTp8}, ChatSlo(), options);
  ASSERT_TRUE(r.ok()) << r.status();
  const CandidateResult* tp8 = nullptr;
  for (const CandidateResult& c : r->ranked) {
    if (c.serve_command == kVllmTp8) tp8 = &c;
  }
  ASSERT_NE(tp8, nullptr);
  ASSERT_GE(tp8->trials.size(), 2u);
  ASSERT_EQ(seen.size(), tp8->trials.size());  // the refused candidate tries nothing
  for (size_t i = 0; i < seen.size(); ++i) {
    EXPECT_EQ(seen[i].first, 1u);
    EXPECT_EQ(seen[i].second.nodes, tp8->trials[i].nodes);
    EXPECT_EQ(seen[i].second.meets, tp8->trials[i].meets);
  }
}

// A margin for the model's error can only cost nodes: with every step and
// API-server request 50 % slower, the same load needs at least as many nodes,
// and at the unmargined answer the P99 TTFT is longer.
TEST(PlanTest, SlowdownNeverNeedsFewerNodes) {
  absl::StatusOr<std::string> bench = TraceBenchCommand(kAzureConversations, 4.0, 300);
  ASSERT_TRUE(bench.ok());
  const std::string candidate = kVllmTp8;
  const Slo slo = ChatSlo();
  PlanOptions options;
  options.threads = 2;
  absl::StatusOr<PlanResult> plain = Plan(Context(), *bench, {candidate}, slo, options);
  options.slowdown = 0.5;
  absl::StatusOr<PlanResult> slowed = Plan(Context(), *bench, {candidate}, slo, options);
  ASSERT_TRUE(plain.ok() && slowed.ok());
  const CandidateResult& a = plain->ranked[0];
  const CandidateResult& b = slowed->ranked[0];
  ASSERT_GT(a.nodes, 0);
  ASSERT_GT(b.nodes, 0);
  EXPECT_GE(b.nodes, a.nodes);
  // The search tries every count up to its answer, so the slowed one tried
  // a.nodes once: the comparison below must run, not be skipped.
  int compared = 0;
  for (const NodeTrial& t : b.trials) {
    if (t.nodes == a.nodes) {
      EXPECT_GT(t.figures.p99_ttft_ms, a.answer.figures.p99_ttft_ms);
      ++compared;
    }
  }
  EXPECT_EQ(compared, 1);
  EXPECT_NE(FormatPlanReport(*slowed, slo, options).find("50 % slower than predicted"),
            std::string::npos);
  options.slowdown = -0.1;
  EXPECT_EQ(Plan(Context(), *bench, {candidate}, slo, options).status().code(),
            absl::StatusCode::kInvalidArgument);
}

// How near a trial is to failing: the largest value over its limit (limit
// over value for a floor); any failed request is infinitely far.
TEST(SloPressureTest, LargestRatioToItsLimit) {
  std::vector<SloCheck> checks = {{"P99 TTFT (ms)", 3000, 1500, false},
                                  {"mean TPOT (ms)", 50, 60, false},
                                  {"output throughput (tok/s)", 1000, 800, true},
                                  {"failed requests", 0, 0, false}};
  EXPECT_DOUBLE_EQ(SloPressure(checks), 1.25);
  checks[2].value = 2000;
  EXPECT_DOUBLE_EQ(SloPressure(checks), 1.2);
  checks[3].value = 1;
  EXPECT_TRUE(std::isinf(SloPressure(checks)));
}

// With --spread a node count must meet the SLOs with every fit. A fit whose
// host work per step is 50 ms longer than the committed one (vLLM's host
// work adds to each step: no async scheduling) makes every token take over
// 50 ms, so no node count meets a 50 ms mean TPOT: the plan that the
// committed fit alone meets finds none, and its largest trial names that fit.
// Without the candidate's engine in the fold file the candidate is an error.
TEST(PlanTest, SpreadMeetsTheSlosWithEveryFit) {
  absl::StatusOr<std::string> bench = TraceBenchCommand(kAzureConversations, 4.0, 300);
  ASSERT_TRUE(bench.ok());
  const Slo slo = ChatSlo();
  const scenarios::EngineParams* committed =
      runner::FindEngineParams(Context().params, scenarios::VLLM);
  ASSERT_NE(committed, nullptr);
  scenarios::FoldFits fits;
  *fits.add_folds()->mutable_params() = *committed;
  scenarios::FoldFit* slow = fits.add_folds();
  slow->set_held_out("slow");
  *slow->mutable_params() = *committed;
  slow->mutable_params()->set_step_cpu_us(committed->step_cpu_us() + 50000);
  PlanOptions options;
  options.threads = 2;
  absl::StatusOr<PlanResult> plain = Plan(Context(), *bench, {kVllmTp8}, slo, options);
  options.spread_fits = &fits;
  options.spread_source = "folds.textproto";
  absl::StatusOr<PlanResult> spread = Plan(Context(), *bench, {kVllmTp8}, slo, options);
  ASSERT_TRUE(plain.ok() && spread.ok());
  ASSERT_GT(plain->ranked[0].nodes, 0);
  const CandidateResult& c = spread->ranked[0];
  ASSERT_EQ(c.status, PointStatus::kOk) << c.reason;
  EXPECT_EQ(c.nodes, 0);
  EXPECT_EQ(c.largest.binding_fit, "slow");
  EXPECT_GT(c.largest.figures.mean_tpot_ms, 50);
  const std::string report = FormatPlanReport(*spread, slo, options);
  EXPECT_NE(report.find("leave-one-out fits (--spread, folds.textproto)"), std::string::npos)
      << report;
  EXPECT_NE(report.find("(the fit without slow)"), std::string::npos) << report;

  scenarios::FoldFits other;
  other.add_folds()->mutable_params()->set_engine(scenarios::SGLANG);
  options.spread_fits = &other;
  absl::StatusOr<PlanResult> none = Plan(Context(), *bench, {kVllmTp8}, slo, options);
  ASSERT_TRUE(none.ok()) << none.status();
  EXPECT_EQ(none->ranked[0].status, PointStatus::kError);
  EXPECT_NE(none->ranked[0].reason.find("folds.textproto has no fits of VLLM"), std::string::npos)
      << none->ranked[0].reason;
}

// 200 requests of 64 output tokens, the last sent at 200 / 20 = 10 s (vllm
// rescales the gaps so), ask for 1280 output tok/s: no fleet produces more.
TEST(PlanTest, MinThroughputAboveTheOfferedRateIsRefused) {
  const std::string bench =
      "vllm bench serve --dataset-name random --random-input-len 1024 --random-output-len 64 "
      "--num-prompts 200 --request-rate 20";
  Slo slo;
  slo.ttft_p99_ms = 1e6;
  slo.tpot_mean_ms = 1e6;
  slo.min_output_tok_s = 1280;
  absl::StatusOr<PlanResult> r =
      Plan(Context(), bench, {"vllm serve deepseek-ai/DeepSeek-V3.2 -tp 8"}, slo, PlanOptions{});
  ASSERT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(r.status().message().find("sent at 10.0 s (1280 tok/s)"), std::string::npos)
      << r.status();
  slo.min_output_tok_s = 1000;  // below the offered rate: planned
  EXPECT_TRUE(
      Plan(Context(), bench, {"vllm serve deepseek-ai/DeepSeek-V3.2 -tp 8"}, slo, PlanOptions{})
          .ok());
}

// A plan's candidate is prepared as `run` prepares it: a bench that names a
// model the server does not serve is refused (vLLM's 404) in both.
TEST(PlanTest, CandidatesAreRefusedForAModelTheyDoNotServe) {
  const std::string bench =
      "vllm bench serve --model some/other-model --dataset-name random --random-input-len 128 "
      "--random-output-len 16 --num-prompts 20";
  absl::StatusOr<PlanResult> r = Plan(Context(), bench, {"vllm serve deepseek-ai/DeepSeek-V3.2 -tp 8"},
                                      ChatSlo(), PlanOptions{});
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->ranked.size(), 1u);
  EXPECT_EQ(r->ranked[0].status, PointStatus::kRefused);
  EXPECT_NE(r->ranked[0].reason.find("does not exist"), std::string::npos) << r->ranked[0].reason;
}

TEST(DescribeCheckTest, PrintsTheDigitsThatTellFigureFromLimit) {
  EXPECT_EQ(DescribeCheck({"mean TPOT (ms)", 10, 35.5555, false}),
            "mean TPOT (ms) 35.56 > 10 (+256%)");
  // Four digits print both as 52.41.
  EXPECT_EQ(DescribeCheck({"mean TPOT (ms)", 52.405595635424, 52.4109, false}),
            "mean TPOT (ms) 52.411 > 52.406 (+0.01%)");
  EXPECT_EQ(DescribeCheck({"output throughput (tok/s)", 20000, 4104.2, true}),
            "output throughput (tok/s) 4104 < 20000 (-79%)");
  EXPECT_EQ(DescribeCheck({"output throughput (tok/s)", 10000, 9999.96, true}),
            "output throughput (tok/s) 9999.96 < 10000 (-0.0004%)");
}

// An engine that rejects every prompt (longer than its --max-model-len) is
// refused with the engine's reason, as `servesim run` refuses it, not
// ranked as a candidate that fails its SLOs.
TEST(PlanTest, ACandidateThatRejectsEveryRequestIsRefused) {
  const std::string bench =
      "vllm bench serve --dataset-name random --random-input-len 1024 --random-output-len 16 "
      "--num-prompts 20";
  absl::StatusOr<PlanResult> r =
      Plan(Context(), bench, {"vllm serve deepseek-ai/DeepSeek-V3.2 -tp 8 --max-model-len 512"},
           ChatSlo(), PlanOptions{});
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->ranked.size(), 1u);
  EXPECT_EQ(r->ranked[0].status, PointStatus::kRefused);
  EXPECT_NE(r->ranked[0].reason.find("every request fails: the engine rejects each of the 20, "
                                     "e.g. \"This model's maximum context length is 512"),
            std::string::npos)
      << r->ranked[0].reason;
}

TEST(PlanTest, ReportNamesBestRefusedAndFailingCandidates) {
  const std::string bench =
      "vllm bench serve --dataset-name random --random-input-len 1024 --random-output-len 64 "
      "--num-prompts 200";  // a burst: throughput is bounded by the fleet, not the load
  Slo slo;
  slo.ttft_p99_ms = 1e6;
  slo.tpot_mean_ms = 1e6;
  slo.min_output_tok_s = 1e9;  // no cluster of 2 nodes reaches it
  PlanOptions options;
  options.max_nodes = 2;
  absl::StatusOr<PlanResult> r =
      Plan(Context(), bench,
           {"vllm serve deepseek-ai/DeepSeek-V3.2 -tp 8",
            "vllm serve deepseek-ai/DeepSeek-V3.2 -tp 1"},
           slo, options);
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->ranked.size(), 2u);
  EXPECT_EQ(r->ranked[0].nodes, 0);
  EXPECT_EQ(r->ranked[0].largest.nodes, 2);
  EXPECT_EQ(r->ranked[1].status, PointStatus::kRefused);  // 671B weights on one GPU
  const std::string report = FormatPlanReport(*r, slo, options);
  EXPECT_NE(report.find("No candidate meets every SLO at the node counts tried (listed at the "
                        "end, up to --max-nodes 2)"),
            std::string::npos);
  EXPECT_NE(report.find("at 2 node(s): output throughput (tok/s)"), std::string::npos) << report;
  EXPECT_NE(report.find("refused: "), std::string::npos);
  // The limits read as written, not "1e+09"; the costing line only when set.
  EXPECT_NE(report.find(", output throughput >= 1000000000 tok/s, "), std::string::npos) << report;
  EXPECT_EQ(report.find("costs: "), std::string::npos);
  options.context_summary = "costs: profile P; fitted parameters F";
  const std::string with = FormatPlanReport(*r, slo, options);
  EXPECT_NE(with.find("N searched up to 2\ncosts: profile P; fitted parameters F\n"),
            std::string::npos)
      << with;
}

// The committed parameters were fitted on 1000-request ShareGPT bursts (no
// prompt past ~1016 tokens, all sent at t = 0). A plan of 40 Poisson-spaced
// 2000-token prompts leaves the prompt, load and arrival bounds, and its
// report says so under the answer; a candidate on a layout no live run had
// (vLLM TP8 with expert parallelism) says so, as the answer or as a failing
// candidate; a ShareGPT-sized burst on the fitted layout says nothing.
TEST(PlanTest, ReportNamesWhereTheAnswerExtrapolates) {
  constexpr char kSpacedLongPrompts[] =
      "vllm bench serve --dataset-name random --random-input-len 2000 --random-output-len 16 "
      "--num-prompts 40 --request-rate 4";
  Slo slo;
  slo.ttft_p99_ms = 1e7;
  slo.tpot_mean_ms = 1e7;
  PlanOptions options;
  options.max_nodes = 1;
  absl::StatusOr<PlanResult> far = Plan(
      Context(),
      kSpacedLongPrompts,
      {kVllmTp8}, slo, options);
  ASSERT_TRUE(far.ok()) << far.status();
  ASSERT_EQ(far->ranked.size(), 1u);
  ASSERT_EQ(far->ranked[0].extrapolations.size(), 3u);  // prompts, load, arrivals
  const std::string report = FormatPlanReport(*far, slo, options);
  EXPECT_NE(report.find("  extrapolation: prompts up to 1999 tokens"), std::string::npos)
      << report;
  EXPECT_NE(report.find("  extrapolation: about "), std::string::npos) << report;
  EXPECT_NE(report.find("  extrapolation: requests arrive over time"), std::string::npos)
      << report;
  const std::string ep = std::string(kVllmTp8) + " --enable-expert-parallel";
  absl::StatusOr<PlanResult> two = Plan(
      Context(),
      kSpacedLongPrompts,
      {kVllmTp8, ep}, slo, options);
  ASSERT_TRUE(two.ok()) << two.status();
  const std::string both = FormatPlanReport(*two, slo, options);
  EXPECT_NE(both.find("extrapolation: no fitted run had this layout (8 GPUs: attention "
                      "TP8xDP1, MoE TP1xEP8)"),
            std::string::npos)
      << both;
  Slo unmeetable = slo;
  unmeetable.tpot_mean_ms = 1e-3;
  absl::StatusOr<PlanResult> failing = Plan(
      Context(),
      kSpacedLongPrompts,
      {ep}, unmeetable, options);
  ASSERT_TRUE(failing.ok()) << failing.status();
  const std::string failed = FormatPlanReport(*failing, unmeetable, options);
  EXPECT_NE(failed.find("\n    extrapolation: no fitted run had this layout"), std::string::npos)
      << failed;
  absl::StatusOr<PlanResult> near = Plan(
      Context(),
      "vllm bench serve --dataset-name random --random-input-len 900 --random-output-len 16 "
      "--num-prompts 1000",
      {kVllmTp8}, slo, options);
  ASSERT_TRUE(near.ok()) << near.status();
  EXPECT_TRUE(near->ranked[0].extrapolations.empty());
}

// A candidate that meets the SLOs at `nodes` nodes.
CandidateResult Meeting(const std::string& serve_command, int nodes) {
  CandidateResult c;
  c.serve_command = serve_command;
  c.nodes = nodes;
  c.answer.nodes = nodes;
  return c;
}

// A meeting candidate other than the answer has its lines below the ranked
// table, by rank.
TEST(PlanTest, ReportGivesOtherMeetingCandidatesLinesByRank) {
  PlanResult result;
  CandidateResult first = Meeting("a", 1), second = Meeting("b", 2);
  second.extrapolations = {{"other", "extrapolation: x"}};
  second.held_out_evidence = "held-out error: y";
  result.ranked = {first, second};
  const std::string report = FormatPlanReport(result, Slo(), PlanOptions());
  EXPECT_NE(report.find("\n  rank 2: extrapolation: x\n  rank 2: held-out error: y\n"),
            std::string::npos)
      << report;
  EXPECT_EQ(report.find("rank 1: extrapolation"), std::string::npos) << report;
  EXPECT_EQ(report.find("rank 1: held-out"), std::string::npos) << report;
}

// The answer's held-out line follows its extrapolations; a failing
// candidate's follows its own, indented under it.
TEST(PlanTest, ReportGivesEachCandidatesHeldOutErrorsAfterItsExtrapolations) {
  PlanResult result;
  CandidateResult best = Meeting("a", 1), failing;
  best.extrapolations = {{"other", "extrapolation: x"}};
  best.held_out_evidence = "held-out error: y";
  failing.serve_command = "b";
  failing.largest.nodes = 4;
  failing.held_out_evidence = "held-out error: z";
  result.ranked = {best, failing};
  const std::string report = FormatPlanReport(result, Slo(), PlanOptions());
  EXPECT_NE(report.find("\n  extrapolation: x\n  held-out error: y\n"), std::string::npos)
      << report;
  EXPECT_NE(report.find("\n    held-out error: z\n"), std::string::npos) << report;
}

// A malformed candidate is bad input, even beside a good one (an audit found
// a plan ranking the rest and exiting 0); every candidate refused is the
// engine's answer, with its reason; a refusal beside an evaluated candidate
// is an outcome.
TEST(PlanTest, MalformedOrAllRefusedCandidatesAreNoPlan) {
  const std::string bench =
      "vllm bench serve --dataset-name random --random-input-len 64 --random-output-len 4 "
      "--num-prompts 4";
  absl::StatusOr<PlanResult> broken = Plan(
      Context(), bench, {"vllm serve m -tp 8", "vllm serve m --frobnicate", "ollama serve m"},
      ChatSlo(), {});
  ASSERT_TRUE(broken.ok()) << broken.status();
  EXPECT_EQ(CheckCandidates(*broken).message(),
            "plan: 2 of 3 candidate(s) are errors (bad input or a feature servesim does not "
            "model, not an engine's refusal); the first (vllm serve m --frobnicate): --serve: "
            "unknown flag --frobnicate");
  absl::StatusOr<PlanResult> refused =
      Plan(Context(), bench, {"vllm serve m -tp 1", "vllm serve m -tp 3"}, ChatSlo(), {});
  ASSERT_TRUE(refused.ok()) << refused.status();
  const absl::Status all_refused = CheckCandidates(*refused);
  EXPECT_EQ(all_refused.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(all_refused.message().rfind("plan: the engine refuses every candidate; the first "
                                        "(vllm serve m -tp 1): ",
                                        0),
            0u)
      << all_refused;
  absl::StatusOr<PlanResult> mixed =
      Plan(Context(), bench, {"vllm serve m -tp 8", "vllm serve m -tp 1"}, ChatSlo(), {});
  ASSERT_TRUE(mixed.ok()) << mixed.status();
  EXPECT_EQ(mixed->ranked[1].status, PointStatus::kRefused);
  EXPECT_TRUE(CheckCandidates(*mixed).ok());
}

PlanOptions OneNodeAtMost() {
  PlanOptions options;
  options.max_nodes = 1;
  return options;
}

// An instance over two nodes cannot be planned within one: it is an error
// row naming both counts, not a 2-node answer to a 1-node search.
TEST(PlanTest, AnInstanceWiderThanMaxNodesIsNotPlanned) {
  absl::StatusOr<PlanResult> r =
      Plan(Context(),
           "vllm bench serve --dataset-name random --random-input-len 64 --random-output-len 4 "
           "--num-prompts 4",
           {"python3 -m sglang.launch_server --model-path deepseek-ai/DeepSeek-V3.2 --nnodes 2 "
            "--tp-size 16 --dp-size 16 --enable-dp-attention"},
           ChatSlo(), OneNodeAtMost());
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->ranked.size(), 1u);
  EXPECT_EQ(r->ranked[0].status, PointStatus::kError);
  EXPECT_EQ(r->ranked[0].nodes, 0);
  EXPECT_EQ(r->ranked[0].reason,
            "one instance spans 2 nodes (--nnodes), more than --max-nodes 1");
}

// A request the engine rejects fails at every node count: the report says
// why, not only that one failed. (Prompts of 85k-255k tokens: the engine
// takes those within its 163,840 and rejects the rest.)
TEST(PlanTest, ReportGivesAFailedRequestsError) {
  const PlanOptions options = OneNodeAtMost();
  absl::StatusOr<PlanResult> r =
      Plan(Context(),
           "vllm bench serve --dataset-name random --random-input-len 170000 "
           "--random-range-ratio 0.5 --random-output-len 4 --num-prompts 6",
           {kVllmTp8}, ChatSlo(), options);
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->ranked.size(), 1u);
  EXPECT_EQ(r->ranked[0].status, PointStatus::kOk) << r->ranked[0].reason;
  EXPECT_GT(r->ranked[0].largest.figures.completed, 0);
  EXPECT_GT(r->ranked[0].largest.figures.failed, 0);
  EXPECT_EQ(r->ranked[0].nodes, 0);
  EXPECT_NE(r->ranked[0].largest.first_error.find("maximum context length is 163840"),
            std::string::npos)
      << r->ranked[0].largest.first_error;
  const std::string report = FormatPlanReport(*r, ChatSlo(), options);
  EXPECT_NE(report.find("; a failed request: "), std::string::npos) << report;
  // More nodes cannot help a rejected request, and the report says so.
  EXPECT_NE(report.find("fails at any node count: the search stopped here)"), std::string::npos)
      << report;
}

// The span the report weighs against request lifetimes: vLLM sends request
// n of 20 at 4/s by 20 / 4 = 5 s (the gaps rescaled so), the first after its
// own gap; a burst has none.
TEST(PlanTest, ArrivalSpanIsFirstToLastSend) {
  auto span_of = [](const std::string& rate) {
    absl::StatusOr<PlanResult> r =
        Plan(Context(),
             "vllm bench serve --dataset-name random --random-input-len 64 "
             "--random-output-len 4 --num-prompts 20 --seed 3" + rate,
             {kVllmTp8}, ChatSlo(), OneNodeAtMost());
    EXPECT_TRUE(r.ok()) << r.status();
    return r.ok() ? r->arrival_span_s : -1.0;
  };
  const double paced = span_of(" --request-rate 4");
  EXPECT_GT(paced, 2.5);
  EXPECT_LT(paced, 5.0);
  EXPECT_EQ(span_of(""), 0);
}

TEST(PlanTest, ReportPrintsTheWorkloadNote) {
  PlanResult result;
  result.bench_command = "vllm bench serve";
  result.num_requests = 199;
  PlanOptions options;
  options.workload_note = "every row of t.csv";
  const std::string report = FormatPlanReport(result, ChatSlo(), options);
  EXPECT_EQ(report.rfind("workload: 199 requests of `vllm bench serve`\n  (every row of t.csv)\n", 0),
            0u);
  // 199 requests: the P99 is the slowest two, which the report says.
  EXPECT_NE(report.find("\n  (a P99 here is the slowest 2 request(s) of 199:"), std::string::npos)
      << report;
  result.num_requests = 10000;
  EXPECT_EQ(FormatPlanReport(result, ChatSlo(), options).find("a P99 here is"), std::string::npos);
}

// Requests sent over 50 s, each living 0.5 s + 99 x 40 ms = 4.46 s: eleven
// lifetimes, a settled load. Over 20 s it is 4.5 lifetimes, which the report
// flags; a burst (no span) is what was asked and is not flagged.
TEST(PlanTest, ReportFlagsArrivalsSpanningFewRequestLifetimes) {
  PlanResult result;
  result.bench_command = "vllm bench serve";
  result.num_requests = 10000;
  CandidateResult best;
  best.nodes = 2;
  best.answer.nodes = 2;
  best.answer.figures.completed = 100;
  best.answer.figures.total_output_tokens = 10000;
  best.answer.figures.mean_ttft_ms = 500;
  best.answer.figures.mean_tpot_ms = 40;
  result.ranked.push_back(best);
  PlanOptions options;
  const std::string kFlag = "the load never settles";
  result.arrival_span_s = 50;
  EXPECT_EQ(FormatPlanReport(result, ChatSlo(), options).find(kFlag), std::string::npos);
  result.arrival_span_s = 20;
  const std::string report = FormatPlanReport(result, ChatSlo(), options);
  EXPECT_NE(report.find("arrive over 20.0 s, 4.5 times a request's mean latency here (4.5 s)"),
            std::string::npos)
      << report;
  result.arrival_span_s = 0;
  EXPECT_EQ(FormatPlanReport(result, ChatSlo(), options).find(kFlag), std::string::npos);
}

}  // namespace
}  // namespace servesim::planning
