#include "sim/planning/sweep.h"

#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "absl/strings/str_cat.h"
#include "sim/runner/repo_context_for_test.h"
#include "sim/workload/command_line.h"

namespace servesim::planning {
namespace {

// A configuration the engine refuses (FailedPrecondition, as
// runner::AsEngineRefusal marks it) is a refused point; anything else that
// fails, bad input or what servesim does not model, an error.
TEST(PointStatusOfTest, OnlyAnEngineRefusalIsRefused) {
  EXPECT_EQ(PointStatusOf(absl::FailedPreconditionError("no KV room")), PointStatus::kRefused);
  EXPECT_EQ(PointStatusOf(absl::InvalidArgumentError("bad flag")), PointStatus::kError);
  EXPECT_EQ(PointStatusOf(absl::UnimplementedError("not modelled")), PointStatus::kError);
}

TEST(ParseAxisTest, RoutesWorkloadFlagsToBenchAndOthersToServe) {
  absl::StatusOr<Axis> rate = ParseAxis("--request-rate=1,2,4");
  ASSERT_TRUE(rate.ok()) << rate.status();
  EXPECT_EQ(rate->target, AxisTarget::kBench);
  EXPECT_EQ(rate->values, (std::vector<std::string>{"1", "2", "4"}));
  absl::StatusOr<Axis> dp = ParseAxis("--dp-size=1, 2");
  ASSERT_TRUE(dp.ok());
  EXPECT_EQ(dp->target, AxisTarget::kServe);
  EXPECT_EQ(dp->values, (std::vector<std::string>{"1", "2"}));
}

TEST(ParseAxisTest, RejectsMissingFlagOrEmptyValue) {
  EXPECT_EQ(std::string(ParseAxis("dp-size=1,2").status().message()),
            "--axis: expected FLAG=V1,V2,... (e.g. --request-rate=1,2,4), got \"dp-size=1,2\"");
  EXPECT_EQ(std::string(ParseAxis("--dp-size").status().message()),
            "--axis: expected FLAG=V1,V2,... (e.g. --request-rate=1,2,4), got \"--dp-size\"");
  absl::Status s = ParseAxis("--dp-size=1,,2").status();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("--dp-size"), std::string::npos);
}

// Each point is one run and one row: a value given twice is a typo.
TEST(ParseAxisTest, RejectsAValueGivenTwice) {
  absl::Status s = ParseAxis("--request-rate=1, 2,1").status();
  EXPECT_EQ(s.message(), "--axis --request-rate: value \"1\" given twice");
  EXPECT_TRUE(ParseAxis("--request-rate=1,1.5").ok());
}

// A JSON value's commas are inside its braces: one value, not several.
TEST(ParseAxisTest, KeepsAJsonValueWhole) {
  absl::StatusOr<Axis> a = ParseAxis(
      "--speculative-config={\"method\":\"mtp\",\"num_speculative_tokens\":1}, "
      "{\"method\":\"mtp\",\"num_speculative_tokens\":2},'a,b',[1,2]");
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_EQ(a->values, (std::vector<std::string>{
                           "{\"method\":\"mtp\",\"num_speculative_tokens\":1}",
                           "{\"method\":\"mtp\",\"num_speculative_tokens\":2}", "a,b",
                           "[1,2]"}));
  // A quote inside a value is a character; unbalanced text is an error.
  EXPECT_EQ(ParseAxis("--served-model-name=it's,b")->values,
            (std::vector<std::string>{"it's", "b"}));
  EXPECT_EQ(ParseAxis("--speculative-config={8,16").status().message(),
            "--axis --speculative-config: unbalanced brackets in \"{8,16\"");
  EXPECT_FALSE(ParseAxis("--x='a,b").ok());
}

// vllm bench serve reads --num_prompts as --num-prompts: the axis edits the
// bench command, in the spelling the command has.
TEST(ParseAxisTest, AnUnderscoredBenchFlagIsTheBenchFlag) {
  absl::StatusOr<Axis> a = ParseAxis("--num_prompts=5,6");
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_EQ(a->target, AxisTarget::kBench);
  EXPECT_EQ(a->name, "--num-prompts");
  absl::StatusOr<std::vector<SweepPoint>> points =
      ExpandGrid("vllm serve m", "vllm bench serve --num-prompts 100", {*a});
  ASSERT_TRUE(points.ok()) << points.status();
  EXPECT_EQ((*points)[1].bench_command, "vllm bench serve --num-prompts 6");
}

TEST(ParseEngineAxisTest, LabelsEachCommandByItsEngine) {
  absl::StatusOr<Axis> a = ParseEngineAxis(
      "vllm serve m -tp 8 | python3 -m sglang.launch_server --model-path m --tp 8 |"
      "trtllm-serve m --tp_size 8|vllm serve m -dp 8");
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_EQ(a->values, (std::vector<std::string>{"vllm", "sglang", "trtllm", "vllm#2"}));
  EXPECT_EQ(a->commands[1], "python3 -m sglang.launch_server --model-path m --tp 8");
  EXPECT_EQ(ParseEngineAxis("vllm serve m||vllm serve n").status().message(),
            "--engine-axis: empty command between '|'");
  EXPECT_EQ(ParseEngineAxis("vllm serve m -tp 8 | vllm serve m -tp 8").status().message(),
            "--engine-axis: 'vllm serve m -tp 8' is given twice");
}

// The commands are cut where a shell would see a bare '|': one quoted or
// escaped inside a command is part of it.
TEST(ParseEngineAxisTest, QuotedBarsStayInTheirCommand) {
  absl::StatusOr<Axis> a = ParseEngineAxis(
      R"(vllm serve m -tp 8 --host 'a|b' | vllm serve m -dp 8 --host "c|d" | vllm serve m --host e\|f)");
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_EQ(a->commands, (std::vector<std::string>{"vllm serve m -tp 8 --host 'a|b'",
                                                   "vllm serve m -dp 8 --host \"c|d\"",
                                                   "vllm serve m --host e\\|f"}));
}

TEST(SetFlagTest, ReplacesTheValueInPlace) {
  absl::StatusOr<std::string> c = SetFlag("vllm serve m --max-num-seqs 64 -tp 8", "--max-num-seqs", "128");
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(*c, "vllm serve m --max-num-seqs 128 -tp 8");
}

TEST(SetFlagTest, ReplacesTheInlineForm) {
  EXPECT_EQ(*SetFlag("vllm bench serve --request-rate=4 --seed 1", "--request-rate", "8"),
            "vllm bench serve --request-rate=8 --seed 1");
}

TEST(SetFlagTest, AppendsAnAbsentFlag) {
  EXPECT_EQ(*SetFlag("vllm serve m", "--kv-cache-dtype", "fp8_e4m3"),
            "vllm serve m --kv-cache-dtype fp8_e4m3");
}

TEST(SetFlagTest, GivesABareSwitchItsValue) {
  EXPECT_EQ(*SetFlag("x --flag --other 1", "--flag", "on"), "x --flag on --other 1");
}

TEST(SetFlagTest, QuotesWordsThatNeedItAndTheyReadBackUnchanged) {
  const std::string json = R"({"method":"mtp","num_speculative_tokens":1})";
  absl::StatusOr<std::string> c =
      SetFlag("vllm serve m --speculative-config {\"method\":\"mtp\"}", "--speculative-config", json);
  ASSERT_TRUE(c.ok());
  absl::StatusOr<std::vector<std::string>> words = workload::SplitShellWords(*c);
  ASSERT_TRUE(words.ok());
  ASSERT_EQ(words->size(), 5u);
  EXPECT_EQ((*words)[4], json);
}

TEST(ExpandGridTest, SaveResultInTheBenchCommandIsRefused) {
  absl::StatusOr<std::vector<SweepPoint>> points =
      ExpandGrid("s", "vllm bench serve --save-result --result-filename r.json", {});
  ASSERT_FALSE(points.ok());
  EXPECT_NE(points.status().message().find("--save-result"), absl::string_view::npos);
}

TEST(ExpandGridTest, LastAxisVariesFastest) {
  std::vector<Axis> axes = {*ParseAxis("--dp-size=1,2"), *ParseAxis("--request-rate=1,2,4")};
  absl::StatusOr<std::vector<SweepPoint>> points =
      ExpandGrid("sglang serve --tp 8", "vllm bench serve", axes);
  ASSERT_TRUE(points.ok()) << points.status();
  ASSERT_EQ(points->size(), 6u);
  EXPECT_EQ((*points)[4].index, 4);
  EXPECT_EQ((*points)[4].values, (std::vector<std::string>{"2", "2"}));
  EXPECT_EQ((*points)[4].serve_command, "sglang serve --tp 8 --dp-size 2");
  EXPECT_EQ((*points)[4].bench_command, "vllm bench serve --request-rate 2");
  EXPECT_EQ((*points)[2].values, (std::vector<std::string>{"1", "4"}));
}

TEST(ExpandGridTest, EngineAxisReplacesTheServeCommandBeforeFlagEdits) {
  std::vector<Axis> axes = {*ParseAxis("--max-num-seqs=8,16"),
                            *ParseEngineAxis("vllm serve m|trtllm-serve m")};
  absl::StatusOr<std::vector<SweepPoint>> points = ExpandGrid("base", "vllm bench serve", axes);
  ASSERT_TRUE(points.ok());
  ASSERT_EQ(points->size(), 4u);
  EXPECT_EQ((*points)[1].serve_command, "trtllm-serve m --max-num-seqs 8");
  EXPECT_EQ((*points)[2].serve_command, "vllm serve m --max-num-seqs 16");
  EXPECT_EQ((*points)[2].values, (std::vector<std::string>{"16", "vllm"}));
}

// Both axes edited one flag: rows labelled 1 and 2 both ran --request-rate 3.
TEST(ExpandGridTest, AFlagOnTwoAxesIsAnError) {
  absl::StatusOr<std::vector<SweepPoint>> points = ExpandGrid(
      "s", "vllm bench serve", {*ParseAxis("--request-rate=1,2"), *ParseAxis("--request-rate=3")});
  ASSERT_FALSE(points.ok());
  EXPECT_EQ(points.status().message(),
            "--axis: --request-rate is on two axes; give all its values on one "
            "(--request-rate=1,2,3)");
}

// -tp and --tensor-parallel-size (or --max_num_seqs and --max-num-seqs) are
// one vLLM flag: the engine keeps the last, so -tp's column would be wrong.
TEST(ExpandGridTest, TwoSpellingsOfOneEngineFlagAreAnError) {
  const std::string vllm = "vllm serve m";
  absl::StatusOr<std::vector<SweepPoint>> points = ExpandGrid(
      vllm, "vllm bench serve", {*ParseAxis("-tp=8"), *ParseAxis("--tensor-parallel-size=4,8")});
  ASSERT_FALSE(points.ok());
  EXPECT_EQ(points.status().message(),
            "--axis: -tp and --tensor-parallel-size are one flag of the engine; give all its "
            "values on one axis");
  EXPECT_FALSE(ExpandGrid(vllm, "vllm bench serve",
                          {*ParseAxis("--max_num_seqs=64"), *ParseAxis("--max-num-seqs=128")})
                   .ok());
  // TensorRT-LLM spells its flags with underscores and takes dashes too.
  EXPECT_FALSE(ExpandGrid("trtllm-serve m", "vllm bench serve",
                          {*ParseAxis("--tp_size=8"), *ParseAxis("--tp-size=4")})
                   .ok());
  // Without a base command the engine axis's commands say what a flag is.
  EXPECT_FALSE(ExpandGrid("", "vllm bench serve",
                          {*ParseAxis("-tp=8"), *ParseAxis("--tensor-parallel-size=4"),
                           *ParseEngineAxis("vllm serve m|vllm serve n")})
                   .ok());
  // Different flags stay separate axes.
  EXPECT_TRUE(ExpandGrid(vllm, "vllm bench serve",
                         {*ParseAxis("-tp=8"), *ParseAxis("--max-num-seqs=128,256")})
                  .ok());
}

TEST(SweepIdTest, ChangesWithEveryPartOfTheDefinition) {
  const std::vector<Axis> axes = {*ParseAxis("--request-rate=1,2")};
  const std::string id = SweepId("s", "b", axes, {"K=V"});
  EXPECT_EQ(id.size(), 16u);
  EXPECT_EQ(SweepId("s", "b", axes, {"K=V"}), id);
  EXPECT_NE(SweepId("s2", "b", axes, {"K=V"}), id);
  EXPECT_NE(SweepId("s", "b2", axes, {"K=V"}), id);
  EXPECT_NE(SweepId("s", "b", {*ParseAxis("--request-rate=1,3")}, {"K=V"}), id);
  EXPECT_NE(SweepId("s", "b", {*ParseAxis("--request-rate=1,2,4")}, {"K=V"}), id);
  EXPECT_NE(SweepId("s", "b", {*ParseAxis("--num-prompts=1,2")}, {"K=V"}), id);
  EXPECT_NE(SweepId("s", "b", axes, {"K=W"}), id);
  // Fields do not run together: ("ab", "c") is not ("a", "bc").
  EXPECT_NE(SweepId("ab", "c", {}, {}), SweepId("a", "bc", {}, {}));
}

TEST(ExpandGridTest, NoAxesIsTheBasePoint) {
  absl::StatusOr<std::vector<SweepPoint>> points = ExpandGrid("s", "b", {});
  ASSERT_TRUE(points.ok());
  ASSERT_EQ(points->size(), 1u);
  EXPECT_EQ((*points)[0].serve_command, "s");
}

TEST(ShardTest, ParsesAndSelectsIndexModuloCount) {
  absl::StatusOr<Shard> s = ParseShard("1/3");
  ASSERT_TRUE(s.ok());
  std::vector<SweepPoint> points(8);
  for (int i = 0; i < 8; ++i) points[i].index = i;
  std::vector<int64_t> got;
  for (const SweepPoint& p : SelectShard(points, *s)) got.push_back(p.index);
  EXPECT_EQ(got, (std::vector<int64_t>{1, 4, 7}));
  EXPECT_EQ(std::string(ParseShard("3/3").status().message()),
            "--shard: expected i/n with 0 <= i < n (e.g. 0/4), got \"3/3\"");
  EXPECT_EQ(std::string(ParseShard("-1/3").status().message()),
            "--shard: expected i/n with 0 <= i < n (e.g. 0/4), got \"-1/3\"");
  EXPECT_EQ(std::string(ParseShard("1").status().message()),
            "--shard: expected i/n with 0 <= i < n (e.g. 0/4), got \"1\"");
  EXPECT_EQ(std::string(ParseShard("0/0").status().message()),
            "--shard: expected i/n with 0 <= i < n (e.g. 0/4), got \"0/0\"");
}

TEST(RunPointsTest, ResultsInGridOrderWhateverTheThreadCount) {
  std::vector<SweepPoint> points(40);
  for (int i = 0; i < 40; ++i) points[i].index = i;
  // Later points finish first: only the slot-per-index rule keeps the order.
  PointEvaluator eval = [](const SweepPoint& p) -> absl::StatusOr<PointFigures> {
    std::this_thread::sleep_for(std::chrono::microseconds(50 * (40 - p.index)));
    if (p.index % 7 == 3) return absl::FailedPreconditionError("too big");
    if (p.index % 11 == 5) return absl::InvalidArgumentError("bad flag");
    PointFigures f;
    f.completed = p.index * 10;
    return f;
  };
  int64_t last_done = 0;
  std::vector<PointResult> one = RunPoints(points, eval, 1, nullptr);
  std::vector<PointResult> four =
      RunPoints(points, eval, 4, [&](int64_t done, int64_t total) {
        EXPECT_EQ(done, last_done + 1);
        EXPECT_EQ(total, 40);
        last_done = done;
      });
  EXPECT_EQ(last_done, 40);
  ASSERT_EQ(four.size(), 40u);
  for (int i = 0; i < 40; ++i) {
    EXPECT_EQ(four[i].point.index, i);
    EXPECT_EQ(four[i].status, one[i].status);
    EXPECT_EQ(four[i].figures.completed, one[i].figures.completed);
  }
  EXPECT_EQ(four[3].status, PointStatus::kRefused);
  EXPECT_EQ(four[3].reason, "too big");
  EXPECT_EQ(four[5].status, PointStatus::kError);
  EXPECT_EQ(four[6].figures.completed, 60);
}

// Any input error fails the sweep (its other points still ran and were
// written). Refusals are outcomes.
TEST(CheckNoPointIsAnErrorTest, AnyErrorFailsTheSweep) {
  std::vector<PointResult> results(3);
  for (PointResult& r : results) {
    r.point.index = &r - results.data();
    r.status = PointStatus::kError;
    r.reason = absl::StrCat("--serve: unknown flag --frobnicate", r.point.index);
  }
  results[0].status = PointStatus::kOk;
  EXPECT_EQ(CheckNoPointIsAnError(results).message(),
            "sweep: 2 of 3 point(s) are errors (bad input or a feature servesim does not model, "
            "not an engine's refusal); the first (point 1): --serve: unknown flag --frobnicate1");
  results[1].status = PointStatus::kRefused;
  results[2].status = PointStatus::kRefused;
  EXPECT_TRUE(CheckNoPointIsAnError(results).ok());
  EXPECT_TRUE(CheckNoPointIsAnError({}).ok());
}

TEST(ProgressBarTest, FillsInProportion) {
  EXPECT_EQ(ProgressBar(12, 40, 10), "\r[###       ] 12/40");
  EXPECT_EQ(ProgressBar(40, 40, 4), "\r[####] 40/40");
}

// The real evaluator carries each point's extrapolations: 2000-token prompts
// are past the ShareGPT runs the committed parameters were fitted on.
TEST(PredictEvaluatorTest, CarriesThePointsExtrapolations) {
  SweepPoint point;
  point.serve_command = "vllm serve deepseek-ai/DeepSeek-V3.2 -tp 8";
  point.bench_command =
      "vllm bench serve --dataset-name random --random-input-len 2000 --random-output-len 4 "
      "--num-prompts 1000";
  absl::StatusOr<PointFigures> f =
      PredictEvaluator(runner::RepoPredictionContext(), {})(point);
  ASSERT_TRUE(f.ok()) << f.status();
  ASSERT_EQ(f->extrapolations.size(), 1u);
  EXPECT_EQ(f->extrapolations[0].kind, "longer prompts");
}

// The summary counts points and each kind of line over them; a sweep whose
// every point is inside the coverage prints nothing.
TEST(ExtrapolationSummaryTest, CountsPointsAndKinds) {
  std::vector<PointResult> rows(4);
  rows[0].figures.extrapolations = {{"longer prompts", "extrapolation: ..."},
                                    {"spread arrivals", "extrapolation: ..."}};
  rows[1].figures.extrapolations = {{"longer prompts", "extrapolation: ..."}};
  rows[3].status = PointStatus::kRefused;  // not an ok point: counted nowhere
  EXPECT_EQ(ExtrapolationSummary(rows),
            "2 of 3 ok point(s) extrapolate past the live runs the parameters were fitted on "
            "(longer prompts 2, spread arrivals 1): `servesim run` on a point prints why");
  EXPECT_EQ(ExtrapolationSummary({rows[2]}), "");
  rows[2].figures.extrapolations = {{"coverage unknown", "extrapolation: unknown ..."}};
  EXPECT_EQ(ExtrapolationSummary({rows[2]}),
            "for 1 of 1 ok point(s) the parameters record no coverage");
}

// The summary names the point whose throughput range is widest relative to
// its prediction: 60 of 1000 tok/s (6 %) beats 100 of 5000 (2 %).
TEST(SpreadSummaryTest, NamesTheWidestThroughputRange) {
  std::vector<PointResult> rows(3);
  for (int i = 0; i < 3; ++i) rows[i].point.index = i;
  rows[0].figures.total_token_throughput = 5000;
  rows[0].figures.spread.figures = {{"mean_tpot_ms", 10, 90},
                                    {"total_token_throughput", 4950, 5050}};
  rows[1].figures.total_token_throughput = 1000;
  rows[1].figures.spread.figures = {{"total_token_throughput", 980, 1040}};
  rows[2].status = PointStatus::kRefused;  // a refusal has no spread to count
  rows[2].figures.total_token_throughput = 1;
  rows[2].figures.spread.figures = {{"total_token_throughput", 1, 100}};
  EXPECT_EQ(SpreadSummary(rows),
            "spread over each point's engine's leave-one-out fits: total tok/s at most 6.0 % of "
            "its prediction wide (point 1: 980 to 1040 tok/s); sweep.csv has each figure's range");
  EXPECT_EQ(SpreadSummary({rows[2]}), "");
}

// With a spread evaluator the point carries what it returns, given the
// engine that served the point; its failure fails the point.
TEST(PredictEvaluatorTest, AddsTheSpreadOfTheEngineThatRan) {
  SweepPoint point;
  point.serve_command =
      "python3 -m sglang.launch_server --model-path deepseek-ai/DeepSeek-V3.2 "
      "--tp-size 8";
  point.bench_command =
      "vllm bench serve --dataset-name random --random-input-len 100 "
      "--random-output-len 4 --num-prompts 8";
  scenarios::EngineKind seen = scenarios::ENGINE_UNSPECIFIED;
  SpreadEvaluator spread = [&seen](const runner::RunRequest& request,
                                   scenarios::EngineKind engine) -> absl::StatusOr<PointSpread> {
    seen = engine;
    EXPECT_NE(request.bench_command.find("--num-prompts 8"), std::string::npos);
    return PointSpread{3, {{"total_token_throughput", 1, 2}}};
  };
  const runner::PredictionContext context = runner::RepoPredictionContext();
  absl::StatusOr<PointFigures> f = PredictEvaluator(context, {}, spread)(point);
  ASSERT_TRUE(f.ok()) << f.status();
  EXPECT_EQ(seen, scenarios::SGLANG);
  EXPECT_EQ(f->spread.fits, 3);
  ASSERT_EQ(f->spread.figures.size(), 1u);
  EXPECT_EQ(f->spread.figures[0].high, 2);
  SpreadEvaluator failing = [](const runner::RunRequest&,
                               scenarios::EngineKind) -> absl::StatusOr<PointSpread> {
    return absl::InvalidArgumentError("no fits of SGLANG");
  };
  EXPECT_EQ(PredictEvaluator(context, {}, failing)(point).status().message(), "no fits of SGLANG");
}

}  // namespace
}  // namespace servesim::planning
