// Where a prediction leaves the workloads its fitted parameters were fitted
// on. The fitted costs stand for work no kernel measurement gives; the live
// runs pin them only over the prompts, loads and arrival patterns they had,
// and a capacity planner should know when a figure extrapolates past them.
#ifndef SERVESIM_SIM_RUNNER_FIT_COVERAGE_H_
#define SERVESIM_SIM_RUNNER_FIT_COVERAGE_H_

#include <string>
#include <vector>

#include "scenarios/fitted_params.pb.h"
#include "sim/serving/serving_simulation.h"

namespace servesim::runner {

// One header line per way `simulation` leaves `params.coverage()`: prompts
// longer than any fitted run's, a peak of in-flight requests below half the
// fewest of any fitted run's, requests sent over time where every fitted run
// sent all at once. None for parameters without a recorded coverage.
std::vector<std::string> ExtrapolationNotes(const scenarios::EngineParams& params,
                                            const serving::SimulationResult& simulation,
                                            double peak_concurrency);

}  // namespace servesim::runner

#endif  // SERVESIM_SIM_RUNNER_FIT_COVERAGE_H_
