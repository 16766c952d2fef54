#include "sim/runner/prediction.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <optional>
#include <set>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "base/decimal.h"
#include "base/read_file.h"
#include "base/status_macros.h"
#include "base/text_proto.h"
#include "google/protobuf/util/message_differencer.h"
#include "sim/cost/op_cost.h"
#include "sim/cost/production_kernels.h"
#include "sim/runner/fit_coverage.h"
#include "sim/workload/arrivals.h"
#include "sim/workload/dataset.h"

namespace servesim::runner {
namespace {

// Bounds that no fit can reach (sim/fit/engine_fit.cc fits host costs up to
// 0.2 s and scales up to 10x; docs/fitting.md) but that keep every cost in
// range of the simulator's nanosecond clock: 1e300 us once overflowed it.
constexpr double kMaxCostUs = 1e7;  // 10 s
constexpr double kMaxScale = 1000;

absl::Status CheckCost(const std::string& where, const char* field, double us) {
  if (std::isfinite(us) && us >= 0 && us <= kMaxCostUs) return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrCat(where, field, ": must be in [0, 1e7] us (10 s), got ", FormatDecimal(us)));
}

absl::Status CheckScale(const std::string& where, const char* field, double scale) {
  if (std::isfinite(scale) && scale > 0 && scale <= kMaxScale) return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrCat(where, field, ": must be in (0, 1000], got ", FormatDecimal(scale)));
}

absl::Status CheckBackendName(const std::string& where, const char* field,
                              const std::string& name, scenarios::EngineKind engine) {
  const std::vector<std::string> known = FittableBackendNames(engine);
  if (std::find(known.begin(), known.end(), name) != known.end()) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(where, field, ": unknown backend \"", name,
                                                 "\" (known: ", absl::StrJoin(known, ", "),
                                                 ")"));
}

// One engine's block; `where` ("FILE: VLLM: ") leads each error.
absl::Status ValidateEngineParams(const scenarios::EngineParams& e, const std::string& where) {
  RETURN_IF_ERROR(CheckCost(where, "step_cpu_us", e.step_cpu_us()));
  RETURN_IF_ERROR(CheckCost(where, "per_seq_cpu_us", e.per_seq_cpu_us()));
  RETURN_IF_ERROR(CheckCost(where, "eager_launch_us", e.eager_launch_us()));
  RETURN_IF_ERROR(CheckCost(where, "frontend_request_us", e.frontend_request_us()));
  if (e.has_prefill_time_scale()) {
    RETURN_IF_ERROR(CheckScale(where, "prefill_time_scale", e.prefill_time_scale()));
  }
  std::set<std::string> seen;
  for (const scenarios::BackendFactor& f : e.backend_factors()) {
    RETURN_IF_ERROR(CheckBackendName(where, "backend_factors", f.backend(), e.engine()));
    if (!seen.insert(f.backend()).second) {
      return absl::InvalidArgumentError(
          absl::StrCat(where, "backend_factors: \"", f.backend(), "\" given twice"));
    }
    RETURN_IF_ERROR(CheckScale(absl::StrCat(where, "backend_factors \"", f.backend(), "\": "),
                               "time_scale", f.time_scale()));
  }
  for (const std::string& name : e.not_fitted()) {
    RETURN_IF_ERROR(CheckBackendName(where, "not_fitted", name, e.engine()));
  }
  if (e.has_coverage()) {
    const scenarios::FitCoverage& c = e.coverage();
    if (c.model().empty() || c.max_peak_concurrency() == 0) {
      // Blocks of 2026-12-04's first coverage lacked both.
      return absl::InvalidArgumentError(absl::StrCat(
          where, "coverage: incomplete (no model or max_peak_concurrency: written by an older "
                 "servesim?); refit with scripts/fit_default_params.sh"));
    }
    for (auto [field, value] :
         {std::pair{"coverage.max_prompt_tokens", c.max_prompt_tokens()},
          {"coverage.min_peak_concurrency", c.min_peak_concurrency()},
          {"coverage.max_peak_concurrency", c.max_peak_concurrency()}}) {
      if (value < 1) {
        return absl::InvalidArgumentError(
            absl::StrCat(where, field, ": must be >= 1 where coverage is given, got ", value));
      }
    }
    if (c.max_peak_concurrency() < c.min_peak_concurrency()) {
      return absl::InvalidArgumentError(
          absl::StrCat(where, "coverage: max_peak_concurrency ", c.max_peak_concurrency(),
                       " is below min_peak_concurrency ", c.min_peak_concurrency()));
    }
    if (c.layouts().empty()) {
      return absl::InvalidArgumentError(absl::StrCat(where, "coverage: needs at least one layout"));
    }
  }
  // Informational; a fit that predicted some figure as 0 writes inf.
  if (!(e.rms_log_error() >= 0)) {
    return absl::InvalidArgumentError(
        absl::StrCat(where, "rms_log_error: must be >= 0, got ", FormatDecimal(e.rms_log_error())));
  }
  // As a file with no block for the engine is refused: zero host costs are
  // what --params none asks for, not what a fitted file may say by omission.
  if (e.step_cpu_us() == 0 && e.per_seq_cpu_us() == 0 && e.frontend_request_us() == 0 &&
      !e.has_prefill_time_scale() && e.backend_factors_size() == 0) {
    return absl::InvalidArgumentError(
        absl::StrCat(where,
                     "an empty block: it sets no host cost, prefill factor or backend "
                     "factor (fit the engine, or run with --params none)"));
  }
  return absl::OkStatus();
}

// Host time per kernel launched outside CUDA graphs, and where it came from:
// a params file that sets it, else the profile's measurement on the
// calibration host (host_launch; calibration/host/launch_overhead_bench.py)
// for torch.compile'd code (vLLM) or eager PyTorch modules (SGLang's and
// TensorRT-LLM's prefills). Without either it is not charged, and the header
// says so.
std::pair<double, std::string> EagerLaunch(const PredictionContext& context,
                                           const scenarios::EngineConfig& engine,
                                           const scenarios::EngineParams* params) {
  if (params != nullptr && params->eager_launch_us() > 0) {
    return {params->eager_launch_us(),
            absl::StrFormat("eager launch: %.1f us of host time per kernel outside CUDA graphs "
                            "(parameters file)",
                            params->eager_launch_us())};
  }
  const int compiled = engine.torch_compiled() ? 1 : 0;
  const char* mode = compiled ? "torch.compile'd code" : "eager PyTorch";
  if (context.profile) {
    if (std::optional<double> us =
            context.profile->LookupUs("host_launch", {{"compiled", compiled}}, 1)) {
      return {*us, absl::StrFormat("eager launch: %.1f us of host time per kernel outside CUDA "
                                   "graphs (%s, measured: profile table host_launch{compiled=%d})",
                                   *us, mode, compiled)};
    }
  }
  return {0, absl::StrCat("eager launch: not charged (", mode,
                          "; the profile has no host_launch table)")};
}

}  // namespace

absl::Status ValidateFittedParams(const scenarios::FittedParams& params,
                                  const std::string& origin) {
  if (params.schema_version() != kFittedParamsSchemaVersion) {
    return absl::InvalidArgumentError(absl::StrCat(origin, ": schema_version ",
                                                   params.schema_version(),
                                                   ", this reader wants ",
                                                   kFittedParamsSchemaVersion));
  }
  std::set<int> engines;
  for (int i = 0; i < params.engines_size(); ++i) {
    const scenarios::EngineParams& e = params.engines(i);
    const std::string& name = scenarios::EngineKind_Name(e.engine());
    if (e.engine() == scenarios::ENGINE_UNSPECIFIED || name.empty()) {
      const std::string value = name.empty() ? absl::StrCat(static_cast<int>(e.engine())) : name;
      return absl::InvalidArgumentError(absl::StrCat(origin, ": engines[", i, "]: engine: ", value,
                                                     " is not VLLM, SGLANG or TRTLLM"));
    }
    if (!engines.insert(e.engine()).second) {
      return absl::InvalidArgumentError(
          absl::StrCat(origin, ": engines[", i, "]: a second block for ", name));
    }
    RETURN_IF_ERROR(ValidateEngineParams(e, absl::StrCat(origin, ": ", name, ": ")));
  }
  return absl::OkStatus();
}

absl::StatusOr<scenarios::FittedParams> LoadFittedParams(const std::string& path) {
  absl::StatusOr<std::string> text = ReadFileToString(path);
  if (!text.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("--params: ", text.status().message()));
  }
  scenarios::FittedParams params;
  if (absl::Status s = ParseTextProto(*text, &params); !s.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("--params: ", path, ": not a FittedParams text proto: ", s.message()));
  }
  // An empty file parses as an empty message: say so rather than report its
  // schema_version of 0. No parameters at all is --params none.
  if (params.ByteSizeLong() == 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--params: ", path, ": no parameters (an empty file; --params none runs without any)"));
  }
  RETURN_IF_ERROR(ValidateFittedParams(params, absl::StrCat("--params: ", path)));
  return params;
}

std::vector<std::pair<std::string, double>> ProductionScalePairs(const PredictionContext& c) {
  std::vector<std::pair<std::string, double>> pairs;
  for (const cost::KernelScale& k : c.kernel_scales) pairs.emplace_back(k.kind, k.time_scale);
  return pairs;
}

std::string RepoRelative(const PredictionContext& c, const std::string& path) {
  const std::string prefix = c.paths.repo_dir + "/";
  return path.rfind(prefix, 0) == 0 ? path.substr(prefix.size()) : path;
}

namespace {

// The measured profile the ops are priced from, or the roofline that stands
// in for it, as run's header and plan's report name it.
std::string DescribeProfile(const PredictionContext& context) {
  if (!context.profile) {
    return context.missing_default_profile.empty()
               ? "none (roofline of H200 datasheet rates)"
               : absl::StrCat(context.missing_default_profile,
                              " not found; roofline of H200 datasheet rates");
  }
  const auto& d = context.profile->proto().device();
  // Tables a later run measured (calibration/swap_tables.py ends their notes
  // so): by run and kind, in the order the profile holds them.
  const std::string kSwapped = "; swapped in from the run of ";
  struct Later {
    std::string run;  // its measured_at: ISO 8601, UTC, 20 characters
    std::string kind;
    int tables = 0;
  };
  std::vector<Later> later;
  for (const auto& table : context.profile->proto().tables()) {
    const size_t at = table.note().find(kSwapped);
    if (at == std::string::npos) continue;
    const std::string run = table.note().substr(at + kSwapped.size(), 20);
    auto it = std::find_if(later.begin(), later.end(),
                           [&](const Later& l) { return l.run == run && l.kind == table.kind(); });
    if (it == later.end()) it = later.insert(later.end(), {run, table.kind(), 0});
    ++it->tables;
  }
  std::string swapped;
  for (const Later& l : later) {
    absl::StrAppend(&swapped, "; ", l.tables, " ", l.kind, " tables from the run of ", l.run);
  }
  return absl::StrCat(RepoRelative(context, context.paths.profile), " (", d.name(), ", measured ",
                      d.measured_at(), swapped, ")");
}

// Where no fitted parameters come from, and why.
std::string NoParamsReason(const PredictionContext& context) {
  return context.missing_default_params.empty()
             ? "none (--params none: fitted host costs taken as 0)"
             : absl::StrCat("none (no parameters file at ", context.missing_default_params,
                            ": fitted host costs taken as 0)");
}

}  // namespace

std::string ContextSummary(const PredictionContext& context) {
  const std::string params = context.params.engines().empty()
                                 ? NoParamsReason(context)
                                 : RepoRelative(context, context.paths.params);
  return absl::StrCat("costs: profile ", DescribeProfile(context), "; fitted parameters ", params,
                      "; every command's model simulated as ", context.spec.name(), " (",
                      RepoRelative(context, context.paths.model_spec), ")");
}

PredictionContext WithEngineParams(const PredictionContext& context,
                                           const scenarios::EngineParams& params) {
  PredictionContext c = context;
  bool replaced = false;
  for (auto& e : *c.params.mutable_engines()) {
    if (e.engine() == params.engine()) {
      e = params;
      replaced = true;
    }
  }
  if (!replaced) *c.params.add_engines() = params;
  return c;
}

const scenarios::EngineParams* FindEngineParams(const scenarios::FittedParams& params,
                                                scenarios::EngineKind engine) {
  for (const auto& e : params.engines()) {
    if (e.engine() == engine) return &e;
  }
  return nullptr;
}

namespace {
constexpr char kDefaultModelSpec[] = "models/deepseek_v32.textproto";
}  // namespace

absl::StatusOr<PredictionContext> LoadPredictionContext(ContextPaths paths) {
  if (paths.repo_dir.empty()) paths.repo_dir = ".";
  const bool explicit_profile = !paths.profile.empty();
  const bool explicit_params = !paths.params.empty();
  auto in_repo = [&](const std::string& rel) { return absl::StrCat(paths.repo_dir, "/", rel); };
  if (paths.model_spec.empty()) paths.model_spec = in_repo(kDefaultModelSpec);
  if (paths.profile.empty()) paths.profile = in_repo("calibration/profiles/h200.textproto");
  if (paths.params.empty()) paths.params = in_repo("scenarios/fitted_params.textproto");

  PredictionContext c;
  ASSIGN_OR_RETURN(c.spec, models::LoadModelSpec(paths.model_spec));
  c.model_identity = c.spec.name();
  if (const std::string default_spec = in_repo(kDefaultModelSpec);
      paths.model_spec != default_spec && std::ifstream(default_spec)) {
    absl::StatusOr<models::ModelSpec> repository = models::LoadModelSpec(default_spec);
    if (repository.ok() && repository->name() == c.spec.name() &&
        !google::protobuf::util::MessageDifferencer::Equals(*repository, c.spec)) {
      c.model_identity = absl::StrCat(c.spec.name(), " as changed by ", paths.model_spec);
    }
  }
  // Without a committed profile the roofline stands in, and the header says so.
  if (!explicit_profile && !std::ifstream(paths.profile)) {
    c.missing_default_profile = paths.profile;
    paths.profile = "roofline";
  }
  if (!explicit_params && !std::ifstream(paths.params)) {
    c.missing_default_params = paths.params;
    paths.params = "none";
  }
  if (paths.profile != "roofline") {
    absl::StatusOr<calibration::Profile> profile =
        calibration::Profile::Load(paths.profile, paths.profile_gpu);
    if (!profile.ok()) {
      return absl::InvalidArgumentError(absl::StrCat("--profile: ", profile.status().message()));
    }
    c.profile = std::make_shared<const calibration::Profile>(std::move(*profile));
    c.kernel_scales = cost::ProductionKernelScales(*c.profile);
  }
  if (paths.params != "none") {
    ASSIGN_OR_RETURN(c.params, LoadFittedParams(paths.params));
  }
  c.paths = std::move(paths);
  return c;
}

scenarios::ServeContext WithModel(const models::ModelSpec& spec, scenarios::ServeContext base) {
  base.max_position_embeddings = spec.max_position_embeddings();
  base.dsa_attention = spec.has_indexer();
  return base;
}

std::string ServedModel(const scenarios::EngineConfig& engine, const models::ModelSpec& spec) {
  if (absl::EqualsIgnoreCase(engine.model(), spec.name())) return engine.model();
  return absl::StrCat(engine.model(), ", simulated as ", spec.name(), " (the model spec)");
}

WorkloadShape EngineShape(const PredictionContext& context, const PreparedRun& run) {
  WorkloadShape shape;
  shape.model = context.model_identity;
  shape.running_cap = run.setup.max_running_per_rank * run.setup.layout.attn_dp;
  shape.layout_family = LayoutFamily(run.setup.layout, run.engine.num_speculative_tokens());
  for (const auto& [kind, scale] : run.setup.predictor.kind_call_latency_scale) {
    shape.fitted_call_latency_us =
        std::max(shape.fitted_call_latency_us, scale * cost::GpuRates{}.collective_latency_us);
  }
  return shape;
}

absl::StatusOr<PreparedRun> PrepareRun(const PredictionContext& context,
                                       const std::string& serve_command,
                                       const scenarios::EnvVars& env,
                                       const scenarios::ServeContext& serve_context) {
  PreparedRun run;
  ASSIGN_OR_RETURN(run.engine, scenarios::ParseServeCommand(
                                   serve_command, env, WithModel(context.spec, serve_context)));
  const scenarios::EngineParams* found = FindEngineParams(context.params, run.engine.engine());
  scenarios::EngineParams zeros;
  zeros.set_engine(run.engine.engine());
  // The engine's own refusal comes first: it needs no parameters.
  ASSIGN_OR_RETURN(run.setup,
                   PrepareEngine(run.engine, context.spec, found ? *found : zeros));
  if (found == nullptr && context.paths.params != "none") {
    // Host costs of 0 are a prediction of another engine, not a default.
    return absl::InvalidArgumentError(absl::StrCat(
        "--params: ", context.paths.params, " has no parameters for ",
        absl::AsciiStrToLower(scenarios::EngineKind_Name(run.engine.engine())),
        " (fit them with servesim fit, or run with --params none for no fitted costs)"));
  }
  if (found == nullptr) {
    run.setup.notes.push_back(absl::StrCat("fitted parameters: ", NoParamsReason(context)));
  } else {
    run.params = *found;
    run.setup.notes.push_back(absl::StrFormat(
        "fitted parameters (%s, fitted on %d live runs): API server %.0f us/request, host %.0f "
        "us/step + %.1f us/sequence, prefill path x%.2f",
        RepoRelative(context, context.paths.params), found->fitted_on_size(),
        found->frontend_request_us(), found->step_cpu_us(), found->per_seq_cpu_us(),
        PrefillTimeScale(*found)));
  }
  auto [eager_us, eager_note] = EagerLaunch(context, run.engine, found);
  run.setup.predictor.overheads.eager_launch_us = eager_us;
  run.setup.notes.push_back(std::move(eager_note));
  return run;
}

absl::StatusOr<std::vector<serving::ClientRequest>> BuildClientRequests(
    const PredictionContext& context, const workload::BenchConfig& bench, std::string* notice,
    const workload::LiveLengths* live) {
  ASSIGN_OR_RETURN(std::vector<workload::BenchRequest> sampled,
                   workload::SampleRequests(bench, context.paths.repo_dir + "/traces", notice));
  if (live != nullptr) RETURN_IF_ERROR(workload::ApplyLiveLengths(*live, bench, sampled, notice));
  ASSIGN_OR_RETURN(std::vector<int64_t> arrivals, workload::RequestArrivalTimesNs(bench, sampled));
  const int template_tokens = context.spec.chat_template_tokens();
  std::vector<serving::ClientRequest> requests;
  requests.reserve(sampled.size());
  for (size_t i = 0; i < sampled.size(); ++i) {
    const int64_t client = sampled[i].prompt_tokens;
    requests.push_back({workload::EnginePromptTokens(bench, client, template_tokens),
                        sampled[i].output_tokens, sampled[i].max_completion_tokens,
                        sim::Nanoseconds(arrivals[i]), client});
    if (!sampled[i].prefix_node_keys.empty()) {
      // The chat template's leading tokens join the first node.
      serving::ClientRequest& r = requests.back();
      r.prefix_node_keys = sampled[i].prefix_node_keys;
      r.prefix_node_tokens = sampled[i].prefix_node_tokens;
      r.prefix_node_tokens[0] =
          workload::EngineSharedPrefixTokens(bench, r.prefix_node_tokens[0]);
    }
  }
  // A simulation takes at least one engine step per output token of its
  // longest-running request and one per token per request at concurrency 1:
  // past this many it would run for many minutes, so it is refused instead.
  constexpr int64_t kMaxOutputTokens = 50'000'000;
  int64_t outputs = 0;
  for (const serving::ClientRequest& r : requests) {
    outputs += r.output_tokens;
    if (outputs > kMaxOutputTokens) {
      return absl::InvalidArgumentError(absl::StrCat(
          "--bench: the workload asks for more than ", kMaxOutputTokens,
          " output tokens in all (", requests.size(),
          " requests); servesim simulates at most that many per run: fewer prompts or shorter "
          "outputs"));
    }
  }
  if (notice != nullptr && !requests.empty()) {
    // The same for every prompt of the workload.
    const int64_t added = workload::EnginePromptTokens(bench, 0, template_tokens);
    if (added > 0) {
      absl::StrAppend(notice, "; the engine prefills ", added,
                      " token(s) per prompt beyond the input tokens counted here (the chat "
                      "template's markers, and the BOS where the client's count leaves it "
                      "out)");
    }
  }
  return requests;
}

namespace {

// A lower bound on the engine steps the workload takes on this engine: with
// chunked prefill a step prefills at most its token budget on each DP rank
// (the larger of the chunk and the prefill-batch limit), and the longest
// reply takes a step per token. A budget of a few tokens turns every prompt
// token into a step: past the bound the run would take many minutes (about
// 3 us per step), so it is refused as the output-token bound is.
absl::Status CheckEngineStepBound(const scenarios::EngineConfig& engine,
                                  const std::vector<serving::ClientRequest>& requests) {
  constexpr double kMaxSteps = 50e6;
  double prompt_tokens = 0;
  int64_t longest_reply = 0;
  for (const serving::ClientRequest& r : requests) {
    prompt_tokens += static_cast<double>(r.prompt_tokens);
    longest_reply = std::max(longest_reply, r.output_tokens);
  }
  const int64_t budget =
      std::max<int64_t>(1, std::max(engine.max_num_batched_tokens(), engine.max_prefill_tokens()));
  const int ranks = std::max(1, engine.dp());
  const double prefill_steps =
      engine.chunked_prefill() ? prompt_tokens / (static_cast<double>(budget) * ranks) : 0;
  if (prefill_steps + static_cast<double>(longest_reply) <= kMaxSteps) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrFormat(
      "the workload takes at least %.0f engine steps on this engine (%.0f prompt tokens at %d "
      "per step on %d DP rank(s)); servesim simulates at most %.0f per run: a larger token "
      "budget, fewer prompts or shorter ones",
      prefill_steps + static_cast<double>(longest_reply), prompt_tokens, budget, ranks, kMaxSteps));
}

}  // namespace

std::unique_ptr<cost::OpCost> MakeOpCost(const PredictionContext& context, bool production_factors,
                                         const cost::ProfileOpCost** profile_cost) {
  *profile_cost = nullptr;
  if (!context.profile) return std::make_unique<cost::RooflineOpCost>(cost::GpuRates{});
  auto priced = std::make_unique<cost::ProfileOpCost>(
      *context.profile, cost::GpuRates{},
      production_factors ? ProductionScalePairs(context)
                         : std::vector<std::pair<std::string, double>>{});
  *profile_cost = priced.get();
  return priced;
}

absl::StatusOr<serving::SimulationResult> SimulatePrepared(const PredictionContext& context,
                                                           const PreparedRun& run,
                                                           const serving::SimulationInput& input,
                                                           std::set<std::string>* fallbacks) {
  RETURN_IF_ERROR(CheckEngineStepBound(run.engine, input.requests));
  const cost::ProfileOpCost* profile_cost = nullptr;
  cost::StepPredictor predictor(run.setup.predictor,
                                MakeOpCost(context, /*production_factors=*/true, &profile_cost));
  absl::StatusOr<serving::SimulationResult> result =
      serving::RunServingSimulation(run.setup.topology, predictor, input);
  if (fallbacks != nullptr && profile_cost != nullptr) *fallbacks = profile_cost->fallbacks();
  return result;
}

absl::StatusOr<PreparedRun> PrepareRunForBench(const PredictionContext& context,
                                               const std::string& serve_command,
                                               const scenarios::EnvVars& env,
                                               const workload::BenchConfig& bench,
                                               double mtp_mean_accepted_drafts) {
  scenarios::ServeContext serve_context;
  serve_context.mtp_mean_accepted_drafts = mtp_mean_accepted_drafts;
  // The dataset decides the MTP acceptance default (chat text accepts more
  // drafts than random tokens); the chat template follows --backend.
  serve_context.chat_workload = bench.dataset_name != workload::DatasetName::kRandom;
  serve_context.request_top_p = bench.top_p;
  serve_context.request_temperature = bench.temperature;
  ASSIGN_OR_RETURN(PreparedRun run, PrepareRun(context, serve_command, env, serve_context));
  if (mtp_mean_accepted_drafts >= 0 && run.engine.num_speculative_tokens() == 0) {
    return absl::InvalidArgumentError(
        "--mtp-acceptance: the serve command runs no speculative decoding (MTP)");
  }
  // A request naming a model the server does not serve fails (vLLM: 404),
  // every one of them: no figure of the run would mean anything.
  const std::string& asked = bench.served_model_name.empty() ? bench.model : bench.served_model_name;
  const auto& served = run.engine.served_model_names();
  if (!asked.empty() && !served.empty() &&
      std::find(served.begin(), served.end(), asked) == served.end()) {
    return absl::FailedPreconditionError(absl::StrCat(
        "every request would fail: the server answers 404 \"The model `", asked,
        "` does not exist.\" (it serves ", absl::StrJoin(served, ", "),
        "; vllm bench serve sends --served-model-name, else --model)"));
  }
  return run;
}

serving::SimulationInput ClientSimulationInput(const workload::BenchConfig& bench) {
  serving::SimulationInput input;
  input.max_concurrency = bench.max_concurrency;
  input.chat_endpoint = workload::SendsChatMessages(bench);
  return input;
}

std::string EveryRequestRejected(int64_t requests, const std::string& first_reason) {
  return absl::StrCat("every request fails: the engine rejects each of the ", requests,
                      ", e.g. \"", first_reason, "\"");
}

namespace {

// The engine turned every request away (each too long for it): vllm bench
// serve's initial test request fails with the first of them, or, where that
// test is skipped, every figure is zero ("All requests failed") [U: which,
// for v0.13]. Either way the run measures nothing: refused, with the reason.
absl::Status CheckSomeRequestAccepted(const serving::SimulationInput& input,
                                      const serving::SimulationResult& simulation) {
  if (input.requests.empty() ||
      simulation.rejected != static_cast<int64_t>(input.requests.size())) {
    return absl::OkStatus();
  }
  return absl::FailedPreconditionError(EveryRequestRejected(
      static_cast<int64_t>(input.requests.size()), simulation.first_reject_reason));
}

// vllm bench serve's figures of the simulated requests, at the client's
// --metric-percentiles and --goodput.
metrics::BenchMetrics ComputeClientMetrics(const workload::BenchConfig& bench,
                                           const serving::SimulationResult& simulation) {
  metrics::MetricOptions options;
  options.percentiles = bench.metric_percentiles;
  options.goodput_slo_ms = bench.goodput_slo_ms;
  return metrics::ComputeBenchMetrics(simulation.records, simulation.duration, options);
}

// vllm's result dict: label, model_id, tokenizer_id, num_prompts, then
// --metadata (a key it already holds is replaced in place), then the
// traffic keys request_rate, burstiness and max_concurrency (after the
// metadata, so they win). tokenizer_id is --tokenizer,
// else the model. num_prompts: the requests replayed (a trace without
// --num-prompts is replayed whole).
std::vector<std::pair<std::string, std::string>> ResultSetupJson(
    const workload::BenchConfig& bench, const std::string& model_id, size_t num_prompts) {
  std::vector<std::pair<std::string, std::string>> setup;
  auto set = [&setup](const std::string& key, std::string value) {
    for (auto& [k, v] : setup) {
      if (k == key) {
        v = std::move(value);
        return;
      }
    }
    setup.emplace_back(key, std::move(value));
  };
  set("label", bench.label ? metrics::JsonString(*bench.label) : "null");
  set("model_id", metrics::JsonString(model_id));
  set("tokenizer_id", metrics::JsonString(bench.tokenizer.empty() ? model_id : bench.tokenizer));
  set("num_prompts", absl::StrCat(num_prompts));
  for (const auto& [key, value] : bench.metadata) set(key, metrics::JsonString(value));
  for (auto& [key, value] :
       metrics::TrafficSetupJson(bench.request_rate, bench.burstiness, bench.max_concurrency)) {
    set(key, std::move(value));
  }
  // servesim's own dataset: its clock's scale, which no vllm key holds.
  if (bench.dataset_name == workload::DatasetName::kTrace && bench.trace_time_scale_given) {
    set("trace_time_scale", metrics::JsonNumber(bench.trace_time_scale));
  }
  if (bench.ramp_up.has_value()) {
    // vllm's rps_change_events (wall-clock ISO times) are left out, as its date is.
    set("ramp_up_strategy",
        metrics::JsonString(std::string(workload::RampUpShapeName(bench.ramp_up->shape))));
    set("ramp_up_start_rps", absl::StrCat(bench.ramp_up->start_rps));
    set("ramp_up_end_rps", absl::StrCat(bench.ramp_up->end_rps));
  }
  return setup;
}

// What the result block and the saved JSON print, as the client was asked.
metrics::ReportOptions ClientReportOptions(const workload::BenchConfig& bench,
                                           const std::string& model_id, size_t num_prompts) {
  metrics::ReportOptions report;
  report.max_concurrency = bench.max_concurrency;
  report.request_rate = bench.request_rate;
  report.percentile_metrics = bench.percentile_metrics;
  report.setup_json = ResultSetupJson(bench, model_id, num_prompts);
  return report;
}

// The header's lines on the measured profile the ops were priced from, or
// the roofline that stood in for it.
std::vector<std::string> ProfileLines(const PredictionContext& context,
                                      const std::set<std::string>& fallbacks) {
  std::vector<std::string> lines = {absl::StrCat("profile: ", DescribeProfile(context))};
  if (!context.profile) return lines;
  for (const cost::KernelScale& k : context.kernel_scales) {
    if (k.dsa_only && !context.spec.has_indexer()) continue;
    lines.push_back(absl::StrCat("production-kernel factor: ", k.derivation));
  }
  if (!fallbacks.empty()) {
    lines.push_back(absl::StrCat("roofline fallbacks: ", absl::StrJoin(fallbacks, " ")));
  }
  return lines;
}

// The header: the engine and what servesim made of its configuration, the
// profile, the dataset and the simulation's own counts.
std::vector<std::string> HeaderLines(const PredictionContext& context, const PreparedRun& run,
                                     const std::set<std::string>& fallbacks,
                                     const std::string& dataset_notice,
                                     const serving::SimulationResult& simulation,
                                     const std::vector<Extrapolation>& extrapolations) {
  const scenarios::EngineConfig& e = run.engine;
  std::vector<std::string> header;
  header.push_back(
      absl::StrCat("engine: ", e.engine_version(), " serving ", ServedModel(e, context.spec)));
  for (const std::string& n : run.setup.notes) header.push_back(n);
  if (e.num_speculative_tokens() > 0) {
    header.push_back(absl::StrCat("speculative: ", e.speculative_method(), " with ",
                                  e.num_speculative_tokens(), " draft token(s), ",
                                  e.mean_accepted_drafts(), " accepted per step on average"));
  }
  if (!e.defaults_applied().empty()) {
    header.push_back(absl::StrCat("defaults: ", absl::StrJoin(e.defaults_applied(), "; ")));
  }
  if (!e.ignored_env().empty()) {
    header.push_back(absl::StrCat("environment without effect on performance: ",
                                  absl::StrJoin(e.ignored_env(), " ")));
  }
  if (!e.ignored_flags().empty()) {
    header.push_back(absl::StrCat("flags without effect on performance: ",
                                  absl::StrJoin(e.ignored_flags(), " ")));
  }
  for (std::string& line : ProfileLines(context, fallbacks)) header.push_back(std::move(line));
  if (!dataset_notice.empty()) header.push_back(absl::StrCat("dataset: ", dataset_notice));
  if (simulation.rejected > 0) {
    header.push_back(absl::StrCat("rejected by the engine: ", simulation.rejected,
                                  " request(s), e.g. \"", simulation.first_reject_reason, "\""));
  }
  if (simulation.output_capped > 0) {
    header.push_back(absl::StrCat("max_tokens shortened by the engine: ", simulation.output_capped,
                                  " request(s) ", run.setup.topology.output_cap_rule));
  }
  header.push_back(absl::StrCat("simulated: ", simulation.steps, " iterations, ",
                                simulation.preempted_or_retracted,
                                " preemption(s)/retraction(s)"));
  for (const Extrapolation& e : extrapolations) header.push_back(e.line);
  return header;
}

// vllm bench serve's lines before the run, its values as Python prints them.
std::vector<std::string> ClientLines(const workload::BenchConfig& bench,
                                     const std::vector<serving::ClientRequest>& requests) {
  std::vector<std::string> lines;
  if (const auto& ramp = bench.ramp_up; ramp.has_value()) {
    lines.push_back(absl::StrCat("Traffic ramp-up strategy: ",
                                 std::string(workload::RampUpShapeName(ramp->shape)), "."));
    lines.push_back(absl::StrCat("Will increase RPS from ", ramp->start_rps, " to ",
                                 ramp->end_rps, " RPS over the duration of the benchmark."));
  } else if (bench.dataset_name == workload::DatasetName::kTrace && !bench.request_rate_given &&
             std::any_of(requests.begin(), requests.end(),
                         [](const serving::ClientRequest& r) { return r.arrival.ns() > 0; })) {
    // servesim's own dataset: the trace's clock, which vllm has no line for.
    // (A lengths table without times sends every request at once: rate inf.)
    lines.push_back(
        absl::StrCat("Traffic request rate: the trace's arrival times",
                     bench.trace_time_scale_given
                         ? absl::StrCat(" x ", metrics::JsonNumber(bench.trace_time_scale),
                                        " (servesim, --trace-time-scale)")
                         : std::string(" (servesim)")));
  } else {
    lines.push_back(absl::StrCat("Traffic request rate: ",
                                 std::isfinite(bench.request_rate)
                                     ? metrics::JsonNumber(bench.request_rate)
                                     : std::string("inf")));
  }
  lines.push_back(absl::StrCat("Burstiness factor: ", metrics::JsonNumber(bench.burstiness),
                               bench.burstiness == 1.0 ? " (Poisson process)"
                                                       : " (Gamma distribution)"));
  lines.push_back(absl::StrCat(
      "Maximum request concurrency: ",
      bench.max_concurrency ? absl::StrCat(*bench.max_concurrency) : std::string("None")));
  return lines;
}

}  // namespace

absl::StatusOr<Prediction> Predict(const PredictionContext& context, const RunRequest& request) {
  Prediction p;
  ASSIGN_OR_RETURN(p.bench, workload::ParseBenchCommand(request.bench_command));
  ASSIGN_OR_RETURN(PreparedRun run,
                   PrepareRunForBench(context, request.serve_command, request.env, p.bench,
                                      request.mtp_mean_accepted_drafts));
  p.engine = run.engine;

  std::string notice;
  serving::SimulationInput input = ClientSimulationInput(p.bench);
  input.record_steps = request.record_steps;
  ASSIGN_OR_RETURN(input.requests,
                   BuildClientRequests(context, p.bench, &notice, &request.live_lengths));

  std::set<std::string> fallbacks;
  ASSIGN_OR_RETURN(p.simulation, SimulatePrepared(context, run, input, &fallbacks));
  RETURN_IF_ERROR(CheckSomeRequestAccepted(input, p.simulation));

  p.metrics = ComputeClientMetrics(p.bench, p.simulation);
  // model_id: --model, else the name the server reports (the served model).
  p.model_id = p.bench.model.empty() ? p.engine.model() : p.bench.model;
  p.report = ClientReportOptions(p.bench, p.model_id, input.requests.size());
  p.shape = EngineShape(context, run);
  for (const metrics::RequestRecord& r : p.simulation.records) {
    p.shape.AddRequest(r.prompt_tokens, r.start, r.success);
  }
  p.shape.peak_concurrency = p.metrics.max_concurrent_requests;
  if (run.params.has_value()) p.extrapolations = ExtrapolationNotes(*run.params, p.shape);
  p.header = HeaderLines(context, run, fallbacks, notice, p.simulation, p.extrapolations);
  p.client_lines = ClientLines(p.bench, input.requests);
  return p;
}

}  // namespace servesim::runner
