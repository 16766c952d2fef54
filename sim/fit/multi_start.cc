#include "sim/fit/multi_start.h"

#include <algorithm>
#include <numeric>

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
