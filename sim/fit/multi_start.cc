#include "sim/fit/multi_start.h"

#include <algorithm>
#include <limits>
#include <numeric>

#include "sim/planning/parallel_for.h"

namespace servesim::fit {

std::vector<double> HaltonPoint(int index, int dims) {
  std::vector<double> point;
  for (int base = 2; static_cast<int>(point.size()) < dims; ++base) {
    bool prime = true;
    for (int f = 2; f * f <= base; ++f) prime = prime && base % f != 0;
    if (!prime) continue;
    double value = 0, scale = 1.0 / base;
    for (int i = index; i > 0; i /= base, scale /= base) value += (i % base) * scale;
    point.push_back(value);
  }
  return point;
}

std::vector<std::vector<double>> LowestPoints(
    const std::function<double(const std::vector<double>&)>& f,
    const std::vector<std::vector<double>>& candidates, int count, int threads) {
  std::vector<double> values(candidates.size());
  planning::ParallelFor(candidates.size(), threads,
                        [&](size_t i) { values[i] = f(candidates[i]); });
  std::vector<size_t> order(candidates.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return values[a] < values[b]; });
  std::vector<std::vector<double>> lowest;
  for (size_t i = 0; i < order.size() && static_cast<int>(i) < count; ++i) {
    lowest.push_back(candidates[order[i]]);
  }
  return lowest;
}

NelderMeadResult MinimizeFromManyStarts(
    const std::function<double(const std::vector<double>&)>& f, const MultiStartSearch& search,
    const std::vector<double>& step, const std::vector<double>& lower,
    const std::vector<double>& upper) {
  std::vector<std::vector<double>> starts = search.fixed_starts;
  std::vector<std::vector<double>> screen;
  const size_t dims = search.screen_lower.size();
  for (int k = 1; k <= search.screen_points; ++k) {
    std::vector<double> point = search.screen_base;
    const std::vector<double> unit = HaltonPoint(k, static_cast<int>(dims));
    bool inside = true;
    for (size_t i = 0; i < dims; ++i) {
      const double width = search.screen_upper[i] - search.screen_lower[i];
      point[i] = search.screen_lower[i] + unit[i] * width;
      inside = inside && point[i] >= lower[i] && point[i] <= upper[i];
    }
    if (inside) screen.push_back(std::move(point));
  }
  for (std::vector<double>& from :
       LowestPoints(f, screen, search.screened_starts, search.threads)) {
    starts.push_back(std::move(from));
  }
  std::vector<NelderMeadResult> ends(starts.size());
  planning::ParallelFor(starts.size(), search.threads, [&](size_t i) {
    ends[i] = MinimizeNelderMead(f, starts[i], step, lower, upper, search.evaluations_per_search,
                                 search.tolerance);
  });
  // Lowest first; equal values keep the starts' order, so the result does
  // not depend on how the sort breaks ties.
  std::stable_sort(
      ends.begin(), ends.end(),
      [](const NelderMeadResult& a, const NelderMeadResult& b) { return a.value < b.value; });
  const size_t polished =
      std::min(ends.size(), static_cast<size_t>(std::max(1, search.polished_ends)));
  planning::ParallelFor(polished, search.threads, [&](size_t e) {
    NelderMeadResult& end = ends[e];
    for (int k = 0; k < search.max_polishes; ++k) {
      NelderMeadResult r = MinimizeNelderMead(f, end.x, step, lower, upper,
                                              search.evaluations_per_search, search.tolerance);
      if (!(r.value < end.value - search.tolerance)) break;
      end = std::move(r);
    }
  });
  NelderMeadResult best;
  for (size_t e = 0; e < polished; ++e) {
    if (best.x.empty() || ends[e].value < best.value) best = std::move(ends[e]);
  }
  return best;
}

}  // namespace servesim::fit
