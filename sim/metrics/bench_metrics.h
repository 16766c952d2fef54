// The figures `vllm bench serve` prints, computed from request records with
// the client's own formulas (vllm/benchmarks/serve.py, calculate_metrics).
// The formulas are written down in docs/metrics.md.
#ifndef SERVESIM_SIM_METRICS_BENCH_METRICS_H_
#define SERVESIM_SIM_METRICS_BENCH_METRICS_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "sim/metrics/request_record.h"

namespace servesim::metrics {

// Mean, median, std (population, as numpy) and percentiles of one latency, in ms.
struct LatencyStats {
  double mean_ms = 0;
  double median_ms = 0;
  double std_ms = 0;
  double p99_ms = 0;
  // The client's --metric-percentiles, in its order: (percentile, ms).
  std::vector<std::pair<double, double>> percentiles_ms;
};

struct BenchMetrics {
  int64_t completed = 0;
  int64_t failed = 0;
  double duration_s = 0;
  int64_t total_input_tokens = 0;
  int64_t total_output_tokens = 0;
  double request_throughput = 0;
  double output_throughput = 0;
  double total_token_throughput = 0;
  // Successful requests within every --goodput SLO per second; unset
  // without --goodput (vllm saves null).
  std::optional<double> request_goodput;
  double max_output_tokens_per_s = 0;  // chunks in the busiest 1-s bucket
  double max_concurrent_requests = 0;  // most requests active at one instant
  LatencyStats ttft, tpot, itl, e2el;
  // Per request, in request order, as the --save-result arrays: a failed
  // request keeps its prompt length and start, with 0 output, TTFT and
  // latency, no ITLs, and its error ("" for a success), as vLLM saves it.
  std::vector<int64_t> input_lens, output_lens;
  std::vector<double> ttfts_s, latencies_s, start_times_s;
  std::vector<std::vector<double>> itls_s;
  std::vector<std::string> errors;
};

// numpy.percentile with linear interpolation; 0 for an empty input (vllm
// passes `x or 0`).
double Percentile(std::vector<double> values, double percentile);

// What the client was asked to compute beyond the fixed figures.
struct MetricOptions {
  std::vector<double> percentiles = {99.0};  // --metric-percentiles
  // --goodput: SLO in ms per metric (ttft, tpot, e2el); empty = no goodput.
  std::map<std::string, double> goodput_slo_ms;
};

// `duration` is the benchmark's wall time: from its start (t = 0, before the first
// request's arrival gap) to the last completion.
BenchMetrics ComputeBenchMetrics(const std::vector<RequestRecord>& records,
                                 sim::SimTime duration, const MetricOptions& options = {});

}  // namespace servesim::metrics

#endif  // SERVESIM_SIM_METRICS_BENCH_METRICS_H_
