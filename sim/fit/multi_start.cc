#include "sim/fit/multi_start.h"

#include <algorithm>
#include <numeric>

namespace servesim::fit {

std::vector<double> HaltonPoint(int index, int dims) {
  constexpr int kPrimes[] = {2, 3, 5, 7, 11, 13, 17, 19};
  std::vector<double> point;
  for (int d = 0; d < dims && d < static_cast<int>(std::size(kPrimes)); ++d) {
    const int base = kPrimes[d];
    double value = 0, scale = 1.0 / base;
    for (int i = index; i > 0; i /= base, scale /= base) value += (i % base) * scale;
    point.push_back(value);
  }
  return point;
}

std::vector<std::vector<double>> LowestPoints(
    const std::function<double(const std::vector<double>&)>& f,
    const std::vector<std::vector<double>>& candidates, int count) {
  std::vector<double> values;
  for (const std::vector<double>& c : candidates) values.push_back(f(c));
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

}  // namespace servesim::fit
