// Where a prediction leaves the workloads its fitted parameters were fitted
// on. The fitted costs stand for work no kernel measurement gives; the live
// runs pin them only over the model, prompts, loads, arrival patterns and
// layouts they had, and a capacity planner should know when a figure
// extrapolates past them.
#ifndef SERVESIM_SIM_RUNNER_FIT_COVERAGE_H_
#define SERVESIM_SIM_RUNNER_FIT_COVERAGE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "models/parallel_layout.h"
#include "scenarios/fitted_params.pb.h"
#include "sim/core/sim_time.h"

namespace servesim::runner {

// The parallel layout as the fitted costs see it: how many GPUs step
// together, how attention and the experts are split over them, and how many
// MTP drafts ride each step. "8 GPUs: attention TP8xDP1, MoE TP8xEP1, MTP 1".
std::string LayoutFamily(const models::ParallelLayout& layout, int num_speculative_tokens);

// What a prediction ran, in the terms of a FitCoverage.
struct WorkloadShape {
  std::string model;                 // the model spec's name
  int64_t longest_prompt_tokens = 0;  // of the requests the engine accepted
  bool all_sent_at_start = true;      // every request sent at t = 0
  double peak_concurrency = 0;        // requests active at once at the peak, one replica
  int64_t running_cap = 0;            // requests the engine runs at once (all DP ranks); 0: none
  std::string layout_family;          // LayoutFamily
  // The fitted latency a collective call of this layout carries (vLLM's DP
  // path); 0 where no call latency is fitted. Like the host cost per step, it
  // is paid at every batch size.
  double fitted_call_latency_us = 0;

  // Requests the engine runs at the peak: the client's, within the cap.
  double Running() const;

  // Counts one request the client sent at `sent`: its prompt only when the
  // engine accepted it (a rejected prompt is never prefilled).
  void AddRequest(int64_t prompt_tokens, sim::SimTime sent, bool accepted);
};

// One way a prediction leaves what the parameters were fitted on: `kind` in
// a few words, for a summary over many predictions ("another model",
// "longer prompts", "lower load", "higher load", "another layout", "spread
// arrivals", "coverage unknown"), and the line a report prints, beginning
// "extrapolation: ".
struct Extrapolation {
  std::string kind;
  std::string line;
};

// The kind of the one note a parameters file without coverage gives.
inline constexpr char kCoverageUnknown[] = "coverage unknown";

// Every Extrapolation::kind ExtrapolationNotes gives, in its order.
const std::vector<std::string>& ExtrapolationKinds();

// One per way `shape` leaves `params.coverage()`, in this order: another model; prompts more than 2 %
// past the fitted runs' longest (a tail within that is ShareGPT's own);
// requests running at the peak (the client's, within the engine's running
// cap) below half the fitted runs' fewest, or in flight above twice their
// most; a layout no fitted run had; requests sent over time where every
// fitted run sent all at once. Parameters without a coverage block get one
// saying that nothing is known.
std::vector<Extrapolation> ExtrapolationNotes(const scenarios::EngineParams& params,
                                              const WorkloadShape& shape);

}  // namespace servesim::runner

#endif  // SERVESIM_SIM_RUNNER_FIT_COVERAGE_H_
