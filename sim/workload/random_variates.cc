#include "sim/workload/random_variates.h"

#include <cmath>
#include <limits>

#include "base/check.h"

namespace servesim::workload {

uint64_t UniformIndex(std::mt19937_64& rng, uint64_t n) {
  SERVESIM_CHECK(n >= 1, "UniformIndex needs n >= 1");
  // Accept x below the largest multiple of n that fits in 2^64, so every
  // residue is equally likely. (2^64 mod n) == (2^64 - n) mod n in uint64.
  const uint64_t remainder = (0 - n) % n;
  const uint64_t limit = remainder == 0 ? 0 : 0 - remainder;  // 0: accept all
  while (true) {
    const uint64_t x = rng();
    if (limit == 0 || x < limit) return x % n;
  }
}

int64_t UniformInt(std::mt19937_64& rng, int64_t lo, int64_t hi) {
  SERVESIM_CHECK(lo <= hi, "UniformInt needs lo <= hi");
  const uint64_t span = static_cast<uint64_t>(hi) - static_cast<uint64_t>(lo);
  if (span == std::numeric_limits<uint64_t>::max()) {
    return static_cast<int64_t>(rng());
  }
  return static_cast<int64_t>(static_cast<uint64_t>(lo) +
                              UniformIndex(rng, span + 1));
}

double UniformOpen01(std::mt19937_64& rng) {
  return (static_cast<double>(rng() >> 11) + 0.5) * 0x1.0p-53;
}

double StandardNormal(std::mt19937_64& rng) {
  while (true) {
    const double u = 2.0 * UniformOpen01(rng) - 1.0;
    const double v = 2.0 * UniformOpen01(rng) - 1.0;
    const double s = u * u + v * v;
    if (s > 0.0 && s < 1.0) return u * std::sqrt(-2.0 * std::log(s) / s);
  }
}

double Gamma(std::mt19937_64& rng, double shape, double scale) {
  SERVESIM_CHECK(shape > 0.0 && scale > 0.0, "Gamma needs shape, scale > 0");
  if (shape < 1.0) {
    const double boosted = Gamma(rng, shape + 1.0, 1.0);
    return boosted * std::pow(UniformOpen01(rng), 1.0 / shape) * scale;
  }
  const double d = shape - 1.0 / 3.0;
  const double c = 1.0 / std::sqrt(9.0 * d);
  while (true) {
    const double x = StandardNormal(rng);
    double v = 1.0 + c * x;
    if (v <= 0.0) continue;
    v = v * v * v;
    const double u = UniformOpen01(rng);
    const double x2 = x * x;
    // Cheap squeeze first; the log test is the exact acceptance condition.
    if (u < 1.0 - 0.0331 * x2 * x2) return d * v * scale;
    if (std::log(u) < 0.5 * x2 + d * (1.0 - v + std::log(v))) return d * v * scale;
  }
}

}  // namespace servesim::workload
