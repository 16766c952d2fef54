#include "sim/runner/fit_coverage.h"

#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace servesim::runner {
namespace {

constexpr char kTp8[] = "8 GPUs: attention TP8xDP1, MoE TP8xEP1";
constexpr char kDp8[] = "8 GPUs: attention TP1xDP8, MoE TP1xEP8";

// vLLM's three live layouts as the fitted costs key them, and MTP apart.
TEST(LayoutFamilyTest, NamesGpusAttentionAndExpertSplitsAndMtp) {
  models::ParallelLayout l;
  l.gpus = 8;
  l.attn_tp = 8;
  l.moe_tp = 8;
  EXPECT_EQ(LayoutFamily(l, 0), kTp8);
  EXPECT_EQ(LayoutFamily(l, 1), std::string(kTp8) + ", MTP");
  l.attn_tp = 1;
  l.attn_dp = 8;
  l.moe_tp = 1;
  l.moe_ep = 8;
  EXPECT_EQ(LayoutFamily(l, 0), kDp8);
}

scenarios::EngineParams Covering(int64_t max_prompt, int64_t min_peak, bool only_bursts) {
  scenarios::EngineParams p;
  p.set_step_cpu_us(50000);
  p.set_prefill_time_scale(3);
  p.mutable_coverage()->set_max_prompt_tokens(max_prompt);
  p.mutable_coverage()->set_min_peak_concurrency(min_peak);
  p.mutable_coverage()->set_only_bursts(only_bursts);
  p.mutable_coverage()->add_layouts(kTp8);
  return p;
}

serving::SimulationResult Sent(const std::vector<std::pair<int64_t, double>>& prompt_and_start_s) {
  serving::SimulationResult s;
  for (const auto& [prompt, start_s] : prompt_and_start_s) {
    metrics::RequestRecord r;
    r.prompt_tokens = prompt;
    r.start = sim::SimTime::FromNs(static_cast<int64_t>(start_s * 1e9));
    s.records.push_back(r);
  }
  return s;
}

// Inside every bound: the longest prompt equal to the fitted longest, a burst,
// and half the fitted peak exactly.
TEST(ExtrapolationNotesTest, NoneInsideTheFittedWorkloads) {
  EXPECT_TRUE(ExtrapolationNotes(Covering(1024, 984, true),
                                 ShapeOf(Sent({{1024, 0}, {10, 0}}), 492, kTp8))
                  .empty());
}

TEST(ExtrapolationNotesTest, EachBoundLeftGivesItsNote) {
  const std::vector<std::string> notes = ExtrapolationNotes(
      Covering(1024, 984, true), ShapeOf(Sent({{1025, 0}, {10, 0.5}}), 491, kDp8));
  ASSERT_EQ(notes.size(), 4u);
  EXPECT_NE(notes[0].find("prompts up to 1025 tokens, the fitted runs' longest 1024"),
            std::string::npos)
      << notes[0];
  EXPECT_NE(notes[0].find("x3.00"), std::string::npos) << notes[0];
  EXPECT_NE(notes[1].find("at most 491 requests in flight, the fitted runs 984 or more"),
            std::string::npos)
      << notes[1];
  EXPECT_NE(notes[1].find("per step (50.0 ms)"), std::string::npos) << notes[1];
  EXPECT_NE(notes[2].find("no fitted run had this layout (8 GPUs: attention TP1xDP8, MoE "
                          "TP1xEP8); the fitted costs stand for work the kernels miss on theirs "
                          "(8 GPUs: attention TP8xDP1, MoE TP8xEP1)"),
            std::string::npos)
      << notes[2];
  EXPECT_NE(notes[3].find("requests arrive over time"), std::string::npos) << notes[3];
}

// Fitted runs that themselves spread their requests cover arrivals over time.
TEST(ExtrapolationNotesTest, ArrivalsOverTimeAreCoveredByRunsThatHadThem) {
  EXPECT_TRUE(ExtrapolationNotes(Covering(1024, 10, false),
                                 ShapeOf(Sent({{100, 0}, {100, 2}}), 10, kTp8))
                  .empty());
}

// A parameters file written before coverage was recorded says nothing,
// rather than calling every prompt an extrapolation.
TEST(ExtrapolationNotesTest, NoCoverageRecordedNoNotes) {
  scenarios::EngineParams none = Covering(0, 0, false);
  none.mutable_coverage()->clear_layouts();
  EXPECT_TRUE(ExtrapolationNotes(none, ShapeOf(Sent({{100000, 3}}), 1, kDp8)).empty());
}

}  // namespace
}  // namespace servesim::runner
