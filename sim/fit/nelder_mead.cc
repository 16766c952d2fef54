#include "sim/fit/nelder_mead.h"

#include <algorithm>
#include <numeric>

namespace servesim::fit {

NelderMeadResult MinimizeNelderMead(const std::function<double(const std::vector<double>&)>& f,
                                    std::vector<double> start, const std::vector<double>& step,
                                    const std::vector<double>& lower,
                                    const std::vector<double>& upper, int max_evaluations,
                                    double tolerance) {
  const size_t n = start.size();
  int evals = 0;
  auto clamp = [&](std::vector<double> x) {
    for (size_t i = 0; i < n; ++i) x[i] = std::clamp(x[i], lower[i], upper[i]);
    return x;
  };
  auto eval = [&](const std::vector<double>& x) {
    ++evals;
    return f(x);
  };
  std::vector<std::vector<double>> pts(n + 1, clamp(start));
  // Each vertex steps away from the start along one coordinate, downwards
  // where the step up would cross the upper bound: a start on a bound would
  // otherwise give a simplex flat in that coordinate, which no reflection
  // can leave.
  for (size_t i = 0; i < n; ++i) {
    const double x = pts[0][i];
    const bool up = x + step[i] <= upper[i] || x - step[i] < lower[i];
    pts[i + 1][i] = std::clamp(up ? x + step[i] : x - step[i], lower[i], upper[i]);
  }
  std::vector<double> vals(n + 1);
  for (size_t i = 0; i <= n; ++i) vals[i] = eval(pts[i]);

  while (evals < max_evaluations) {
    std::vector<size_t> order(n + 1);
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return vals[a] < vals[b]; });
    const size_t best = order.front(), worst = order.back(), second = order[n - 1];
    if (vals[worst] - vals[best] <= tolerance) break;
    std::vector<double> centroid(n, 0);
    for (size_t i : order) {
      if (i == worst) continue;
      for (size_t d = 0; d < n; ++d) centroid[d] += pts[i][d] / n;
    }
    auto along = [&](double t) {
      std::vector<double> x(n);
      for (size_t d = 0; d < n; ++d) x[d] = centroid[d] + t * (pts[worst][d] - centroid[d]);
      return clamp(x);
    };
    const std::vector<double> reflected = along(-1);
    const double fr = eval(reflected);
    if (fr < vals[best]) {
      const std::vector<double> expanded = along(-2);
      const double fe = eval(expanded);
      if (fe < fr) {
        pts[worst] = expanded;
        vals[worst] = fe;
      } else {
        pts[worst] = reflected;
        vals[worst] = fr;
      }
    } else if (fr < vals[second]) {
      pts[worst] = reflected;
      vals[worst] = fr;
    } else {
      const std::vector<double> contracted = along(fr < vals[worst] ? -0.5 : 0.5);
      const double fc = eval(contracted);
      if (fc < std::min(fr, vals[worst])) {
        pts[worst] = contracted;
        vals[worst] = fc;
      } else {
        for (size_t i : order) {  // shrink towards the best
          if (i == best) continue;
          for (size_t d = 0; d < n; ++d) pts[i][d] = pts[best][d] + 0.5 * (pts[i][d] - pts[best][d]);
          pts[i] = clamp(pts[i]);
          vals[i] = eval(pts[i]);
        }
      }
    }
  }
  const size_t best = static_cast<size_t>(std::min_element(vals.begin(), vals.end()) - vals.begin());
  return {pts[best], vals[best], evals};
}

}  // namespace servesim::fit
