// A small derivative-free minimiser (Nelder-Mead with the standard
// coefficients), deterministic: same start, same path. Used to fit the few
// engine parameters, whose objective is a simulation, not a formula.
#ifndef SERVESIM_SIM_FIT_NELDER_MEAD_H_
#define SERVESIM_SIM_FIT_NELDER_MEAD_H_

#include <functional>
#include <vector>

namespace servesim::fit {

struct NelderMeadResult {
  std::vector<double> x;
  double value = 0;
  int evaluations = 0;
};

// Minimises f from `start` with initial steps `step` (one per coordinate),
// stopping after `max_evaluations` or when the simplex's values agree within
// `tolerance`. Coordinates are clamped to [lower, upper].
NelderMeadResult MinimizeNelderMead(const std::function<double(const std::vector<double>&)>& f,
                                    std::vector<double> start, const std::vector<double>& step,
                                    const std::vector<double>& lower,
                                    const std::vector<double>& upper, int max_evaluations,
                                    double tolerance);

}  // namespace servesim::fit

#endif  // SERVESIM_SIM_FIT_NELDER_MEAD_H_
