#include "sim/runner/fit_coverage.h"

#include <algorithm>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "gtest/gtest.h"

namespace servesim::runner {
namespace {

constexpr char kModel[] = "deepseek-ai/DeepSeek-V3.2";
constexpr char kTp8[] = "8 GPUs: attention TP8xDP1, MoE TP8xEP1";
constexpr char kDp8[] = "8 GPUs: attention TP1xDP8, MoE TP1xEP8";

// vLLM's live layouts as the fitted costs key them, MTP with its draft count.
TEST(LayoutFamilyTest, NamesGpusAttentionAndExpertSplitsAndDrafts) {
  models::ParallelLayout l;
  l.gpus = 8;
  l.attn_tp = 8;
  l.moe_tp = 8;
  EXPECT_EQ(LayoutFamily(l, 0), kTp8);
  EXPECT_EQ(LayoutFamily(l, 1), std::string(kTp8) + ", MTP 1");
  EXPECT_EQ(LayoutFamily(l, 3), std::string(kTp8) + ", MTP 3");
  l.attn_tp = 1;
  l.attn_dp = 8;
  l.moe_tp = 1;
  l.moe_ep = 8;
  EXPECT_EQ(LayoutFamily(l, 0), kDp8);
}

scenarios::EngineParams Covering(int64_t max_prompt, int64_t min_peak, int64_t max_peak,
                                 bool only_bursts) {
  scenarios::EngineParams p;
  p.set_step_cpu_us(50000);
  p.set_prefill_time_scale(3);
  scenarios::FitCoverage& c = *p.mutable_coverage();
  c.set_model(kModel);
  c.set_max_prompt_tokens(max_prompt);
  c.set_min_peak_concurrency(min_peak);
  c.set_max_peak_concurrency(max_peak);
  c.set_only_bursts(only_bursts);
  c.add_layouts(kTp8);
  return p;
}

// (prompt tokens, send time s, accepted) per request.
WorkloadShape Shape(const std::vector<std::tuple<int64_t, double, bool>>& requests, double peak,
                    const std::string& layout = kTp8, const std::string& model = kModel) {
  WorkloadShape shape;
  shape.model = model;
  for (const auto& [prompt, start_s, accepted] : requests) {
    shape.AddRequest(prompt, sim::SimTime::FromNs(static_cast<int64_t>(start_s * 1e9)), accepted);
  }
  shape.peak_concurrency = peak;
  shape.layout_family = layout;
  return shape;
}

// Inside every bound, each at its edge: the longest prompt 2 % past the
// fitted longest, a burst, half the fewest and twice the most in flight.
TEST(ExtrapolationNotesTest, NoneInsideTheFittedWorkloads) {
  EXPECT_TRUE(ExtrapolationNotes(Covering(1000, 984, 1000, true),
                                 Shape({{1020, 0, true}, {10, 0, true}}, 492))
                  .empty());
  EXPECT_TRUE(ExtrapolationNotes(Covering(1000, 984, 1000, true),
                                 Shape({{1020, 0, true}}, 2000))
                  .empty());
}

TEST(ExtrapolationNotesTest, EachBoundLeftGivesItsNoteInOrder) {
  const std::vector<Extrapolation> notes =
      ExtrapolationNotes(Covering(1000, 984, 1000, true),
                         Shape({{1021, 0, true}, {10, 0.5, true}}, 491, kDp8,
                               "deepseek-ai/DeepSeek-V3"));
  ASSERT_EQ(notes.size(), 5u);
  EXPECT_NE(notes[0].line.find("the model is deepseek-ai/DeepSeek-V3, the fitted runs served "
                          "deepseek-ai/DeepSeek-V3.2"),
            std::string::npos)
      << notes[0].line;
  EXPECT_NE(notes[1].line.find("prompts up to 1021 tokens, the fitted runs' longest 1000"),
            std::string::npos)
      << notes[1].line;
  EXPECT_NE(notes[1].line.find("x3.00"), std::string::npos) << notes[1].line;
  EXPECT_NE(notes[2].line.find("about 491 requests running at the peak, the fitted "
                          "runs' fewest 984"),
            std::string::npos)
      << notes[2].line;
  EXPECT_NE(notes[2].line.find("fitted 50.0 ms per step"), std::string::npos) << notes[2].line;
  EXPECT_NE(notes[3].line.find("no fitted run had this layout (8 GPUs: attention TP1xDP8, MoE "
                          "TP1xEP8); the parameters were fitted on 8 GPUs: attention TP8xDP1, "
                          "MoE TP8xEP1, and nothing"),
            std::string::npos)
      << notes[3].line;
  EXPECT_NE(notes[4].line.find("requests arrive over time"), std::string::npos) << notes[4].line;
}

// vLLM's DP path carries a fitted latency on every collective call, paid at
// any batch size like the host cost per step: the low-load note names it
// where the layout has it, and only there.
TEST(ExtrapolationNotesTest, LowLoadNamesAFittedCallLatency) {
  WorkloadShape dp8 = Shape({{10, 0, true}}, 10, kDp8);
  dp8.fitted_call_latency_us = 173.3;
  const std::vector<Extrapolation> with = ExtrapolationNotes(Covering(1000, 984, 1000, true), dp8);
  ASSERT_GE(with.size(), 1u);
  EXPECT_EQ(with[0].kind, "lower load");
  EXPECT_NE(with[0].line.find("fitted 50.0 ms per step, with the fitted 173 us a DP collective "
                              "call, weighs on low-load TPOT"),
            std::string::npos)
      << with[0].line;
  const std::vector<Extrapolation> without =
      ExtrapolationNotes(Covering(1000, 984, 1000, true), Shape({{10, 0, true}}, 10));
  ASSERT_EQ(without.size(), 1u);
  EXPECT_EQ(without[0].line.find("DP collective"), std::string::npos) << without[0].line;
}

// Every note has its own kind, in the order written.
TEST(ExtrapolationNotesTest, EachNoteHasItsKind) {
  std::vector<std::string> kinds;
  for (const Extrapolation& e :
       ExtrapolationNotes(Covering(1000, 984, 1000, true),
                          Shape({{2000, 0, true}, {10, 1, true}}, 10, kDp8, "other"))) {
    kinds.push_back(e.kind);
  }
  for (const Extrapolation& e :
       ExtrapolationNotes(Covering(1000, 984, 1000, true), Shape({{10, 0, true}}, 5000))) {
    kinds.push_back(e.kind);
  }
  kinds.push_back(
      ExtrapolationNotes(scenarios::EngineParams(), Shape({{10, 0, true}}, 5)).front().kind);
  EXPECT_EQ(kinds, (std::vector<std::string>{"another model", "longer prompts", "lower load",
                                             "another layout", "spread arrivals", "higher load",
                                             "coverage unknown"}));
  // A sweep table reads back only the kinds ExtrapolationKinds lists.
  std::sort(kinds.begin(), kinds.end());
  std::vector<std::string> listed = ExtrapolationKinds();
  std::sort(listed.begin(), listed.end());
  EXPECT_EQ(kinds, listed);
}

TEST(ExtrapolationNotesTest, LoadAboveTwiceTheFittedMostIsNoted) {
  const std::vector<Extrapolation> notes =
      ExtrapolationNotes(Covering(1000, 984, 1000, true), Shape({{100, 0, true}}, 2001));
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_NE(notes[0].line.find("about 2001 requests active at the peak, the fitted "
                          "runs' most 1000"),
            std::string::npos)
      << notes[0].line;
}

// The engine runs at most its cap however many requests the client has in
// flight: 1000 requests against a cap of 16 are low load.
TEST(ExtrapolationNotesTest, LowLoadCountsWhatTheEngineRuns) {
  WorkloadShape shape = Shape({{100, 0, true}}, 1000);
  EXPECT_TRUE(ExtrapolationNotes(Covering(1000, 984, 1000, true), shape).empty());
  shape.running_cap = 16;
  const std::vector<Extrapolation> notes =
      ExtrapolationNotes(Covering(1000, 984, 1000, true), shape);
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_NE(notes[0].line.find("about 16 requests running at the peak (the engine's "
                          "running cap), the fitted runs' fewest 984"),
            std::string::npos)
      << notes[0].line;
}

// A prompt the engine turned away is never prefilled: it extends nothing.
TEST(ExtrapolationNotesTest, RejectedPromptsDoNotCount) {
  EXPECT_TRUE(ExtrapolationNotes(Covering(1000, 1, 1000, true),
                                 Shape({{5000, 0, false}, {900, 0, true}}, 10))
                  .empty());
}

// Fitted runs that themselves spread their requests cover arrivals over time.
TEST(ExtrapolationNotesTest, ArrivalsOverTimeAreCoveredByRunsThatHadThem) {
  EXPECT_TRUE(ExtrapolationNotes(Covering(1024, 10, 10, false),
                                 Shape({{100, 0, true}, {100, 2, true}}, 10))
                  .empty());
}

// A parameters file written before coverage was recorded cannot say whether
// a prediction is inside it, and says that rather than nothing.
TEST(ExtrapolationNotesTest, NoCoverageRecordedSaysSo) {
  scenarios::EngineParams none;
  const std::vector<Extrapolation> notes =
      ExtrapolationNotes(none, Shape({{100000, 3, true}}, 1, kDp8));
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_NE(notes[0].line.find("extrapolation: unknown (the parameters file records no coverage"),
            std::string::npos)
      << notes[0].line;
}

}  // namespace
}  // namespace servesim::runner
