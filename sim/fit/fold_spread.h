// How far a prediction moves across the fits of a leave-one-out: an engine's
// parameters fitted on every live run and fitted without each one. Where the
// live runs pin a parameter poorly (SGLang's host work split between step
// and sequence, every engine's API server; docs/fitting.md) the fits
// disagree, and a prediction that leans on it spreads. The spread is a
// floor on the uncertainty, not its measure: it cannot show what no live
// run exercised (long prompts, spread arrivals).
#ifndef SERVESIM_SIM_FIT_FOLD_SPREAD_H_
#define SERVESIM_SIM_FIT_FOLD_SPREAD_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "scenarios/fitted_params.pb.h"
#include "sim/runner/prediction.h"

namespace servesim::fit {

// Reads and validates a fold file (text FoldFits, as `servesim fit
// --leave-one-out --folds-out` writes it): the schema version, at least one
// fold, each fold's parameters as LoadFittedParams checks them, a held-out
// run that is not among those it was fitted on, no engine and held-out run
// twice, and each engine's fit on every run. Errors are InvalidArgument, one line led by `flag` and
// the path.
absl::StatusOr<scenarios::FoldFits> LoadFoldFits(const std::string& path,
                                                 const std::string& flag);

// The lowest and highest value of one figure over the fits, and the run
// each of those fits left out ("" for the fit on every run).
struct FigureRange {
  std::string key;  // --save-result key, e.g. "total_token_throughput"
  double low = 0;
  double high = 0;
  std::string low_held_out;
  std::string high_held_out;
};

struct PredictionSpread {
  scenarios::EngineKind engine = scenarios::ENGINE_UNSPECIFIED;
  int fits = 0;  // predictions made, one per fold of the engine
  std::vector<FigureRange> figures;  // in SpreadFigures() order
};

// The figures a spread reports: throughput, mean and p99 TTFT, mean TPOT,
// median ITL (the four fitted, and the SLO's tail).
const std::vector<std::string>& SpreadFigures();

// Predicts `request` once per fold of `engine` in `folds`, each with the
// context's parameters for that engine replaced by the fold's, on up to
// `threads` threads. An engine with no folds in the file is an error naming
// it; a fold whose prediction fails returns that failure.
absl::StatusOr<PredictionSpread> PredictSpread(const runner::PredictionContext& context,
                                               const runner::RunRequest& request,
                                               scenarios::EngineKind engine,
                                               const scenarios::FoldFits& folds, int threads);

// The spread as header lines (without the "# "): one naming the fits and
// what the spread is, then one per figure. `source` names the fold file.
std::vector<std::string> FormatSpread(const PredictionSpread& spread, const std::string& source);

// The spread as the result JSON's "servesim_spread" member (without the
// key): {"fits": N, "source": FILE, KEY: {"low", "high", "low_held_out",
// "high_held_out"}, ...} per figure, by --save-result key.
std::string SpreadJson(const PredictionSpread& spread, const std::string& source);

}  // namespace servesim::fit

#endif  // SERVESIM_SIM_FIT_FOLD_SPREAD_H_
