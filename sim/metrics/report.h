// Renders BenchMetrics exactly as `vllm bench serve` prints them and as its
// --save-result JSON stores them.
#ifndef SERVESIM_SIM_METRICS_REPORT_H_
#define SERVESIM_SIM_METRICS_REPORT_H_

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/string_view.h"
#include "sim/metrics/bench_metrics.h"

namespace servesim::metrics {

struct ReportOptions {
  std::optional<int64_t> max_concurrency;  // printed only when set
  double request_rate = 0;                 // printed only when finite
  // The client's --percentile-metrics: which latency blocks are printed and
  // saved (ttft, tpot, itl, e2el; always in that order, as vllm prints them).
  std::vector<std::string> percentile_metrics = {"ttft", "tpot", "itl"};
  // The saved JSON's setup keys that vllm writes before the figures, as
  // (key, JSON value text) pairs: label, model_id, tokenizer_id, num_prompts,
  // --metadata's, request_rate, burstiness, max_concurrency, the ramp-up
  // keys. Its "date" (the wall clock) is left out: servesim's output is
  // deterministic.
  std::vector<std::pair<std::string, std::string>> setup_json;
  // The per-request arrays vllm keeps only with --save-detailed (input_lens,
  // output_lens, ttfts, itls, generated_texts, errors; servesim's texts are
  // empty strings).
  bool per_request_arrays = true;
};

// The "==== Serving Benchmark Result ====" block, byte for byte in vllm's
// layout ("{:<40} {:<10.2f}" lines, trailing spaces included).
std::string FormatBenchReport(const BenchMetrics& m, const ReportOptions& options);

// main()'s traffic keys of the saved JSON, in its order: request_rate (an
// unbounded rate as the string "inf"), burstiness, max_concurrency (null
// when unset). Part of ReportOptions::setup_json.
std::vector<std::pair<std::string, std::string>> TrafficSetupJson(
    double request_rate, double burstiness, std::optional<int64_t> max_concurrency);

// The --save-result JSON: vllm's keys, plus the per-request arrays.
// `extra` is a JSON object body (without braces) of servesim's own keys, or "".
std::string FormatResultJson(const BenchMetrics& m, const ReportOptions& options,
                             const std::string& extra);

// The --save-result key of a line of the printed report, by its label
// ("Mean TTFT (ms):" -> "mean_ttft_ms", "Successful requests:" ->
// "completed"), the fixed lines' labels read regardless of case; nullopt for
// a label the report does not print.
std::optional<std::string> ResultKeyOfReportLabel(absl::string_view label);

// The file vllm bench serve saves to when --save-result has no
// --result-filename: "{label}-{rate}qps[-concurrency{N}]-{model}-{time}.json",
// the label --label or else the backend, the rate as Python prints it
// ("inf", "10.0"), the model the basename of the model id, and the time
// "%Y%m%d-%H%M%S" of the run's start in local time (`local_time`, a caller's
// clock: the name is the one output that differs from run to run, as
// vllm's does).
struct ResultFileNameParts {
  std::string label;  // --label, or else the backend ("openai-chat")
  double request_rate = 0;
  std::optional<int64_t> max_concurrency;
  // --ramp-up-strategy with its start and end rates, when given.
  std::optional<std::string> ramp_up_strategy;
  int64_t ramp_up_start_rps = 0;
  int64_t ramp_up_end_rps = 0;
  std::string model_id;
  std::string local_time;  // "%Y%m%d-%H%M%S"
};
std::string VllmResultFileName(const ResultFileNameParts& parts);

// Shortest text that reads back as the same double (Python's repr).
std::string JsonNumber(double v);
std::string JsonString(const std::string& s);

}  // namespace servesim::metrics

#endif  // SERVESIM_SIM_METRICS_REPORT_H_
