#include "sim/workload/arrivals.h"

#include <algorithm>
#include <cmath>
#include <random>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "sim/workload/random_variates.h"

namespace servesim::workload {
namespace {

absl::Status CheckSpan(double last_s, const char* what) {
  return CheckArrivalSpan(last_s,
                          absl::StrCat("--bench: ", what, ": the requests would be sent"));
}

// One gamma gap, or an error when rate x burstiness leaves doubles (a
// burstiness of 1e-320 or a rate and burstiness of 1e200 each): the draw
// would be NaN or its scale 0, and a send time INT64_MIN.
absl::StatusOr<double> GammaGapS(std::mt19937_64& rng, double rate, double burstiness) {
  const double scale_s = 1.0 / (rate * burstiness);
  if (!(scale_s > 0.0) || !std::isfinite(scale_s)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--bench: --burstiness: ", burstiness, " at ", rate,
        " req/s gives arrival gaps of no finite scale (1 / (rate x burstiness))"));
  }
  const double gap = Gamma(rng, burstiness, scale_s);
  if (!std::isfinite(gap)) {
    return absl::InvalidArgumentError(
        absl::StrCat("--bench: --burstiness: ", burstiness, " at ", rate,
                     " req/s gives arrival gaps that are not finite"));
  }
  return gap;
}

// vllm's get_request with a ramp-up: each gap is drawn at the rate of the
// request it precedes, and the sum is not rescaled (the ramp sets the pace).
absl::StatusOr<std::vector<int64_t>> RampUpTimesNs(const BenchConfig& config, int64_t n,
                                                   uint64_t seed) {
  const RampUp& ramp = *config.ramp_up;
  if (!(ramp.start_rps > 0 && ramp.end_rps >= ramp.start_rps) || !(config.burstiness > 0.0) ||
      std::isinf(config.burstiness)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "arrivals: a ramp-up needs 0 < start <= end req/s and finite burstiness > 0, got ",
        ramp.start_rps, ", ", ramp.end_rps, " and ", config.burstiness));
  }
  std::mt19937_64 rng(seed);
  std::vector<int64_t> times_ns(n);
  double t = 0.0;
  for (int64_t i = 0; i < n; ++i) {
    ASSIGN_OR_RETURN(const double gap,
                     GammaGapS(rng, RampUpRate(ramp, i, n), config.burstiness));
    t += gap;
    if (absl::Status s = CheckSpan(t, "--ramp-up-strategy"); !s.ok()) return s;
    times_ns[i] = std::llround(t * 1e9);
  }
  return times_ns;
}

}  // namespace

double RampUpRate(const RampUp& ramp, int64_t index, int64_t n) {
  const double progress =
      static_cast<double>(index) / static_cast<double>(std::max<int64_t>(n - 1, 1));
  const double start = static_cast<double>(ramp.start_rps);
  const double end = static_cast<double>(ramp.end_rps);
  if (ramp.shape == RampUp::Shape::kLinear) return start + (end - start) * progress;
  return start * std::pow(end / start, progress);
}

uint64_t ArrivalSeed(int64_t bench_seed) {
  // 2^64 / golden ratio: any odd constant separates the streams; this one is
  // the usual choice (splitmix64's increment).
  return static_cast<uint64_t>(bench_seed) ^ 0x9E3779B97F4A7C15ULL;
}

absl::StatusOr<std::vector<int64_t>> ArrivalTimesNs(const BenchConfig& config, int64_t n,
                                                    uint64_t seed) {
  if (n < 0) return absl::InvalidArgumentError(absl::StrCat("arrivals: n must be >= 0, got ", n));
  std::vector<int64_t> times_ns(n, 0);
  if (config.ramp_up.has_value() && n > 0) return RampUpTimesNs(config, n, seed);
  if (std::isinf(config.request_rate) || n == 0) return times_ns;
  if (!(config.request_rate > 0.0) || !(config.burstiness > 0.0) ||
      std::isinf(config.burstiness)) {
    return absl::InvalidArgumentError(
        absl::StrCat("arrivals: need request rate > 0 and finite burstiness > 0, got ",
                     config.request_rate, " and ", config.burstiness));
  }
  std::mt19937_64 rng(seed);
  std::vector<double> times_s(n);
  double t = 0.0;
  for (int64_t i = 0; i < n; ++i) {
    ASSIGN_OR_RETURN(const double gap, GammaGapS(rng, config.request_rate, config.burstiness));
    t += gap;
    times_s[i] = t;
  }
  const double target_last_s = static_cast<double>(n) / config.request_rate;
  if (absl::Status s = CheckSpan(target_last_s, "--request-rate"); !s.ok()) return s;
  const double factor = times_s.back() > 0.0 ? target_last_s / times_s.back() : 1.0;
  for (int64_t i = 0; i < n; ++i) times_ns[i] = std::llround(times_s[i] * factor * 1e9);
  return times_ns;
}

absl::StatusOr<std::vector<int64_t>> RequestArrivalTimesNs(
    const BenchConfig& config, const std::vector<BenchRequest>& requests) {
  const int64_t n = static_cast<int64_t>(requests.size());
  // Synthetic datasets and tables of lengths have no clock of their own.
  const bool own_clock = config.dataset_name == DatasetName::kTrace &&
                         !(n > 0 && requests.front().trace_without_arrivals);
  if (!own_clock) {
    // (--trace-time-scale is accepted with trace datasets only.)
    if (config.trace_time_scale_given) {
      return absl::InvalidArgumentError(
          "--bench: --trace-time-scale: the trace has no arrival times to scale (use "
          "--request-rate)");
    }
    return ArrivalTimesNs(config, n, ArrivalSeed(config.seed));
  }
  // A ramp or a gap shape would be ignored; --burstiness 1 (vllm's default)
  // changes nothing and is let through.
  const char* shaping = nullptr;
  if (config.ramp_up.has_value()) {
    shaping = "--ramp-up-strategy";
  } else if (config.burstiness_given && config.burstiness != 1.0) {
    shaping = "--burstiness";
  }
  if (shaping != nullptr) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--bench: ", shaping,
        ": the trace keeps its own arrival pattern (--request-rate only rescales its clock)"));
  }
  std::vector<int64_t> times_ns(n, 0);
  if (n == 0) return times_ns;
  if (config.request_rate_given) {
    if (std::isinf(config.request_rate)) return times_ns;
    const int64_t last_ns = requests.back().arrival_offset_ns;
    if (last_ns <= 0) {
      if (n == 1) return times_ns;
      return absl::InvalidArgumentError(
          "--bench: --request-rate: the trace's requests share one time stamp; cannot "
          "stretch it to a rate");
    }
    const double factor = static_cast<double>(n) / config.request_rate * 1e9 / last_ns;
    if (absl::Status s = CheckSpan(static_cast<double>(n) / config.request_rate, "--request-rate");
        !s.ok()) {
      return s;
    }
    for (int64_t i = 0; i < n; ++i) {
      times_ns[i] = std::llround(requests[i].arrival_offset_ns * factor);
    }
    return times_ns;
  }
  // The trace's times are non-decreasing (trace_file.h), so the last is the span.
  if (absl::Status s = CheckSpan(static_cast<double>(requests.back().arrival_offset_ns) * 1e-9 *
                                     config.trace_time_scale,
                                 config.trace_time_scale_given ? "--trace-time-scale"
                                                               : "the trace's time stamps");
      !s.ok()) {
    return s;
  }
  for (int64_t i = 0; i < n; ++i) {
    times_ns[i] = std::llround(requests[i].arrival_offset_ns * config.trace_time_scale);
  }
  return times_ns;
}

absl::Status CheckArrivalSpan(double span_s, absl::string_view sent) {
  if (span_s <= kMaxArrivalSpanS) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(
      sent, " over ", absl::SixDigits(span_s),
      " s; servesim simulates benchmarks whose requests are sent within ",
      kMaxArrivalSpanS / 86400, " days"));
}

}  // namespace servesim::workload
