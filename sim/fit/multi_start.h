// Chooses where a local search starts when the objective has several
// valleys: a low-discrepancy screen of the whole box, the lowest points kept.
#ifndef SERVESIM_SIM_FIT_MULTI_START_H_
#define SERVESIM_SIM_FIT_MULTI_START_H_

#include <functional>
#include <vector>

namespace servesim::fit {

// Point `index` of the Halton sequence in [0, 1)^dims (point 0 is the
// origin): coordinate d is the radical inverse of `index` in the d-th prime
// base (2, 3, 5, ...).
// Deterministic and spread evenly at every length, unlike a random sample.
std::vector<double> HaltonPoint(int index, int dims);

// The `count` candidates with the lowest values of f, lowest first; equal
// values keep the candidates' order. Each candidate is evaluated once.
std::vector<std::vector<double>> LowestPoints(
    const std::function<double(const std::vector<double>&)>& f,
    const std::vector<std::vector<double>>& candidates, int count);

}  // namespace servesim::fit

#endif  // SERVESIM_SIM_FIT_MULTI_START_H_
