// When each benchmark request is sent: vllm bench serve's arrival process
// (all at t = 0, Poisson, or gamma-bursty), or a trace's own clock.
#ifndef SERVESIM_SIM_WORKLOAD_ARRIVALS_H_
#define SERVESIM_SIM_WORKLOAD_ARRIVALS_H_

#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "sim/workload/bench_config.h"
#include "sim/workload/dataset.h"

namespace servesim::workload {

// Send times of n requests, in ns from the start of the run, non-decreasing.
// request_rate = inf: all 0. Otherwise vLLM's get_request
// (engine-defaults.md B3): gaps Gamma(shape = burstiness,
// scale = 1 / (rate * burstiness)) — Poisson at burstiness 1 — summed from the
// first request on (the first request waits one gap too), then every time is
// multiplied by (n / rate) / last so that the last request lands at exactly
// n / rate seconds. Draws use std::mt19937_64(seed) and random_variates.h,
// not numpy's stream, so individual times differ from vLLM's.
// With a ramp-up (config.ramp_up) each gap is drawn at the rate of the request
// it precedes (RampUpRate) and the times are not rescaled; --request-rate is
// inf then (bench_config.cc refuses both).
absl::StatusOr<std::vector<int64_t>> ArrivalTimesNs(const BenchConfig& config, int64_t n,
                                                    uint64_t seed);

// The rate (req/s) at which request `index` of `n` is sent under a ramp-up:
// vllm's _get_current_request_rate.
double RampUpRate(const RampUp& ramp, int64_t index, int64_t n);

// Send times of `requests` as the simulator should use them.
// - sharegpt / random: ArrivalTimesNs(config, size, ArrivalSeed(config.seed)).
// - trace: the trace's own offsets times --trace-time-scale. With
//   --request-rate R the trace keeps its shape but is stretched so the last
//   request lands at n / R seconds, matching vLLM's rescaling rule (rate inf:
//   all at 0). A trace whose requests all share one time stamp cannot be
//   stretched: error. A ramp-up or a --burstiness other than 1 is refused.
// Send times spanning more than kMaxArrivalSpanS: error.
absl::StatusOr<std::vector<int64_t>> RequestArrivalTimesNs(
    const BenchConfig& config, const std::vector<BenchRequest>& requests);

// The longest span of send times servesim simulates: 30 days. A benchmark
// spread wider than that is a flag typed wrong (a --request-rate of 1e-9),
// and its nanosecond times would leave int64 (at ~292 years).
inline constexpr double kMaxArrivalSpanS = 30.0 * 24 * 3600;

// OK when requests sent over `span_s` seconds stay within kMaxArrivalSpanS;
// else an error "<sent> over <span_s> s; servesim simulates ...", where
// `sent` says which flag sends what ("--rate-scale: 2 sends the trace's 100
// requests").
absl::Status CheckArrivalSpan(double span_s, absl::string_view sent);

// The arrival stream's seed: --seed mixed with a constant, so arrival gaps are
// not drawn from the same bits as the dataset's lengths.
uint64_t ArrivalSeed(int64_t bench_seed);

}  // namespace servesim::workload

#endif  // SERVESIM_SIM_WORKLOAD_ARRIVALS_H_
