// Fits one engine's free parameters (host overheads, backend factors) to live
// runs by robust least squares on log errors, and cross-validates leaving one
// out.
#ifndef SERVESIM_SIM_FIT_ENGINE_FIT_H_
#define SERVESIM_SIM_FIT_ENGINE_FIT_H_

#include <functional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "scenarios/fitted_params.pb.h"
#include "sim/fit/live_runs.h"
#include "sim/runner/prediction.h"

namespace servesim::fit {

// The figures the fit matches for `engine`, as --save-result keys: the
// throughput, mean TTFT, mean TPOT and median ITL of every engine, and the
// p99 ITL where the engine's prefill chunks carry the running decodes with
// them (vLLM's chunked prefill, TensorRT-LLM's in-flight batching), which
// makes the slowest 1 % of gaps the mixed steps' duration (docs/fitting.md).
const std::vector<std::string>& FittedMetrics(scenarios::EngineKind engine);
// Every figure FittedMetrics gives for any engine.
const std::vector<std::string>& AllFittedMetrics();

// The loss of one squared log error z: soft-L1 with a 20 % scale c, i.e.
// 2c^2 (sqrt(1 + z/c^2) - 1): about z for errors within the scale, growing
// as sqrt(z) beyond it, so that a row the model cannot explain pulls the
// shared parameters no harder than a linear penalty.
double RobustLoss(double squared_log_error);

// The best of `current` and `points` evenly spaced values over [lower,
// upper] (both included) by `loss`; ties keep the earlier value, `current`
// first. A grid, not a local search: it crosses plateaus where a simplex
// stalls.
double ScanForMinimum(const std::function<double(double)>& loss, double current, double lower,
                      double upper, int points);

// Whether `backend`'s factor changes any prediction for `runs` (of
// `engine`) between `lower` and `upper`, the other parameters at their
// fit's starts. A factor that moves nothing is not fitted.
absl::StatusOr<bool> FactorMovesPredictions(const runner::PredictionContext& context,
                                            scenarios::EngineKind engine,
                                            const std::vector<LiveRun>& runs,
                                            const std::string& backend, double lower,
                                            double upper);

// The loss of a parameter point that makes a live run refuse: no fit may.
inline constexpr double kRefusedLoss = 1e30;

// What a parameter point leaves of the fitted figures of `runs`: the sum of
// RobustLoss over every log error (the fit's objective), the plain sum of
// squared log errors and their count (for the RMS). A run the point makes
// refuse gives kRefusedLoss and no residuals.
struct FitResiduals {
  double robust_loss = 0;
  double squared_sum = 0;
  int count = 0;
};
absl::StatusOr<FitResiduals> ResidualsAt(const runner::PredictionContext& context,
                                         const std::vector<LiveRun>& runs,
                                         const scenarios::EngineParams& params);

struct EngineFitOptions {
  int max_evaluations = 80;
  // Threads the search evaluates the runs on; the fit is the same at any
  // count (sim/fit/multi_start.h).
  int threads = 1;
};

// Runs of `engine` among `runs` (results only, no expected failures).
absl::StatusOr<std::vector<LiveRun>> RunsOfEngine(const runner::PredictionContext& context,
                                                  const std::vector<LiveRun>& runs,
                                                  scenarios::EngineKind engine);

// The workloads `runs` cover as servesim replays them with `context`: the
// longest prompt, the fewest requests in flight at a run's peak, and whether
// every run sent all its requests at once. Runs servesim refuses add nothing.
absl::StatusOr<scenarios::FitCoverage> CoverageOf(const runner::PredictionContext& context,
                                                  const std::vector<LiveRun>& runs);

// Fits `engine`'s parameters on `runs` (all of that engine). The context's
// own parameters for other engines are untouched.
absl::StatusOr<scenarios::EngineParams> FitEngine(const runner::PredictionContext& context,
                                                  const std::vector<LiveRun>& runs,
                                                  scenarios::EngineKind engine,
                                                  const EngineFitOptions& options);

// The folds' parameters side by side, one row each (engine, case held out,
// host costs, prefill factor, backend factors, RMS log error): how far one
// run moves the fit, which the held-out errors alone do not show.
std::string FormatFoldParameters(const scenarios::FoldFits& folds);

// How far each fit's search reached: its objective (the sum of RobustLoss
// over its own runs) at its own point and at the lowest of its engine's other
// fits' points, one row per fit. The fits share an objective but for one run,
// so a lower value at another fit's point says this fit's search stopped in
// a shallower valley than one another search found. `runs` holds every run
// the fits name in fitted_on.
absl::StatusOr<std::string> FormatSearchReach(const runner::PredictionContext& context,
                                              const std::vector<LiveRun>& runs,
                                              const scenarios::FoldFits& folds);

}  // namespace servesim::fit

#endif  // SERVESIM_SIM_FIT_ENGINE_FIT_H_
