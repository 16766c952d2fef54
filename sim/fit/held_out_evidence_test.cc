#include "sim/fit/held_out_evidence.h"

#include "absl/strings/str_cat.h"
#include "base/text_proto.h"
#include "gtest/gtest.h"

namespace servesim::fit {
namespace {

TEST(HeldOutResultOfTest, KeepsEachComparedFigureTheRunMeasured) {
  CaseResult c;
  c.shape.layout_family = "8 GPUs: attention TP8xDP1, MoE TP8xEP1";
  c.measured = {{"total_token_throughput", 5000}, {"mean_ttft_ms", 100}};
  c.predicted = {{"total_token_throughput", 5500},
                 {"mean_ttft_ms", 90},
                 {"mean_tpot_ms", 30},
                 {"completed", 1000}};
  const scenarios::HeldOutResult r = HeldOutResultOf(c);
  EXPECT_EQ(r.layout(), c.shape.layout_family);
  // In ComparedMetrics order; TPOT was not measured, "completed" is no figure.
  ASSERT_EQ(r.figures_size(), 2);
  EXPECT_EQ(r.figures(0).key(), "total_token_throughput");
  EXPECT_EQ(r.figures(0).measured(), 5000);
  EXPECT_EQ(r.figures(0).predicted(), 5500);
  EXPECT_EQ(r.figures(1).key(), "mean_ttft_ms");
}

TEST(HeldOutResultOfTest, ARefusedCaseHasNoFigures) {
  CaseResult c;
  c.refused = true;
  c.measured = {{"total_token_throughput", 5000}};
  EXPECT_EQ(HeldOutResultOf(c).figures_size(), 0);
}

constexpr char kTp8[] = "8 GPUs: attention TP8xDP1, MoE TP8xEP1";

// Three vLLM runs: two of TP8 (throughput +20 % and -25 %, TTFT only on the
// first) and one of DP8 (+50 %).
scenarios::FoldFits ThreeFolds() {
  scenarios::FoldFits folds;
  const absl::Status s = ParseTextProto(absl::StrCat(R"(schema_version: 1
folds { params { engine: VLLM step_cpu_us: 1000 fitted_on: "a" fitted_on: "b" fitted_on: "c" } }
folds { held_out: "a" params { engine: VLLM step_cpu_us: 900 }
  held_out_result { layout: ")",
                                                     kTp8, R"("
    figures { key: "total_token_throughput" measured: 100 predicted: 120 }
    figures { key: "mean_ttft_ms" measured: 10 predicted: 5 } } }
folds { held_out: "b" params { engine: VLLM step_cpu_us: 1100 }
  held_out_result { layout: ")",
                                                     kTp8, R"("
    figures { key: "total_token_throughput" measured: 200 predicted: 150 } } }
folds { held_out: "c" params { engine: VLLM step_cpu_us: 1000 }
  held_out_result { layout: "8 GPUs: attention TP1xDP8, MoE TP1xEP8"
    figures { key: "total_token_throughput" measured: 100 predicted: 150 } } }
)"),
                                        &folds);
  EXPECT_TRUE(s.ok()) << s;
  return folds;
}

TEST(FindHeldOutEvidenceTest, GivesTheRangeOverTheRunsOfTheLayout) {
  const scenarios::FoldFits folds = ThreeFolds();
  const std::optional<HeldOutEvidence> e =
      FindHeldOutEvidence(folds, folds.folds(0).params(), kTp8);
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->runs, (std::vector<std::string>{"a", "b"}));
  ASSERT_EQ(e->ranges.size(), 2u);
  EXPECT_EQ(e->ranges[0].key, "total_token_throughput");
  EXPECT_DOUBLE_EQ(e->ranges[0].low_pct, -25);  // 150 against 200
  EXPECT_DOUBLE_EQ(e->ranges[0].high_pct, 20);  // 120 against 100
  EXPECT_EQ(FormatHeldOutEvidence(*e, "f.textproto"),
            "held-out error on the 2 live run(s) of this engine and layout (a, b; each predicted "
            "by the vllm fit without it, f.textproto): total tok/s -25.0 to +20.0 %, mean TTFT "
            "ms -50.0 %");
  EXPECT_EQ(HeldOutEvidenceJson(*e, "f.textproto"),
            "{\"source\": \"f.textproto\", \"runs\": [\"a\", \"b\"], \"total_token_throughput\": "
            "{\"low_pct\": -25.0, \"high_pct\": 20.0}, \"mean_ttft_ms\": {\"low_pct\": -50.0, "
            "\"high_pct\": -50.0}}");
}

TEST(FindHeldOutEvidenceTest, NothingForALayoutNoRunHad) {
  const scenarios::FoldFits folds = ThreeFolds();
  EXPECT_FALSE(FindHeldOutEvidence(folds, folds.folds(0).params(),
                                   "16 GPUs: attention TP16xDP1, MoE TP16xEP1")
                   .has_value());
}

// Errors of other parameters say nothing of these: a --params file that is
// not the folds' fit on every run gets no line.
TEST(FindHeldOutEvidenceTest, NothingForParametersOtherThanTheFoldsFit) {
  const scenarios::FoldFits folds = ThreeFolds();
  scenarios::EngineParams other = folds.folds(0).params();
  other.set_step_cpu_us(1001);
  EXPECT_FALSE(FindHeldOutEvidence(folds, other, kTp8).has_value());
  scenarios::EngineParams sglang = folds.folds(0).params();
  sglang.set_engine(scenarios::SGLANG);
  EXPECT_FALSE(FindHeldOutEvidence(folds, sglang, kTp8).has_value());
}

}  // namespace
}  // namespace servesim::fit
