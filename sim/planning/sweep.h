// A what-if sweep: the Cartesian grid of serve/bench flag values (and engine
// commands) around a base pair of commands, run on a thread pool with results
// in grid order whatever the thread count.
#ifndef SERVESIM_SIM_PLANNING_SWEEP_H_
#define SERVESIM_SIM_PLANNING_SWEEP_H_

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "sim/metrics/bench_metrics.h"
#include "sim/runner/fit_coverage.h"
#include "sim/runner/prediction.h"

namespace servesim::planning {

// Which command an axis edits.
enum class AxisTarget {
  kServe,   // a flag of the engine's launch command
  kBench,   // a flag of `vllm bench serve`
  kEngine,  // the whole serve command (--engine-axis)
};

struct Axis {
  // "--request-rate"; "engine" for the engine axis.
  std::string name;
  AxisTarget target = AxisTarget::kServe;
  // The values as written; for the engine axis, short labels ("vllm", "sglang").
  std::vector<std::string> values;
  // Engine axis only: the serve command of each value.
  std::vector<std::string> commands;
};

// The bench-client flags an --axis may name (the workload flags of
// sim/workload/bench_config.h); every other flag edits the serve command.
const std::vector<std::string>& BenchAxisFlags();

// 'FLAG=V1,V2,...' (FLAG starts with "-"). Errors name the problem:
// "--axis: expected FLAG=V1,V2,..., got \"dp-size\"".
absl::StatusOr<Axis> ParseAxis(const std::string& spec);

// 'CMD1|CMD2|...': one serve command per value, labelled by engine (vllm,
// sglang, trtllm; "#2" appended to repeats).
absl::StatusOr<Axis> ParseEngineAxis(const std::string& spec);

// `command` with `flag` set to `value`: the value of every occurrence written
// exactly as `flag` (also `flag=value`) is replaced; a command without that
// spelling gets ` flag value` appended (engines keep the last value, so this
// also overrides an alias such as -tp for --tensor-parallel-size). Words are
// re-quoted only where the shell needs it.
absl::StatusOr<std::string> SetFlag(const std::string& command, const std::string& flag,
                                    const std::string& value);

struct SweepPoint {
  int64_t index = 0;                // position in the grid, 0-based
  std::vector<std::string> values;  // one per axis, in axis order
  std::string serve_command;
  std::string bench_command;
};

// The Cartesian product in row-major order: the last axis varies fastest, as
// nested loops written in axis order. No axes: the base point alone. Two
// axes of one flag are an error: the later one's value would win in every
// command, and the points labelled by the earlier one's values would not be
// what they say.
absl::StatusOr<std::vector<SweepPoint>> ExpandGrid(const std::string& serve_command,
                                                   const std::string& bench_command,
                                                   const std::vector<Axis>& axes);

// A fingerprint of a sweep's definition: the base commands, the axes in
// order with their values (and the engine axis's commands), and `settings`,
// whatever else changes the figures (--env, the context flags) as written.
// 16 hex digits, the same on every machine and run. A shard carries it so
// that sweep-merge refuses a shard of another sweep.
std::string SweepId(const std::string& serve_command, const std::string& bench_command,
                    const std::vector<Axis>& axes, const std::vector<std::string>& settings);

// --shard i/n: this process runs the points with index % n == i.
struct Shard {
  int index = 0;
  int count = 1;
};
absl::StatusOr<Shard> ParseShard(const std::string& text);
std::vector<SweepPoint> SelectShard(const std::vector<SweepPoint>& points, const Shard& shard);

enum class PointStatus { kOk, kRefused, kError };
std::string_view PointStatusName(PointStatus status);  // "ok", "refused", "error"
// What a failed prediction makes of a point: refused where the engine
// refuses the configuration (FailedPrecondition), else an error.
PointStatus PointStatusOf(const absl::Status& failure);

// One figure's lowest and highest value over a set of fitted parameters.
struct FigureSpread {
  std::string key;  // a PointFigures column, e.g. "total_token_throughput"
  double low = 0;
  double high = 0;
};

// How far a point's figures move over its engine's leave-one-out fits
// (`servesim run --spread`): the fits predicted (0: none) and each figure's
// range. A floor on the uncertainty, as run's: blind to what no live run
// exercised.
struct PointSpread {
  int fits = 0;
  std::vector<FigureSpread> figures;

  // The range of the figure column `key`, or null where there is none.
  const FigureSpread* Find(std::string_view key) const {
    for (const FigureSpread& f : figures) {
      if (f.key == key) return &f;
    }
    return nullptr;
  }
};

// The figure a sweep's summary and throughput plot read.
inline constexpr std::string_view kTotalTokenThroughput = "total_token_throughput";

// The report figures a sweep records per point.
struct PointFigures {
  int64_t completed = 0;
  int64_t failed = 0;
  double duration_s = 0;
  int64_t total_input_tokens = 0;
  int64_t total_output_tokens = 0;
  double request_throughput = 0;      // req/s
  double output_throughput = 0;       // tok/s
  double total_token_throughput = 0;  // tok/s
  double mean_ttft_ms = 0, median_ttft_ms = 0, p99_ttft_ms = 0;
  double mean_tpot_ms = 0, median_tpot_ms = 0, p99_tpot_ms = 0;
  double mean_itl_ms = 0, median_itl_ms = 0, p99_itl_ms = 0;
  // Where the point leaves the fitted parameters' coverage. sweep.csv and
  // sweep.json keep the kinds (a table read back has empty lines); the
  // command's summary counts them, `servesim run` on the point prints the lines.
  std::vector<runner::Extrapolation> extrapolations;
  PointSpread spread;  // with `sweep --spread`; fits 0 without
};
PointFigures FiguresOf(const metrics::BenchMetrics& m);

struct PointResult {
  SweepPoint point;
  PointStatus status = PointStatus::kOk;
  std::string reason;     // the refusal or error message; empty when ok
  PointFigures figures;  // meaningful only when ok
};

// "3 of 8 ok point(s) extrapolate past the live runs the parameters were
// fitted on (longer prompts 3, spread arrivals 2): `servesim run` on a point
// prints why", and how many points' parameters record no coverage; empty
// when neither.
std::string ExtrapolationSummary(const std::vector<PointResult>& rows);

// With a spread: "spread over each point's engine's leave-one-out fits:
// total tok/s at most 17.6 % of its prediction wide (point 3: 2710 to 3206
// tok/s); sweep.csv has each figure's range"; empty when no point has one.
std::string SpreadSummary(const std::vector<PointResult>& rows);

// Evaluates one point. FailedPrecondition = the engine refuses (refused);
// any other error is an error row. Must be safe to call from several threads.
using PointEvaluator = std::function<absl::StatusOr<PointFigures>(const SweepPoint&)>;

// A point's spread, given its request and the engine that served it. Must be
// thread-safe.
using SpreadEvaluator = std::function<absl::StatusOr<PointSpread>(const runner::RunRequest& request,
                                                                  scenarios::EngineKind engine)>;

// The evaluator of the real simulator: runner::Predict with `env`, sharing the
// read-only `context` (which must outlive the evaluator); with `spread`, each
// point that runs is also given its spread (a failure there fails the point).
PointEvaluator PredictEvaluator(const runner::PredictionContext& context,
                                const scenarios::EnvVars& env, SpreadEvaluator spread = nullptr);

// Runs `points` on `threads` workers (>= 1). Results are in the order of
// `points`. `progress(done, total)` is called after each point, serialized,
// from whichever worker finished it; it may be empty.
std::vector<PointResult> RunPoints(const std::vector<SweepPoint>& points,
                                   const PointEvaluator& evaluate, int threads,
                                   const std::function<void(int64_t, int64_t)>& progress);

// An error when any of `results` is an error: bad input (a flag the engine
// does not know, a value that does not parse), which makes the sweep fail
// even though its other points ran; it counts them and names the first. A
// refusal is an outcome, and no point at all (a shard of a small grid) is
// fine.
absl::Status CheckNoPointIsAnError(const std::vector<PointResult>& results);

// "\r[########        ] 12/40": a progress bar line of `width` cells.
std::string ProgressBar(int64_t done, int64_t total, int width);

}  // namespace servesim::planning

#endif  // SERVESIM_SIM_PLANNING_SWEEP_H_
