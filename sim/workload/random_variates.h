// Random variates of servesim's own making over std::mt19937_64. The standard
// library's distributions differ across implementations, so every draw that
// reaches a workload goes through these functions and reruns are byte-identical.
#ifndef SERVESIM_SIM_WORKLOAD_RANDOM_VARIATES_H_
#define SERVESIM_SIM_WORKLOAD_RANDOM_VARIATES_H_

#include <cstdint>
#include <random>

namespace servesim::workload {

// Uniform integer in [0, n), n >= 1, by rejection of 64-bit draws (no modulo
// bias). traces/make_sharegpt_lengths.py replays this exact algorithm.
uint64_t UniformIndex(std::mt19937_64& rng, uint64_t n);

// Uniform integer in [lo, hi], lo <= hi.
int64_t UniformInt(std::mt19937_64& rng, int64_t lo, int64_t hi);

// Uniform double in the open interval (0, 1): 53 random bits plus a half step,
// so log() of it is always finite.
double UniformOpen01(std::mt19937_64& rng);

// Standard normal by Marsaglia's polar method (no trigonometry, no cached spare,
// so a draw depends only on the generator state).
double StandardNormal(std::mt19937_64& rng);

// Gamma(shape, scale), shape > 0, scale > 0: Marsaglia & Tsang (2000), "A simple
// method for generating gamma variables", ACM TOMS 26(3); for shape < 1 the
// boost Gamma(shape + 1) * U^(1/shape) from the same paper.
double Gamma(std::mt19937_64& rng, double shape, double scale);

}  // namespace servesim::workload

#endif  // SERVESIM_SIM_WORKLOAD_RANDOM_VARIATES_H_
