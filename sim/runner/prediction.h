// One prediction end to end: serve and bench commands in, the simulated
// benchmark's metrics out. The context (model spec, profile, fitted
// parameters) is loaded once and shared by many predictions (sweeps, fits).
#ifndef SERVESIM_SIM_RUNNER_PREDICTION_H_
#define SERVESIM_SIM_RUNNER_PREDICTION_H_

#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "calibration/profile.h"
#include "models/model_spec.h"
#include "scenarios/engine_config.pb.h"
#include "scenarios/fitted_params.pb.h"
#include "scenarios/serve_command.h"
#include "sim/cost/op_cost.h"
#include "sim/cost/production_kernels.h"
#include "sim/metrics/bench_metrics.h"
#include "sim/metrics/report.h"
#include "sim/runner/engine_setup.h"
#include "sim/runner/fit_coverage.h"
#include "sim/serving/serving_simulation.h"
#include "sim/workload/bench_config.h"
#include "sim/workload/live_lengths.h"

namespace servesim::runner {

struct ContextPaths {
  std::string repo_dir;     // holds traces/, models/, calibration/profiles/, scenarios/
  std::string model_spec;   // default: models/deepseek_v32.textproto
  std::string profile;      // default: calibration/profiles/h200.textproto; "roofline" = none
  std::string params;       // default: scenarios/fitted_params.textproto
  // Another GPU's profile is taken too (explain --gpu-only-json
  // --any-gpu-profile: the same-card iteration check); see ProfileGpu.
  calibration::ProfileGpu profile_gpu = calibration::ProfileGpu::kH200Only;
};

struct PredictionContext {
  ContextPaths paths;
  models::ModelSpec spec;
  // What the fit coverage compares with the fitted runs' model: the spec's
  // name, marked where a --model-spec file keeps the name of the
  // repository's spec but changes its content (a deleted indexer is still
  // "deepseek-ai/DeepSeek-V3.2" by name, not the model the runs served).
  std::string model_identity;
  std::shared_ptr<const calibration::Profile> profile;  // null: roofline only
  scenarios::FittedParams params;
  std::string missing_default_profile;  // set when the default profile file is absent
  std::string missing_default_params;   // set when the default parameters file is absent
  std::vector<cost::KernelScale> kernel_scales;  // production-kernel factors of the profile
};

// The FittedParams schema this reader takes (and `servesim fit` writes).
inline constexpr int kFittedParamsSchemaVersion = 1;

// Reads and validates a parameters file (text FittedParams). Errors are
// InvalidArgument, one line naming the file, the field and the bad value.
absl::StatusOr<scenarios::FittedParams> LoadFittedParams(const std::string& path);

// The checks LoadFittedParams makes: the schema version; at most one block
// per engine, each a known engine; every value finite, costs in [0, 10 s],
// scales in (0, 1000] (prefill_time_scale only where set); backend factors
// named as FittableBackendNames lists them, one per name. `origin` leads
// each error.
absl::Status ValidateFittedParams(const scenarios::FittedParams& params,
                                  const std::string& origin);

// The context's production-kernel factors as ProfileOpCost takes them.
std::vector<std::pair<std::string, double>> ProductionScalePairs(const PredictionContext& c);

// What a prediction prices each op with: the context's profile (with its
// production-kernel factors unless `production_factors` is false), or the
// roofline without one. `*profile_cost` is set to the profile's op cost
// (null without a profile), owned by the returned OpCost; a caller reads
// its fallbacks after pricing.
std::unique_ptr<cost::OpCost> MakeOpCost(const PredictionContext& context, bool production_factors,
                                         const cost::ProfileOpCost** profile_cost);

// Fills defaults in `paths` and loads everything; bad files are InvalidArgument.
absl::StatusOr<PredictionContext> LoadPredictionContext(ContextPaths paths);

struct RunRequest {
  std::string serve_command;
  std::string bench_command;
  scenarios::EnvVars env;
  double mtp_mean_accepted_drafts = -1;  // < 0: the documented default
  bool record_steps = false;             // keep every iteration (Prediction::simulation)
  // What a live run generated, to compare with it (validate, fit): laid over
  // the sampled workload by workload::ApplyLiveLengths. Empty: none.
  workload::LiveLengths live_lengths;
};

struct Prediction {
  scenarios::EngineConfig engine;
  workload::BenchConfig bench;
  std::vector<std::string> header;  // engine, layout, memory, profile, defaults
  // What vllm bench serve prints before its result block: the traffic (rate
  // or ramp-up), the burstiness and the concurrency limit, as it words them.
  std::vector<std::string> client_lines;
  serving::SimulationResult simulation;
  // The result JSON's model_id: the bench's --model, else the served model.
  std::string model_id;
  metrics::BenchMetrics metrics;
  metrics::ReportOptions report;
  // What ran, in a fit coverage's terms, and where it leaves the fitted
  // parameters' coverage (also in the header).
  WorkloadShape shape;
  std::vector<Extrapolation> extrapolations;
};

// InvalidArgument / Unimplemented: bad or unmodelled input (exit 2);
// FailedPrecondition: the engine refuses the configuration (exit 1).
absl::StatusOr<Prediction> Predict(const PredictionContext& context, const RunRequest& request);

// `base` with what the model spec tells the serve-command parsers: its
// context length and whether it has DSA's indexer.
scenarios::ServeContext WithModel(const models::ModelSpec& spec,
                                  scenarios::ServeContext base = {});

// Only the parse/setup stage: what `explain` shows. Same status codes. The
// model's context length comes from context.spec, whatever serve_context says.
struct PreparedRun {
  scenarios::EngineConfig engine;
  EngineSetup setup;
  // The engine's fitted parameters, when the context has them.
  std::optional<scenarios::EngineParams> params;
};
absl::StatusOr<PreparedRun> PrepareRun(const PredictionContext& context,
                                       const std::string& serve_command,
                                       const scenarios::EnvVars& env,
                                       const scenarios::ServeContext& serve_context);

// The model the serve command names, and, where it is not the spec's (a
// local path, another model: servesim reads no checkpoint), ", simulated as
// SPEC (the model spec)".
std::string ServedModel(const scenarios::EngineConfig& engine, const models::ModelSpec& spec);

// A workload shape with what `run`'s engine decides (the model, the
// requests it runs at once over all DP ranks, its layout family); the
// caller adds the requests and the peak.
WorkloadShape EngineShape(const PredictionContext& context, const PreparedRun& run);

// The refusal of a run whose engine turned every request away, with the
// first reason: "every request fails: the engine rejects each of the N, e.g. ...".
std::string EveryRequestRejected(int64_t requests, const std::string& first_reason);

// PrepareRun for the client `bench` describes: the serve context it implies
// (the dataset's MTP acceptance default, its sampling flags), checked as the server would answer
// its requests as a whole: a model it does not serve is refused (FailedPrecondition, its 404), an
// `mtp_mean_accepted_drafts` >= 0 without speculative decoding is bad input.
// What `run` and each candidate of `plan` simulate.
absl::StatusOr<PreparedRun> PrepareRunForBench(const PredictionContext& context,
                                               const std::string& serve_command,
                                               const scenarios::EnvVars& env,
                                               const workload::BenchConfig& bench,
                                               double mtp_mean_accepted_drafts = -1);

// The client's side of a simulation of `bench`: its concurrency limit and
// whether it streams from the chat endpoint (the caller adds the requests).
serving::SimulationInput ClientSimulationInput(const workload::BenchConfig& bench);

// The benchmark client's requests for `bench`: sampled lengths (with `live`,
// if given, laid over them) and send times, in send order. `notice` gets the
// dataset's note for the header.
absl::StatusOr<std::vector<serving::ClientRequest>> BuildClientRequests(
    const PredictionContext& context, const workload::BenchConfig& bench, std::string* notice,
    const workload::LiveLengths* live = nullptr);

// Simulates `input` on a prepared engine, timing steps with the context's
// cost model (profile with production-kernel factors, or the roofline).
// `fallbacks`, if given, receives the ops that fell back to the roofline.
absl::StatusOr<serving::SimulationResult> SimulatePrepared(const PredictionContext& context,
                                                           const PreparedRun& run,
                                                           const serving::SimulationInput& input,
                                                           std::set<std::string>* fallbacks);

// `path` relative to the repository when it lies inside it (headers stay the
// same whichever directory the checkout is in).
std::string RepoRelative(const PredictionContext& c, const std::string& path);

// One line on what every prediction of the context is costed with, for
// reports that print no per-run header (plan): "costs: profile FILE (device,
// measured DATE); fitted parameters FILE; every command's model simulated as
// NAME (SPEC FILE)", with "none (...)" for the roofline or no parameters.
std::string ContextSummary(const PredictionContext& context);

// A context whose parameters for `params.engine()` are replaced by `params`
// (a fit's trial values, a leave-one-out fold's).
PredictionContext WithEngineParams(const PredictionContext& context,
                                   const scenarios::EngineParams& params);

// The parameters of `engine` in `params`, or null when it has none (PrepareRun
// then prices it with zeros and says so in the header).
const scenarios::EngineParams* FindEngineParams(const scenarios::FittedParams& params,
                                                scenarios::EngineKind engine);

}  // namespace servesim::runner

#endif  // SERVESIM_SIM_RUNNER_PREDICTION_H_
