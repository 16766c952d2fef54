// Predicted against measured: one row per live run, and the summary the
// issue asks for (median / max absolute error per metric, Spearman rank
// correlation of throughput, refusals reproduced).
#ifndef SERVESIM_SIM_FIT_VALIDATION_H_
#define SERVESIM_SIM_FIT_VALIDATION_H_

#include <map>
#include <string>
#include <vector>

#include "sim/fit/live_runs.h"
#include "sim/runner/fit_coverage.h"
#include "sim/runner/prediction.h"

namespace servesim::fit {

// The compared figures, as --save-result keys.
const std::vector<std::string>& ComparedMetrics();
// A compared figure's column heading ("total tok/s" for
// total_token_throughput); "?" for a key not among them.
const char* MetricLabel(const std::string& key);
// Value of a --save-result key in predicted metrics.
double MetricValue(const metrics::BenchMetrics& m, const std::string& key);

struct CaseResult {
  std::string name;
  bool expected_failure = false;  // the live run failed to start
  bool refused = false;           // servesim refused it
  bool not_modelled = false;      // servesim does not model the configuration yet
  std::string refusal;            // servesim's reason, or its error
  bool outcome_correct = false;   // both ran, or both refused
  // The workload as servesim replayed it (a prediction that ran): what a fit
  // records as the range its parameters cover.
  runner::WorkloadShape shape;
  std::map<std::string, double> measured, predicted;
  double ErrorPct(const std::string& key) const;  // (pred - meas) / meas * 100
  // Whether ErrorPct means anything: the figure was measured, and a
  // relative error exists (a live 0 against a predicted 0 is exact; against
  // anything else it is not a percentage).
  bool HasError(const std::string& key) const;
};

struct MetricSummary {
  int cases = 0;
  double median_abs_pct = 0;
  double max_abs_pct = 0;
};

struct ValidationReport {
  std::vector<CaseResult> cases;
  std::map<std::string, MetricSummary> per_metric;
  double spearman_total_throughput = 0;  // NaN when undefined (see SpearmanRho)
  int outcomes_correct = 0;
};

// Whether `run`'s completed requests fit the model's context
// (max_position_embeddings), prompt and reply: each one where the result
// lists them (input_lens, output_lens), and their average by the totals
// (total_input_tokens + total_output_tokens over completed). Failed requests
// (0 tokens out) may have asked for more. The error names the file, the
// case and the field.
absl::Status CheckRunWithinContext(const runner::PredictionContext& context, const LiveRun& run);

// Runs one live run's configuration through servesim. Bad input in the run
// file is an error (CheckRunWithinContext among it); an engine refusal is a
// result.
absl::StatusOr<CaseResult> ValidateRun(const runner::PredictionContext& context,
                                       const LiveRun& run);
ValidationReport Summarize(std::vector<CaseResult> cases);

// Spearman's rho with average ranks for ties; NaN for fewer than two pairs or
// when either side has a single distinct value (rho is undefined there).
double SpearmanRho(const std::vector<double>& a, const std::vector<double>& b);

// `completed_line`: a summary line comparing each run's completed requests,
// live and predicted (validate; a leave-one-out table, which compares the
// fitted figures held out, leaves it to validate).
std::string FormatValidationTable(const ValidationReport& report, bool completed_line = true);
std::string FormatValidationJson(const ValidationReport& report);

}  // namespace servesim::fit

#endif  // SERVESIM_SIM_FIT_VALIDATION_H_
