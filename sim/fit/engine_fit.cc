#include "sim/fit/engine_fit.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <mutex>
#include <set>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "base/status_macros.h"
#include "sim/fit/multi_start.h"
#include "sim/fit/validation.h"

namespace servesim::fit {
namespace {

// Parameters are fitted in log space, within physical bounds (microseconds):
// an iteration's host work between 10 us and 0.2 s, a sequence's between
// 0.01 and 150 us (at ~1000 running requests every live TP8 run's median
// ITL, 64 ms on SGLang, 82 on vLLM, 142 on TensorRT-LLM, leaves no more per
// sequence even were the step nothing else), the API server's
// work per request between 10 us and 5 ms (tokenising a chat prompt takes
// well under 1 ms; docs/fitting.md), the prefill path and a backend's time
// between 0.5x / 0.2x and 10x the measured kernels' (1x where a backend's op
// is priced at a measured hardware ceiling). The host time per kernel launch
// outside CUDA graphs is not fitted: the profile measures it (host_launch).
// The screen that picks half the fit's starts spreads over a box of its
// own (the base parameters' only), not over the bounds: a bound narrowed
// where the fit does not reach it then leaves the fit as it was.
struct ParamSpec {
  std::string name;
  double start, lower, upper;
  double screen_lower = 1, screen_upper = 1;
};

// Positions of the per-engine parameters in the fit's vector; backend factors
// follow them. The host costs come first, before kPrefillTimeScale.
enum BaseParam : size_t {
  kStepCpu,
  kPerSeqCpu,
  kFrontendRequest,
  kPrefillTimeScale,
  kNumBaseParams,
};

std::vector<ParamSpec> BaseParams() {
  return {{"step_cpu_us", 1000, 10, 2e5, 10, 2e5},
          {"per_seq_cpu_us", 20, 0.01, 150, 0.01, 2000},
          {"frontend_request_us", 1000, 10, 5000, 10, 5000},
          {"prefill_time_scale", 1, 0.5, 10, 0.5, 10}};
}

// The parameters `specs` name, at `values` (natural units, in specs' order:
// the base parameters, then one factor per backend).
scenarios::EngineParams ParamsAt(scenarios::EngineKind engine, const std::vector<ParamSpec>& specs,
                                 const std::vector<double>& values) {
  scenarios::EngineParams p;
  p.set_engine(engine);
  p.set_step_cpu_us(values[kStepCpu]);
  p.set_per_seq_cpu_us(values[kPerSeqCpu]);
  p.set_frontend_request_us(values[kFrontendRequest]);
  p.set_prefill_time_scale(values[kPrefillTimeScale]);
  for (size_t i = kNumBaseParams; i < specs.size(); ++i) {
    scenarios::BackendFactor* f = p.add_backend_factors();
    f->set_backend(specs[i].name);
    f->set_time_scale(values[i]);
  }
  return p;
}

// The robust loss's scale, a 20 % error: above the live runs' own 14 %
// run-to-run spread, well below the rows no mechanism explains (SGLang TP8's
// decode stalls, TensorRT-LLM's context phase), whose pull it caps.
constexpr double kRobustScale = 0.2;

// Only the layout and the engine are read from these parses: no workload.
scenarios::ServeContext ModelServeContext(const runner::PredictionContext& context) {
  return runner::WithModel(context.spec);
}

}  // namespace

double RobustLoss(double squared_log_error) {
  const double c2 = kRobustScale * kRobustScale;
  return 2.0 * c2 * (std::sqrt(1.0 + squared_log_error / c2) - 1.0);
}

double ScanForMinimum(const std::function<double(double)>& loss, double current, double lower,
                      double upper, int points) {
  double best = current, best_loss = loss(current);
  for (int k = 0; k < points; ++k) {
    const double x = points > 1 ? lower + (upper - lower) * k / (points - 1) : lower;
    const double l = loss(x);
    if (l < best_loss) {
      best_loss = l;
      best = x;
    }
  }
  return best;
}

absl::StatusOr<bool> FactorMovesPredictions(const runner::PredictionContext& context,
                                            scenarios::EngineKind engine,
                                            const std::vector<LiveRun>& runs,
                                            const std::string& backend, double lower,
                                            double upper) {
  std::vector<ParamSpec> specs = BaseParams();
  specs.push_back({backend, 1.0, lower, upper});
  std::vector<double> values;
  for (const ParamSpec& s : specs) values.push_back(s.start);
  auto predictions = [&](double time_scale) -> absl::StatusOr<std::vector<CaseResult>> {
    values.back() = time_scale;
    const runner::PredictionContext c =
        runner::WithEngineParams(context, ParamsAt(engine, specs, values));
    std::vector<CaseResult> out;
    for (const LiveRun& r : runs) {
      ASSIGN_OR_RETURN(CaseResult result, ValidateRun(c, r));
      out.push_back(std::move(result));
    }
    return out;
  };
  ASSIGN_OR_RETURN(std::vector<CaseResult> at_lower, predictions(lower));
  ASSIGN_OR_RETURN(std::vector<CaseResult> at_upper, predictions(upper));
  for (size_t i = 0; i < at_lower.size(); ++i) {
    if (at_lower[i].predicted != at_upper[i].predicted) return true;
  }
  return false;
}

// Every engine's four figures, then the p99 ITL of the engines whose prefill
// chunks carry the running decodes.
const std::vector<std::string>& AllFittedMetrics() {
  static const auto* kKeys = new std::vector<std::string>{
      "total_token_throughput", "mean_ttft_ms", "mean_tpot_ms", "median_itl_ms", "p99_itl_ms"};
  return *kKeys;
}

const std::vector<std::string>& FittedMetrics(scenarios::EngineKind engine) {
  // SGLang runs a prefill batch as a step of its own (mixed chunk is off by
  // default) and its decodes wait through it, so its p99 gap spans prefill
  // batches and whatever stalls a run has: SGLang TP8's, which no modelled
  // mechanism gives (p99 ITL 3 s live), drove its per-sequence cost onto
  // the 150 us ceiling when fitted.
  static const auto* kFourFigures =
      new std::vector<std::string>(AllFittedMetrics().begin(), AllFittedMetrics().begin() + 4);
  return engine == scenarios::SGLANG ? *kFourFigures : AllFittedMetrics();
}

absl::StatusOr<std::vector<LiveRun>> RunsOfEngine(const runner::PredictionContext& context,
                                                  const std::vector<LiveRun>& runs,
                                                  scenarios::EngineKind engine) {
  std::vector<LiveRun> out;
  for (const LiveRun& r : runs) {
    if (r.expected_failure) continue;
    absl::StatusOr<scenarios::EngineConfig> c =
        scenarios::ParseServeCommand(r.serve_command, r.env, ModelServeContext(context));
    if (!c.ok()) {
      if (c.status().code() == absl::StatusCode::kFailedPrecondition) continue;
      return absl::InvalidArgumentError(absl::StrCat("case ", r.name, ": ", c.status().message()));
    }
    if (c->engine() == engine) out.push_back(r);
  }
  (void)context;
  return out;
}

absl::StatusOr<scenarios::FitCoverage> CoverageOf(const runner::PredictionContext& context,
                                                  const std::vector<LiveRun>& runs) {
  scenarios::FitCoverage coverage;
  coverage.set_only_bursts(true);
  std::set<std::string> layouts;  // sorted: the file is the same whatever the runs' order
  bool first = true;
  for (const LiveRun& r : runs) {
    ASSIGN_OR_RETURN(CaseResult result, ValidateRun(context, r));
    if (result.refused || result.not_modelled) continue;
    const runner::WorkloadShape& shape = result.shape;
    const auto running = static_cast<int64_t>(shape.Running());
    const auto peak = static_cast<int64_t>(shape.peak_concurrency);
    coverage.set_model(shape.model);
    coverage.set_max_prompt_tokens(
        std::max(coverage.max_prompt_tokens(), shape.longest_prompt_tokens));
    coverage.set_min_peak_concurrency(
        first ? running : std::min(coverage.min_peak_concurrency(), running));
    coverage.set_max_peak_concurrency(std::max(coverage.max_peak_concurrency(), peak));
    coverage.set_only_bursts(coverage.only_bursts() && shape.all_sent_at_start);
    layouts.insert(shape.layout_family);
    first = false;
  }
  for (const std::string& layout : layouts) coverage.add_layouts(layout);
  return coverage;
}

absl::StatusOr<FitResiduals> ResidualsAt(const runner::PredictionContext& context,
                                         const std::vector<LiveRun>& runs,
                                         const scenarios::EngineParams& params) {
  const runner::PredictionContext c = runner::WithEngineParams(context, params);
  FitResiduals out;
  for (const LiveRun& r : runs) {
    ASSIGN_OR_RETURN(CaseResult result, ValidateRun(c, r));
    if (result.refused || result.not_modelled) {  // a fit must not make a live run refuse
      return FitResiduals{.robust_loss = kRefusedLoss};
    }
    for (const std::string& key : FittedMetrics(params.engine())) {
      if (!r.measured.count(key) || r.measured.at(key) <= 0) continue;
      const double e = std::log(result.predicted.at(key) / r.measured.at(key));
      out.robust_loss += RobustLoss(e * e);
      out.squared_sum += e * e;
      ++out.count;
    }
  }
  return out;
}

namespace {

// A run the fit could not use: one with none of the engine's fitted figures
// adds nothing to the loss (alone, the fit would return its starting
// values), and a non-finite figure would make every loss NaN or infinite.
absl::Status CheckRunsCanBeFitted(const std::vector<LiveRun>& runs, scenarios::EngineKind engine) {
  const std::vector<std::string>& figures = FittedMetrics(engine);
  for (const LiveRun& r : runs) {
    if (std::none_of(figures.begin(), figures.end(),
                     [&](const std::string& key) { return r.measured.count(key) > 0; })) {
      return absl::InvalidArgumentError(
          absl::StrCat("case ", r.name, ": none of the figures fit matches for ",
                       absl::AsciiStrToLower(scenarios::EngineKind_Name(engine)), " (",
                       absl::StrJoin(figures, ", "), ") is measured"));
    }
    for (const std::string& key : figures) {
      if (auto it = r.measured.find(key); it != r.measured.end() && !std::isfinite(it->second)) {
        return absl::InvalidArgumentError(
            absl::StrCat("case ", r.name, ": ", key, ": not a finite number: ", it->second));
      }
    }
  }
  return absl::OkStatus();
}

// The non-default kernel backends the runs exercise: one factor each, fitted
// where it moves its runs' predictions.
struct BackendFactors {
  std::vector<ParamSpec> fitted;
  std::vector<std::string> not_fitted;
  std::map<std::string, std::vector<LiveRun>> users;  // the runs of each backend
};

absl::StatusOr<BackendFactors> FindBackendFactors(const runner::PredictionContext& context,
                                                  scenarios::EngineKind engine,
                                                  const std::vector<LiveRun>& runs) {
  BackendFactors out;
  std::map<std::string, std::pair<double, double>> bounds;  // name -> the factor's bounds
  for (const LiveRun& r : runs) {
    ASSIGN_OR_RETURN(
        scenarios::EngineConfig c,
        scenarios::ParseServeCommand(r.serve_command, r.env, ModelServeContext(context)));
    // The layout, for the paths it selects; the costs do not matter here.
    ASSIGN_OR_RETURN(runner::EngineSetup setup,
                     runner::PrepareEngine(c, context.spec, scenarios::EngineParams{}));
    for (const runner::BackendChoice& b : runner::NonDefaultBackends(c, setup.layout)) {
      bounds[b.name] = {b.min_time_scale, b.max_time_scale};
      out.users[b.name].push_back(r);
    }
  }
  // A factor that moves none of its runs' predictions between its bounds
  // cannot be fitted: the optimizer would leave it wherever its path
  // wandered, and it would then scale predictions the runs say nothing
  // about (SGLang's prefill backends: ShareGPT prompts take dense MHA).
  for (const auto& [name, range] : bounds) {
    const auto [lower, upper] = range;
    ASSIGN_OR_RETURN(bool moves,
                     FactorMovesPredictions(context, engine, out.users[name], name, lower, upper));
    if (moves) {
      out.fitted.push_back({name, 1.0, lower, upper});
    } else {
      out.not_fitted.push_back(name);
    }
  }
  return out;
}

// Eight local searches share the evaluation budget; the best end point
// wins. One alone stalls in poor local minima of this piecewise objective,
// and where a search starts decides which minimum it finds (differing
// little in loss, much in how the host work splits). Four start at fixed
// points: the host costs at nominal, x0.1 and x10, and cheap host work with
// a slow prefill path, the other way to explain a long admission than a
// slow API server. Four start at the lowest points of a screen, a Halton
// sample of the host costs and prefill factor over their screen box.
MultiStartSearch SearchFrom(const std::vector<ParamSpec>& specs, const std::vector<double>& start,
                            const EngineFitOptions& options) {
  struct Start {
    double host_factor, prefill_time_scale;
  };
  constexpr Start kFixedStarts[] = {{1, 1}, {0.1, 1}, {10, 1}, {0.1, 4}};
  constexpr int kScreenDivisor = 32;  // the screen takes a 32nd of the budget
  MultiStartSearch search;
  for (const Start& s : kFixedStarts) {
    std::vector<double> from = start;
    for (size_t i = 0; i < kPrefillTimeScale; ++i) from[i] += std::log(s.host_factor);
    from[kPrefillTimeScale] = std::log(s.prefill_time_scale);
    search.fixed_starts.push_back(std::move(from));
  }
  search.screen_base = start;  // backend factors at 1
  for (size_t i = 0; i < kNumBaseParams; ++i) {
    search.screen_lower.push_back(std::log(specs[i].screen_lower));
    search.screen_upper.push_back(std::log(specs[i].screen_upper));
  }
  search.screen_points = options.max_evaluations / kScreenDivisor;
  search.screened_starts = 4;
  search.polished_ends = 3;
  search.evaluations_per_search =
      options.max_evaluations /
      static_cast<int>(search.fixed_starts.size() + search.screened_starts + search.polished_ends);
  search.max_polishes = 4;
  search.tolerance = 1e-4;  // of the robust loss, ~0.1 % of its value
  search.threads = options.threads;
  return search;
}

}  // namespace

absl::StatusOr<scenarios::EngineParams> FitEngine(const runner::PredictionContext& context,
                                                  const std::vector<LiveRun>& runs,
                                                  scenarios::EngineKind engine,
                                                  const EngineFitOptions& options) {
  if (runs.empty()) return absl::InvalidArgumentError("no runs to fit");
  RETURN_IF_ERROR(CheckRunsCanBeFitted(runs, engine));
  std::vector<ParamSpec> specs = BaseParams();
  ASSIGN_OR_RETURN(BackendFactors backends, FindBackendFactors(context, engine, runs));
  specs.insert(specs.end(), backends.fitted.begin(), backends.fitted.end());

  auto to_params = [&](const std::vector<double>& theta) {
    std::vector<double> values;
    for (double t : theta) values.push_back(std::exp(t));
    return ParamsAt(engine, specs, values);
  };
  // Called from the search's threads. Of several failures the one with the
  // smallest message is kept, so which is reported does not depend on their
  // order.
  std::mutex failure_mutex;
  absl::Status failure = absl::OkStatus();
  auto loss_on = [&](const std::vector<double>& theta, const std::vector<LiveRun>& on) {
    absl::StatusOr<FitResiduals> r = ResidualsAt(context, on, to_params(theta));
    if (!r.ok()) {
      std::lock_guard<std::mutex> lock(failure_mutex);
      if (failure.ok() || r.status().ToString() < failure.ToString()) failure = r.status();
      return kRefusedLoss;
    }
    return r->robust_loss;
  };
  auto objective = [&](const std::vector<double>& theta) { return loss_on(theta, runs); };
  std::vector<double> start, step, lower, upper;
  for (const ParamSpec& s : specs) {
    start.push_back(std::log(s.start));
    step.push_back(1.0);  // a factor of e
    lower.push_back(std::log(s.lower));
    upper.push_back(std::log(s.upper));
  }
  NelderMeadResult best =
      MinimizeFromManyStarts(objective, SearchFrom(specs, start, options), step, lower, upper);
  // A backend factor moves only the runs that use the backend, and often
  // not at all near its start (a step bound by host work hides a slower
  // kernel until it exceeds the host time), a plateau where the simplex
  // collapses. Each factor is therefore settled last by a scan of its whole
  // range on its own runs, the shared parameters held at the best point.
  for (size_t i = kNumBaseParams; i < specs.size(); ++i) {
    std::vector<double> x = best.x;
    best.x[i] = ScanForMinimum(
        [&](double value) {
          x[i] = value;
          return loss_on(x, backends.users[specs[i].name]);
        },
        best.x[i], lower[i], upper[i], /*points=*/25);
  }
  if (!failure.ok()) return failure;
  scenarios::EngineParams params = to_params(best.x);
  for (const std::string& name : backends.not_fitted) params.add_not_fitted(name);
  for (const LiveRun& r : runs) params.add_fitted_on(r.name);
  ASSIGN_OR_RETURN(const FitResiduals at_best, ResidualsAt(context, runs, to_params(best.x)));
  params.set_rms_log_error(at_best.count ? std::sqrt(at_best.squared_sum / at_best.count) : 0);
  ASSIGN_OR_RETURN(*params.mutable_coverage(),
                   CoverageOf(runner::WithEngineParams(context, params), runs));
  return params;
}

std::string FormatFoldParameters(const scenarios::FoldFits& folds) {
  std::string out = absl::StrFormat("%-7s %-28s %9s %11s %8s %9s %8s  %s\n", "engine", "held out",
                                    "step ms", "per-seq us", "API us", "prefill", "rms log",
                                    "backend factors");
  for (const scenarios::FoldFit& f : folds.folds()) {
    const scenarios::EngineParams& p = f.params();
    std::vector<std::string> factors;
    for (const scenarios::BackendFactor& b : p.backend_factors()) {
      factors.push_back(absl::StrFormat("%s x%.2f", b.backend(), b.time_scale()));
    }
    // A factor whose value moves none of the fold's runs is not fitted and
    // is named: the fold predicts with it at 1.
    for (const std::string& name : p.not_fitted()) factors.push_back(name + " not fitted");
    absl::StrAppend(
        &out, absl::StrFormat("%-7s %-28s %9.2f %11.1f %8.1f %8.2fx %8.3f  %s\n",
                              absl::AsciiStrToLower(scenarios::EngineKind_Name(p.engine())),
                              f.held_out().empty() ? "- (fit on every run)" : f.held_out(),
                              p.step_cpu_us() / 1000.0, p.per_seq_cpu_us(),
                              p.frontend_request_us(), p.prefill_time_scale(), p.rms_log_error(),
                              factors.empty() ? "-" : absl::StrJoin(factors, ", ")));
  }
  return out;
}

absl::StatusOr<std::string> FormatSearchReach(const runner::PredictionContext& context,
                                              const std::vector<LiveRun>& runs,
                                              const scenarios::FoldFits& folds) {
  std::string out = absl::StrFormat("%-7s %-28s %10s %10s  %s\n", "engine", "held out", "own point",
                                    "best other", "at the point of the fit without");
  for (const scenarios::FoldFit& f : folds.folds()) {
    const scenarios::EngineParams& own = f.params();
    std::vector<LiveRun> on;
    for (const std::string& name : own.fitted_on()) {
      auto it =
          std::find_if(runs.begin(), runs.end(), [&](const LiveRun& r) { return r.name == name; });
      if (it == runs.end()) {
        return absl::InvalidArgumentError(
            absl::StrCat("a fit was made on run ", name, ", which the runs do not hold"));
      }
      on.push_back(*it);
    }
    ASSIGN_OR_RETURN(FitResiduals at_own, ResidualsAt(context, on, own));
    double best = std::numeric_limits<double>::infinity();
    std::string best_name = "-";
    for (const scenarios::FoldFit& g : folds.folds()) {
      if (&g == &f || g.params().engine() != own.engine()) continue;
      ASSIGN_OR_RETURN(FitResiduals at_other, ResidualsAt(context, on, g.params()));
      if (at_other.robust_loss < best) {
        best = at_other.robust_loss;
        best_name = g.held_out().empty() ? "(every run)" : g.held_out();
      }
    }
    absl::StrAppend(
        &out,
        absl::StrFormat("%-7s %-28s %10.4f %10.4f  %s%s\n",
                        absl::AsciiStrToLower(scenarios::EngineKind_Name(own.engine())),
                        f.held_out().empty() ? "- (fit on every run)" : f.held_out(),
                        at_own.robust_loss, best, best_name,
                        best < at_own.robust_loss ? "  (lower: the search stopped short)" : ""));
  }
  return out;
}

}  // namespace servesim::fit
