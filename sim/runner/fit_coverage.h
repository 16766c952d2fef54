// Where a prediction leaves the workloads its fitted parameters were fitted
// on. The fitted costs stand for work no kernel measurement gives; the live
// runs pin them only over the prompts, loads and arrival patterns they had,
// and a capacity planner should know when a figure extrapolates past them.
#ifndef SERVESIM_SIM_RUNNER_FIT_COVERAGE_H_
#define SERVESIM_SIM_RUNNER_FIT_COVERAGE_H_

#include <string>
#include <vector>

#include "models/parallel_layout.h"
#include "scenarios/fitted_params.pb.h"
#include "sim/serving/serving_simulation.h"

namespace servesim::runner {

// The parallel layout as the fitted costs see it: how many GPUs step
// together, how attention and the experts are split over them, and whether
// MTP drafts ride each step. "8 GPUs: attention TP8xDP1, MoE TP8xEP1".
std::string LayoutFamily(const models::ParallelLayout& layout, int num_speculative_tokens);

// What a prediction ran, in the terms of a FitCoverage.
struct WorkloadShape {
  int64_t longest_prompt_tokens = 0;
  bool all_sent_at_start = true;  // every request sent at t = 0
  double peak_concurrency = 0;    // requests in flight at the peak (of one replica)
  std::string layout_family;      // LayoutFamily
};

// The prompts and send times of `simulation`'s requests, with the peak and
// layout given.
WorkloadShape ShapeOf(const serving::SimulationResult& simulation, double peak_concurrency,
                      std::string layout_family);

// One line per way `shape` leaves `params.coverage()`: prompts longer than
// any fitted run's, a peak of in-flight requests below half the fewest of
// any fitted run's, requests sent over time where every fitted run sent all
// at once, a layout no fitted run had. Each begins "extrapolation: ". None for
// parameters without a recorded coverage.
std::vector<std::string> ExtrapolationNotes(const scenarios::EngineParams& params,
                                            const WorkloadShape& shape);

}  // namespace servesim::runner

#endif  // SERVESIM_SIM_RUNNER_FIT_COVERAGE_H_
