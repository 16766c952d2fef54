// Local searches from many starts, for an objective with several valleys:
// fixed starts, and the lowest points of a low-discrepancy screen of a box.
#ifndef SERVESIM_SIM_FIT_MULTI_START_H_
#define SERVESIM_SIM_FIT_MULTI_START_H_

#include <functional>
#include <vector>

#include "sim/fit/nelder_mead.h"

namespace servesim::fit {

// Point `index` of the Halton sequence in [0, 1)^dims (point 0 is the
// origin): coordinate d is the radical inverse of `index` in the d-th prime
// base (2, 3, 5, ...).
// Deterministic and spread evenly at every length, unlike a random sample.
std::vector<double> HaltonPoint(int index, int dims);

// The `count` candidates with the lowest values of f, lowest first; equal
// values keep the candidates' order. Each candidate is evaluated once, on up
// to `threads` threads at a time (f must then be safe to call concurrently).
std::vector<std::vector<double>> LowestPoints(
    const std::function<double(const std::vector<double>&)>& f,
    const std::vector<std::vector<double>>& candidates, int count, int threads = 1);

// A search from many starts: local searches from fixed starts and from the
// lowest points of a screen, the best end point polished.
struct MultiStartSearch {
  std::vector<std::vector<double>> fixed_starts;
  // The screen: Halton points over the box [screen_lower, screen_upper] in
  // the first screen_lower.size() coordinates, the others at screen_base's.
  // The box is given apart from the bounds, and a point outside the bounds is
  // dropped rather than moved onto them: so narrowing a bound that neither
  // the lowest screen points nor the searches reach leaves the starts, and so
  // the result, unchanged.
  std::vector<double> screen_base, screen_lower, screen_upper;
  int screen_points = 0;
  int screened_starts = 0;
  int evaluations_per_search = 0;  // each search's budget, polishes too
  int max_polishes = 0;
  // How many of the lowest end points are polished before the lowest of
  // them is taken (at least one): searches stopped by their budget in
  // different valleys rank by where they stopped, not by the valleys' floors.
  int polished_ends = 1;
  double tolerance = 0;  // a polish that gains less than this ends them
  // The screen's points, the searches and the polished ends each run on up
  // to this many threads, f then called concurrently. Every search is
  // deterministic and their results are combined in the starts' order, so
  // the result is the same at any thread count.
  int threads = 1;
};

// Runs a Nelder-Mead search (`step`, `lower`, `upper` as MinimizeNelderMead
// takes them) from each fixed start, then from each of the screened_starts
// lowest screen points; then polishes the polished_ends lowest end points with fresh
// simplices of the starting size until one gains less than the tolerance,
// as a simplex that has shrunk along a curved valley stops short of its
// floor. Where every value is infinite the first search's end point stands.
NelderMeadResult MinimizeFromManyStarts(
    const std::function<double(const std::vector<double>&)>& f, const MultiStartSearch& search,
    const std::vector<double>& step, const std::vector<double>& lower,
    const std::vector<double>& upper);

}  // namespace servesim::fit

#endif  // SERVESIM_SIM_FIT_MULTI_START_H_
