#include "sim/planning/plan.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>
#include <optional>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "base/byte_order_mark.h"
#include "base/control_byte.h"
#include "base/decimal.h"
#include "base/status_macros.h"
#include "sim/runner/fit_coverage.h"

namespace servesim::planning {
namespace {

// PlanOptions::slowdown on a prepared candidate: its steps and its API
// server's work per request take (1 + slowdown) x as long.
void ApplySlowdown(double slowdown, runner::PreparedRun& run) {
  run.setup.predictor.step_time_scale *= 1.0 + slowdown;
  run.setup.topology.frontend_per_request = sim::Microseconds(
      run.setup.topology.frontend_per_request.ns() / 1e3 * (1.0 + slowdown));
}

std::string Shortest(double v) {
  // Plain digits as a limit is written ("100000", not "1e+05"); exponents
  // only past what anyone writes out.
  char buf[64];
  auto [end, ec] = std::fabs(v) < 1e15
                       ? std::to_chars(buf, buf + sizeof(buf), v, std::chars_format::fixed)
                       : std::to_chars(buf, buf + sizeof(buf), v);
  return ec == std::errc() ? std::string(buf, end) : absl::StrCat(v);
}

std::string Failures(const NodeTrial& t) {
  std::vector<std::string> parts;
  for (const SloCheck& c : t.checks) {
    if (!c.ok()) parts.push_back(DescribeCheck(c));
  }
  if (!t.first_error.empty()) {
    // SearchFewestNodes stops at the first trial with failed requests.
    parts.push_back(absl::StrCat("a failed request: ", t.first_error,
                                 " (a request the engine rejects fails at any node count: the "
                                 "search stopped here)"));
  }
  return absl::StrJoin(parts, "; ");
}

// The leave-one-out fit whose figures a trial reports.
std::string FitName(const NodeTrial& t) {
  return t.binding_fit.empty() ? "the fit on every run"
                               : absl::StrCat("the fit without ", t.binding_fit);
}

// With --spread, which fit a trial's figures are: " (the fit without X)".
std::string BindingFit(const PlanOptions& options, const NodeTrial& t) {
  return options.spread_fits == nullptr ? "" : absl::StrCat(" (", FitName(t), ")");
}

std::string Trials(const CandidateResult& c) {
  std::vector<std::string> parts;
  for (const NodeTrial& t : c.trials) parts.push_back(absl::StrCat(t.nodes, t.meets ? " ok" : " fail"));
  return absl::StrJoin(parts, ", ");
}

// Every request of the replay is scored, its start and drain included, as
// vllm bench serve scores them. When the arrivals span only a few request
// lifetimes the load never settles, and a higher rate with the same count
// is judged on a shorter transient: the answer grows with --num-prompts at
// the same load (an audit found 6, 8 and 9 nodes for 1,000, 4,000 and
// 16,000 ShareGPT prompts at 64 requests/s on vLLM TP8). The report says so.
std::string TransientWarning(const PlanResult& result, const PointFigures& f) {
  constexpr double kSteadyLifetimes = 10;
  if (result.arrival_span_s <= 0 || f.completed == 0) return "";
  const double mean_output = static_cast<double>(f.total_output_tokens) / f.completed;
  const double lifetime_s =
      (f.mean_ttft_ms + f.mean_tpot_ms * std::max(mean_output - 1, 0.0)) / 1e3;
  if (!(lifetime_s > 0) || result.arrival_span_s >= kSteadyLifetimes * lifetime_s) return "";
  return absl::StrFormat(
      "  (the requests arrive over %.1f s, %.1f times a request's mean latency here (%.1f s): "
      "the load never settles, and the start and drain weigh in the SLO figures; replay more "
      "requests (--num-prompts) until the answer stops moving)\n",
      result.arrival_span_s, result.arrival_span_s / lifetime_s, lifetime_s);
}

}  // namespace

namespace {

// A figure and its limit with the fewest significant digits (4 at least;
// whole numbers between 1e4 and 1e9) that tell them apart: "52.41 > 52.41"
// says nothing.
std::pair<std::string, std::string> TwoFigures(double value, double limit) {
  // One style for both, from the larger: "1e+04 < 10000" would say nothing.
  const double larger = std::max(std::abs(value), std::abs(limit));
  for (int digits = 4; digits < 17; ++digits) {
    auto text = [&](double v) {
      return larger >= 1e4 && larger < 1e9 && digits <= 9 ? absl::StrFormat("%.0f", v)
                                                          : absl::StrFormat("%.*g", digits, v);
    };
    std::string a = text(value), b = text(limit);
    if (a != b || value == limit) return {a, b};
  }
  return {absl::StrFormat("%.17g", value), absl::StrFormat("%.17g", limit)};
}

}  // namespace

std::string DescribeCheck(const SloCheck& c) {
  const auto [value, limit] = TwoFigures(c.value, c.limit);
  if (c.limit == 0) {
    return absl::StrFormat("%s %s %s %s", c.name, value, c.at_least ? "<" : ">", limit);
  }
  const double pct = c.at_least ? -c.excess_pct() : c.excess_pct();
  return absl::StrFormat("%s %s %s %s (%s%%)", c.name, value, c.at_least ? "<" : ">", limit,
                         std::abs(pct) < 0.5 ? absl::StrFormat("%+.2g", pct)
                                             : absl::StrFormat("%+.0f", pct));
}

double SloCheck::excess_pct() const {
  if (ok() || limit == 0) return 0;
  return 100.0 * std::fabs(value - limit) / limit;
}

std::vector<SloCheck> CheckSlos(const PointFigures& f, const Slo& slo) {
  std::vector<SloCheck> checks;
  checks.push_back({"P99 TTFT (ms)", slo.ttft_p99_ms, f.p99_ttft_ms, false});
  checks.push_back({"mean TPOT (ms)", slo.tpot_mean_ms, f.mean_tpot_ms, false});
  if (slo.itl_p99_ms) checks.push_back({"P99 ITL (ms)", *slo.itl_p99_ms, f.p99_itl_ms, false});
  if (slo.min_output_tok_s) {
    checks.push_back({"output throughput (tok/s)", *slo.min_output_tok_s, f.output_throughput, true});
  }
  // A configuration that turns requests away (too long for its context) fails.
  checks.push_back({"failed requests", 0, static_cast<double>(f.failed), false});
  return checks;
}

double SloPressure(const std::vector<SloCheck>& checks) {
  double most = 0;
  for (const SloCheck& c : checks) {
    double pressure = 0;
    if (c.limit == 0) {
      pressure = c.value > 0 ? std::numeric_limits<double>::infinity() : 0;
    } else if (c.at_least) {
      pressure = c.value > 0 ? c.limit / c.value : std::numeric_limits<double>::infinity();
    } else {
      pressure = c.value / c.limit;
    }
    most = std::max(most, pressure);
  }
  return most;
}

bool MeetsAll(const std::vector<SloCheck>& checks) {
  return std::all_of(checks.begin(), checks.end(), [](const SloCheck& c) { return c.ok(); });
}

absl::StatusOr<std::vector<NodeTrial>> SearchFewestNodes(
    const std::function<absl::StatusOr<NodeTrial>(int nodes)>& trial, int max_nodes) {
  if (max_nodes < 1) {
    return absl::InvalidArgumentError(absl::StrCat("--max-nodes: must be >= 1, got ", max_nodes));
  }
  std::vector<NodeTrial> trials;
  // Whether n nodes meet (and whether requests failed), trying n once.
  struct Outcome {
    bool meets;
    bool failed_requests;
  };
  auto run = [&](int n) -> absl::StatusOr<Outcome> {
    auto it = std::find_if(trials.begin(), trials.end(),
                           [n](const NodeTrial& t) { return t.nodes == n; });
    if (it == trials.end()) {
      ASSIGN_OR_RETURN(NodeTrial t, trial(n));
      t.nodes = n;
      trials.push_back(std::move(t));
      it = std::prev(trials.end());
    }
    return Outcome{it->meets, it->figures.failed > 0};
  };
  // Probes 1, 2, 4, ..., max_nodes until one meets.
  int probe = 0;
  for (int n = 1;; n = std::min(2 * n, max_nodes)) {
    ASSIGN_OR_RETURN(Outcome o, run(n));
    if (o.failed_requests) return trials;
    if (o.meets) {
      probe = n;
      break;
    }
    if (n >= max_nodes) break;
  }
  // Then every count below it, from 1 (every count up to max_nodes when no
  // probe met): the first that meets is the answer.
  int answer = 0;
  const int scan_end = probe > 0 ? probe : max_nodes + 1;
  for (int n = 1; n < scan_end; ++n) {
    ASSIGN_OR_RETURN(Outcome o, run(n));
    if (o.meets) {
      answer = n;
      break;
    }
  }
  if (answer == 0) answer = probe;
  if (answer == 0) return trials;
  if (answer < max_nodes) RETURN_IF_ERROR(run(answer + 1).status());
  return trials;
}

double GpuHoursPerMillionOutputTokens(int nodes, const PointFigures& f) {
  if (f.total_output_tokens <= 0) return 0;
  const double gpu_hours = nodes * kGpusPerNode * f.duration_s / 3600.0;
  return gpu_hours / (static_cast<double>(f.total_output_tokens) / 1e6);
}

namespace {

// Output throughput counts every output token over the whole replay, from
// the benchmark's start to the last completion, which comes after the last
// send: under an open-loop load it stays below the rate at which the
// requests ask for tokens, however many nodes serve them.
absl::Status CheckMinThroughputReachable(const Slo& slo, const PreparedWorkload& workload) {
  if (!slo.min_output_tok_s || workload.requests.empty()) return absl::OkStatus();
  int64_t output_tokens = 0;
  sim::SimTime last_send = sim::SimTime::Zero();
  for (const serving::ClientRequest& r : workload.requests) {
    output_tokens += r.output_tokens;
    last_send = std::max(last_send, r.arrival);
  }
  const double last_send_s = static_cast<double>(last_send.ns()) / 1e9;
  if (last_send_s > 0 && *slo.min_output_tok_s >= output_tokens / last_send_s) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "plan: --min-throughput %s tok/s cannot be met: the workload asks for %d output tokens "
        "with its last request sent at %.1f s (%.0f tok/s), and no fleet produces tokens faster "
        "than they are asked for (raise the load with --rate-scale or --request-rate, or lower "
        "the target)",
        Shortest(*slo.min_output_tok_s), output_tokens, last_send_s, output_tokens / last_send_s));
  }
  return absl::OkStatus();
}

// A candidate as one fit prepares it, with the name of the run that fit
// left out ("" for the fit in use).
using PreparedFit = std::pair<std::string, runner::PreparedRun>;

// The candidate as each leave-one-out fit of its engine prepares it, with
// --slowdown applied: an error where any fit cannot prepare it or the fold
// file has no fit of its engine.
absl::StatusOr<std::vector<PreparedFit>> PrepareSpreadFits(const runner::PredictionContext& context,
                                                           const std::string& serve,
                                                           scenarios::EngineKind engine,
                                                           const PreparedWorkload& workload,
                                                           const PlanOptions& options) {
  std::vector<PreparedFit> fits;
  for (const scenarios::FoldFit& f : options.spread_fits->folds()) {
    if (f.params().engine() != engine) continue;
    ASSIGN_OR_RETURN(runner::PreparedRun with,
                     PrepareCandidate(runner::WithEngineParams(context, f.params()), serve,
                                      options.env, workload));
    ApplySlowdown(options.slowdown, with);
    fits.emplace_back(f.held_out(), std::move(with));
  }
  if (fits.empty()) {
    return absl::InvalidArgumentError(absl::StrCat("--spread: ", options.spread_source,
                                                   " has no fits of ",
                                                   scenarios::EngineKind_Name(engine)));
  }
  return fits;
}

// Where a candidate stands in the report: ranked by its fewest nodes,
// failing the SLOs at every count tried, or not run (refused, an error).
enum class CandidateGroup { kMeeting, kFailing, kBroken };

// Simulates `run` (or, with --spread, each of `fits`) on `nodes` nodes and
// checks the SLOs.
absl::StatusOr<NodeTrial> JudgeNodes(const runner::PredictionContext& context,
                                     const PreparedWorkload& workload, const Slo& slo,
                                     const PlanOptions& options, const runner::PreparedRun& run,
                                     const std::vector<PreparedFit>& fits, int nodes) {
  auto trial_with = [&](const runner::PreparedRun& prepared) -> absl::StatusOr<NodeTrial> {
    ASSIGN_OR_RETURN(metrics::BenchMetrics m,
                     options.balancer == serving::ReplicaBalancer::kLeastOutstanding
                         ? SimulateReplicasLeastOutstanding(context, prepared, workload, nodes)
                         : SimulateReplicas(context, prepared, workload, nodes, options.threads));
    NodeTrial t;
    t.nodes = nodes;
    t.figures = FiguresOf(m);
    for (const std::string& e : m.errors) {
      if (!e.empty()) {
        t.first_error = e;
        break;
      }
    }
    t.checks = CheckSlos(t.figures, slo);
    t.meets = MeetsAll(t.checks);
    t.peak_concurrency_per_replica = m.max_concurrent_requests / nodes;
    return t;
  };
  if (fits.empty()) return trial_with(run);
  // Every fit must meet the SLOs; the one under most pressure speaks.
  std::optional<NodeTrial> binding;
  bool all_meet = true;
  for (const auto& [held_out, prepared] : fits) {
    ASSIGN_OR_RETURN(NodeTrial t, trial_with(prepared));
    t.binding_fit = held_out;
    all_meet = all_meet && t.meets;
    if (!binding || SloPressure(t.checks) > SloPressure(binding->checks)) {
      binding = std::move(t);
    }
  }
  binding->meets = all_meet;
  return *std::move(binding);
}

// One candidate: prepared, its fewest nodes searched, the answer judged and
// what it extrapolates noted in `c`.
CandidateGroup EvaluateCandidate(const runner::PredictionContext& context,
                                 const PreparedWorkload& workload, const Slo& slo,
                                 const PlanOptions& options, size_t index, CandidateResult& c) {
  absl::StatusOr<runner::PreparedRun> run =
      PrepareCandidate(context, c.serve_command, options.env, workload);
  std::vector<PreparedFit> fits;
  if (run.ok()) {
    ApplySlowdown(options.slowdown, *run);
    if (options.spread_fits != nullptr) {
      absl::StatusOr<std::vector<PreparedFit>> spread =
          PrepareSpreadFits(context, c.serve_command, run->engine.engine(), workload, options);
      if (spread.ok()) {
        fits = std::move(*spread);
      } else {
        run = spread.status();
      }
    }
  }
  if (!run.ok()) {
    c.status = PointStatusOf(run.status());
    c.reason = std::string(run.status().message());
    return CandidateGroup::kBroken;
  }
  // A replica of a multi-node engine instance occupies `nnodes` nodes; the
  // search counts replicas, the report nodes.
  const int nodes_per_replica = std::max(run->engine.nnodes(), 1);
  if (nodes_per_replica > options.max_nodes) {
    c.status = PointStatus::kError;
    c.reason = absl::StrCat("one instance spans ", nodes_per_replica,
                            " nodes (--nnodes), more than --max-nodes ", options.max_nodes);
    return CandidateGroup::kBroken;
  }
  auto trial = [&](int replicas) -> absl::StatusOr<NodeTrial> {
    ASSIGN_OR_RETURN(NodeTrial t,
                     JudgeNodes(context, workload, slo, options, *run, fits, replicas));
    if (options.on_trial) {
      NodeTrial shown = t;
      shown.nodes = replicas * nodes_per_replica;
      options.on_trial(index, shown);
    }
    return t;
  };
  // Past one replica per request more replicas change nothing.
  const int64_t max_replicas = std::min<int64_t>(options.max_nodes / nodes_per_replica,
                                                 static_cast<int64_t>(workload.requests.size()));
  absl::StatusOr<std::vector<NodeTrial>> trials =
      SearchFewestNodes(trial, static_cast<int>(std::max<int64_t>(max_replicas, 1)));
  if (!trials.ok()) {
    c.status = PointStatus::kError;
    c.reason = std::string(trials.status().message());
    return CandidateGroup::kBroken;
  }
  for (NodeTrial& t : *trials) t.nodes *= nodes_per_replica;
  c.trials = std::move(*trials);
  // An engine that turns every request away measures nothing: refused with
  // its reason, as `servesim run` refuses it.
  if (const NodeTrial& first = c.trials.front();
      first.figures.completed == 0 && first.figures.failed > 0) {
    c.status = PointStatus::kRefused;
    c.reason = runner::EveryRequestRejected(first.figures.failed, first.first_error);
    return CandidateGroup::kBroken;
  }
  for (const NodeTrial& t : c.trials) {
    if (t.meets && (c.nodes == 0 || t.nodes < c.nodes)) {
      c.nodes = t.nodes;
      c.answer = t;
    }
    if (t.nodes >= c.largest.nodes) c.largest = t;
  }
  if (run->params.has_value()) {
    const NodeTrial& judged = c.nodes > 0 ? c.answer : c.largest;
    runner::WorkloadShape shape = runner::EngineShape(context, *run);
    // Whether the engine turns a request away is the trials' business: a
    // rejection ends the search and the report says so.
    for (const serving::ClientRequest& r : workload.requests) {
      shape.AddRequest(r.client_prompt(), r.arrival, /*accepted=*/true);
    }
    shape.peak_concurrency = judged.peak_concurrency_per_replica;
    c.extrapolations = runner::ExtrapolationNotes(*run->params, shape);
    c.engine = run->engine.engine();
    c.layout_family = shape.layout_family;
  }
  if (c.nodes == 0) return CandidateGroup::kFailing;
  c.gpu_hours_per_million_output_tokens = GpuHoursPerMillionOutputTokens(c.nodes, c.answer.figures);
  return CandidateGroup::kMeeting;
}

}  // namespace

absl::StatusOr<PlanResult> Plan(const runner::PredictionContext& context,
                                const std::string& bench_command,
                                const std::vector<std::string>& candidates, const Slo& slo,
                                const PlanOptions& options) {
  if (!(slo.ttft_p99_ms > 0) || !(slo.tpot_mean_ms > 0)) {
    return absl::InvalidArgumentError(
        "plan: --slo-ttft-p99-ms and --slo-tpot-mean-ms are required and must be > 0");
  }
  if (!(options.slowdown >= 0) || options.slowdown >= 10) {
    return absl::InvalidArgumentError(absl::StrCat(
        "plan: --slowdown must be at least 0 and below 10 (0.2 = every step 20 % slower), got ",
        options.slowdown));
  }
  if (candidates.empty()) {
    return absl::InvalidArgumentError(
        "plan: no candidates (--candidate 'serve cmd' or --candidates FILE)");
  }
  ASSIGN_OR_RETURN(PreparedWorkload workload, PrepareWorkload(context, bench_command));
  PlanResult result;
  result.bench_command = bench_command;
  result.num_requests = static_cast<int64_t>(workload.requests.size());
  if (!workload.requests.empty()) {
    const auto [first, last] = std::minmax_element(
        workload.requests.begin(), workload.requests.end(),
        [](const auto& a, const auto& b) { return a.arrival < b.arrival; });
    result.arrival_span_s = static_cast<double>((last->arrival - first->arrival).ns()) / 1e9;
  }
  RETURN_IF_ERROR(CheckMinThroughputReachable(slo, workload));
  std::vector<CandidateResult> meeting, failing, broken;
  for (size_t index = 0; index < candidates.size(); ++index) {
    CandidateResult c;
    c.serve_command = candidates[index];
    switch (EvaluateCandidate(context, workload, slo, options, index, c)) {
      case CandidateGroup::kMeeting:
        meeting.push_back(std::move(c));
        break;
      case CandidateGroup::kFailing:
        failing.push_back(std::move(c));
        break;
      case CandidateGroup::kBroken:
        broken.push_back(std::move(c));
        break;
    }
  }
  std::stable_sort(meeting.begin(), meeting.end(),
                   [](const CandidateResult& a, const CandidateResult& b) {
                     if (a.nodes != b.nodes) return a.nodes < b.nodes;
                     return a.gpu_hours_per_million_output_tokens <
                            b.gpu_hours_per_million_output_tokens;
                   });
  for (auto* group : {&meeting, &failing, &broken}) {
    for (CandidateResult& c : *group) result.ranked.push_back(std::move(c));
  }
  return result;
}

absl::Status CheckCandidates(const PlanResult& result) {
  // `ranked` keeps the input order among refusals and errors.
  const CandidateResult* first_error = nullptr;
  int64_t errors = 0;
  bool all_refused = !result.ranked.empty();
  for (const CandidateResult& c : result.ranked) {
    if (c.status == PointStatus::kError) {
      if (first_error == nullptr) first_error = &c;
      ++errors;
    }
    all_refused &= c.status == PointStatus::kRefused;
  }
  if (first_error != nullptr) {
    return absl::InvalidArgumentError(absl::StrCat(
        "plan: ", errors, " of ", result.ranked.size(),
        " candidate(s) are errors (bad input or a feature servesim does not model, not an "
        "engine's refusal); the first (",
        first_error->serve_command, "): ", first_error->reason));
  }
  if (all_refused) {
    const CandidateResult& first = result.ranked.front();
    return absl::FailedPreconditionError(
        absl::StrCat("plan: the engine refuses every candidate; the first (", first.serve_command,
                     "): ", first.reason));
  }
  return absl::OkStatus();
}

namespace {

// The workload, the SLOs and the model the search ran under.
std::string FormatPlanPreamble(const PlanResult& result, const Slo& slo,
                               const PlanOptions& options) {
  std::string out;
  absl::StrAppend(&out, "workload: ", result.num_requests, " requests of `", result.bench_command,
                  "`\n");
  if (!options.workload_note.empty()) absl::StrAppend(&out, "  (", options.workload_note, ")\n");
  // A P99 over fewer than 10,000 requests is the slowest hundred or fewer:
  // near an SLO, a small change of load can move the answer by a node.
  if (result.num_requests > 0 && result.num_requests < 10000) {
    absl::StrAppend(&out, "  (a P99 here is the slowest ", (result.num_requests + 99) / 100,
                    " request(s) of ", result.num_requests,
                    ": near an SLO the node count can move by one either way; replay more "
                    "requests for a steadier answer)\n");
  }
  std::vector<std::string> slos = {absl::StrCat("P99 TTFT <= ", Shortest(slo.ttft_p99_ms), " ms"),
                                    absl::StrCat("mean TPOT <= ", Shortest(slo.tpot_mean_ms), " ms")};
  if (slo.itl_p99_ms) slos.push_back(absl::StrCat("P99 ITL <= ", Shortest(*slo.itl_p99_ms), " ms"));
  if (slo.min_output_tok_s) {
    slos.push_back(absl::StrCat("output throughput >= ", Shortest(*slo.min_output_tok_s), " tok/s"));
  }
  slos.push_back("no failed requests");
  absl::StrAppend(&out, "SLOs: ", absl::StrJoin(slos, ", "), "\n");
  const bool lor = options.balancer == serving::ReplicaBalancer::kLeastOutstanding;
  absl::StrAppend(&out, "model: N replicas, each on one ", kGpusPerNode,
                  "-GPU H200 node (or on --nnodes nodes for a multi-node instance), behind a ",
                  lor ? "least-outstanding-requests load balancer (all nodes in one simulation)"
                      : "round-robin load balancer (request i to node i mod N), each simulated "
                        "independently",
                  "; N searched up to ", options.max_nodes, "\n");
  if (!options.context_summary.empty()) absl::StrAppend(&out, options.context_summary, "\n");
  if (options.slowdown > 0) {
    absl::StrAppend(&out, "margin: every iteration and API-server request ",
                    absl::StrFormat("%.6g", 100 * options.slowdown),
                    " % slower than predicted (--slowdown); the figures below include it\n");
  }
  if (options.spread_fits != nullptr) {
    absl::StrAppend(&out, "fits: every node count must meet the SLOs with each of the candidate "
                          "engine's leave-one-out fits (--spread, ",
                    options.spread_source,
                    "); the figures below are those of the fit nearest to, or furthest past, "
                    "an SLO\n");
  }
  absl::StrAppend(&out, "\n");

  return out;
}

// The best candidate's answer: its node count, the trials around it, its
// figures and what they rest on.
std::string FormatBestCandidate(const PlanResult& result, const PlanOptions& options) {
  std::string out;
  const CandidateResult* best =
      !result.ranked.empty() && result.ranked.front().nodes > 0 ? &result.ranked.front() : nullptr;
  if (best == nullptr) {
    // Every count up to --max-nodes failed (or requests failed, at any
    // count): the counts each candidate ran are listed at the end.
    absl::StrAppend(&out, "No candidate meets every SLO at the node counts tried (listed at the "
                          "end, up to --max-nodes ", options.max_nodes, ").\n");
  } else {
    const PointFigures& f = best->answer.figures;
    absl::StrAppend(&out, "best: ", best->serve_command, "\n");
    absl::StrAppend(&out, absl::StrFormat("  nodes: %d (%d H200 GPUs)\n", best->nodes,
                                          best->nodes * kGpusPerNode));
    // The trials around the answer: the count below (the search tried every
    // one up to it) and the one above, which a round-robin split can fail.
    const NodeTrial* below = nullptr;
    const NodeTrial* above = nullptr;
    for (const NodeTrial& t : best->trials) {
      if (t.nodes < best->nodes && (below == nullptr || t.nodes > below->nodes)) below = &t;
      if (t.nodes > best->nodes && (above == nullptr || t.nodes < above->nodes)) above = &t;
    }
    if (below != nullptr) {
      absl::StrAppend(&out, "  with ", below->nodes, " node(s) it fails: ", Failures(*below),
                      BindingFit(options, *below), "\n");
    }
    if (above != nullptr && !above->meets) {
      absl::StrAppend(&out, "  with ", above->nodes,
                      " node(s) it fails again: ", Failures(*above), BindingFit(options, *above),
                      " (more nodes split the requests differently; the answer rests on how this "
                      "replay's requests fall on the nodes: replay more requests before relying "
                      "on it)\n");
    }
    absl::StrAppend(&out, absl::StrFormat("  GPU-hours per million output tokens: %.2f\n",
                                          best->gpu_hours_per_million_output_tokens));
    absl::StrAppend(&out, absl::StrFormat(
                              "  at %d node(s): P99 TTFT %.1f ms, mean TPOT %.2f ms, P99 ITL %.1f "
                              "ms, output %.0f tok/s, total %.0f tok/s, duration %.1f s\n",
                              best->nodes, f.p99_ttft_ms, f.mean_tpot_ms, f.p99_itl_ms,
                              f.output_throughput, f.total_token_throughput, f.duration_s));
    if (options.spread_fits != nullptr) {
      absl::StrAppend(&out, "  binding fit at ", best->nodes, " node(s): ", FitName(best->answer),
                      "\n");
    }
    absl::StrAppend(&out, TransientWarning(result, f));
    for (const runner::Extrapolation& e : best->extrapolations) {
      absl::StrAppend(&out, "  ", e.line, "\n");
    }
    if (!best->held_out_evidence.empty()) {
      absl::StrAppend(&out, "  ", best->held_out_evidence, "\n");
    }
  }

  return out;
}

// The candidates that meet the SLOs, ranked, with what each but the best
// (above) extrapolates.
std::string FormatRankedCandidates(const PlanResult& result) {
  std::string out;
  absl::StrAppend(&out, "\ncandidates meeting the SLOs (ranked):\n");
  absl::StrAppend(&out, absl::StrFormat("  %-4s %-5s %-10s %-11s %-12s %-10s %-9s %s\n", "rank",
                                        "nodes", "GPU-h/Mtok", "P99TTFT ms", "meanTPOT ms",
                                        "P99ITL ms", "out tok/s", "serve command"));
  int rank = 0;
  for (const CandidateResult& c : result.ranked) {
    if (c.nodes == 0) continue;
    const PointFigures& f = c.answer.figures;
    absl::StrAppend(&out, absl::StrFormat("  %-4d %-5d %-10.2f %-11.1f %-12.2f %-10.1f %-9.0f %s\n",
                                          ++rank, c.nodes, c.gpu_hours_per_million_output_tokens,
                                          f.p99_ttft_ms, f.mean_tpot_ms, f.p99_itl_ms,
                                          f.output_throughput, c.serve_command));
  }
  if (rank == 0) absl::StrAppend(&out, "  (none)\n");
  // The best one's are printed with it above.
  rank = 0;
  for (const CandidateResult& c : result.ranked) {
    if (c.nodes == 0) continue;
    if (++rank == 1) continue;
    for (const runner::Extrapolation& e : c.extrapolations) {
      absl::StrAppend(&out, "  rank ", rank, ": ", e.line, "\n");
    }
    if (!c.held_out_evidence.empty()) {
      absl::StrAppend(&out, "  rank ", rank, ": ", c.held_out_evidence, "\n");
    }
  }

  return out;
}

// The candidates that fail at every node count tried.
std::string FormatFailingCandidates(const PlanResult& result, const PlanOptions& options) {
  std::string out;
  bool any_failing = false;
  for (const CandidateResult& c : result.ranked) {
    if (c.status != PointStatus::kOk || c.nodes > 0) continue;
    if (!any_failing) absl::StrAppend(&out, "\ncandidates failing at the largest node count tried:\n");
    any_failing = true;
    absl::StrAppend(&out, "  ", c.serve_command, "\n    at ", c.largest.nodes,
                    " node(s): ", Failures(c.largest), BindingFit(options, c.largest), "\n");
    for (const runner::Extrapolation& e : c.extrapolations) {
      absl::StrAppend(&out, "    ", e.line, "\n");
    }
    if (!c.held_out_evidence.empty()) absl::StrAppend(&out, "    ", c.held_out_evidence, "\n");
  }
  return out;
}

// The candidates refused or in error, with the reason.
std::string FormatBrokenCandidates(const PlanResult& result) {
  std::string out;
  bool any_broken = false;
  for (const CandidateResult& c : result.ranked) {
    if (c.status == PointStatus::kOk) continue;
    if (!any_broken) absl::StrAppend(&out, "\ncandidates refused or in error:\n");
    any_broken = true;
    absl::StrAppend(&out, "  ", c.serve_command, "\n    ", std::string(PointStatusName(c.status)), ": ",
                    c.reason, "\n");
  }
  return out;
}

// Each candidate's node counts tried, in the order the search tried them.
std::string FormatNodeCountsTried(const PlanResult& result) {
  std::string out;
  absl::StrAppend(&out, "\nnode counts tried:\n");
  for (const CandidateResult& c : result.ranked) {
    if (c.status != PointStatus::kOk) continue;
    absl::StrAppend(&out, "  ", Trials(c), "  <- ", c.serve_command, "\n");
  }
  return out;
}

}  // namespace

std::string FormatPlanReport(const PlanResult& result, const Slo& slo, const PlanOptions& options) {
  return absl::StrCat(FormatPlanPreamble(result, slo, options),
                      FormatBestCandidate(result, options), FormatRankedCandidates(result),
                      FormatFailingCandidates(result, options), FormatBrokenCandidates(result),
                      FormatNodeCountsTried(result));
}

absl::StatusOr<std::string> TraceBenchCommand(const std::string& trace_path, double rate_scale,
                                              int64_t num_prompts) {
  if (!(rate_scale > 0) || !std::isfinite(rate_scale)) {
    return absl::InvalidArgumentError(
        absl::StrCat("--rate-scale: must be a finite number > 0, got ", FormatDecimal(rate_scale)));
  }
  if (num_prompts < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("--num-prompts: must be >= 1, got ", num_prompts));
  }
  // --trace-time-scale multiplies the trace's offsets: 1/X runs it X times faster.
  return absl::StrCat("vllm bench serve --dataset-name trace --dataset-path ",
                      workload::ShellQuote(trace_path), " --trace-time-scale ", Shortest(1.0 / rate_scale),
                      " --num-prompts ", num_prompts);
}

absl::StatusOr<std::vector<std::string>> ParseCandidates(const std::string& text,
                                                         const std::string& origin) {
  std::vector<std::string> out;
  std::string pending;
  // An editor's byte-order mark is no part of the first command.
  const absl::string_view body = WithoutByteOrderMark(absl::string_view(text));
  int line_no = 0;
  for (absl::string_view raw : absl::StrSplit(body, '\n')) {
    ++line_no;
    // A binary file would otherwise be read as commands and echoed, bytes
    // and all, into the report.
    absl::string_view line_text = raw;
    absl::ConsumeSuffix(&line_text, "\r");  // a Windows line end
    if (const std::optional<size_t> at = FirstControlByte(line_text, false)) {
      return absl::InvalidArgumentError(
          absl::StrFormat("%s:%d: not a text file (control byte 0x%02x at column %d)", origin,
                          line_no, static_cast<unsigned char>(line_text[*at]), *at + 1));
    }
    const std::string_view kept = workload::WithoutShellComment({raw.data(), raw.size()});
    absl::string_view line = absl::StripAsciiWhitespace({kept.data(), kept.size()});
    if (pending.empty() && line.empty()) continue;  // blank, or a comment alone
    if (absl::ConsumeSuffix(&line, "\\")) {
      absl::StrAppend(&pending, absl::StripTrailingAsciiWhitespace(line), " ");
      continue;
    }
    absl::StrAppend(&pending, line);
    out.push_back(std::string(absl::StripAsciiWhitespace(pending)));
    pending.clear();
  }
  if (!pending.empty()) out.push_back(std::string(absl::StripAsciiWhitespace(pending)));
  if (out.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(origin, ": no serve commands"));
  }
  return out;
}

}  // namespace servesim::planning
