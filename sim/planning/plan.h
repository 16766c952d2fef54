// Capacity planning: for each candidate engine configuration, the fewest
// 8-GPU H200 nodes (replicas of one or more nodes each, behind a round-robin
// or least-outstanding balancer) that meet the latency and throughput SLOs
// on a workload, and what that costs.
#ifndef SERVESIM_SIM_PLANNING_PLAN_H_
#define SERVESIM_SIM_PLANNING_PLAN_H_

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "scenarios/fitted_params.pb.h"
#include "sim/planning/replicas.h"
#include "sim/planning/sweep.h"

namespace servesim::planning {

// GPUs per node charged in GPU-hours: one HGX H200 node.
inline constexpr int kGpusPerNode = 8;

// The service-level objectives. Every request must also succeed (failed = 0).
struct Slo {
  double ttft_p99_ms = 0;                    // P99 time to first token, ms, > 0
  double tpot_mean_ms = 0;                   // mean time per output token, ms, > 0
  std::optional<double> itl_p99_ms;          // P99 inter-token latency, ms
  std::optional<double> min_output_tok_s;    // output token throughput, tok/s
};

// One SLO measured against its limit.
struct SloCheck {
  std::string name;   // "P99 TTFT (ms)", ...
  double limit = 0;
  double value = 0;
  bool at_least = false;  // true: value must be >= limit (throughput)
  bool ok() const { return at_least ? value >= limit : value <= limit; }
  // How far past the limit, in percent of the limit (0 when met).
  double excess_pct() const;
};

std::vector<SloCheck> CheckSlos(const PointFigures& figures, const Slo& slo);
// "mean TPOT (ms) 35.56 > 10 (+256%)": a failed check as the report prints
// it, with as many digits as tell the figure from its limit.
std::string DescribeCheck(const SloCheck& check);
bool MeetsAll(const std::vector<SloCheck>& checks);

// One node count tried.
struct NodeTrial {
  // Nodes in all. SearchFewestNodes counts in replicas of one engine
  // instance; Plan multiplies by the nodes one instance spans (--nnodes)
  // once the search is done.
  int nodes = 0;
  PointFigures figures;
  // A failed request's error, as vLLM would save it ("" when none failed):
  // a request the engine rejects (too long for its context) fails at any
  // node count, which the report should say.
  std::string first_error;
  std::vector<SloCheck> checks;
  bool meets = false;
  // Requests in flight at the peak on one engine replica: the fleet's peak
  // over its replica count (a round-robin split shares the load evenly).
  double peak_concurrency_per_replica = 0;
  // With PlanOptions::spread_fits: the fold whose figures these are, the one
  // that binds (its held-out run; "" for the fit on every run).
  std::string binding_fit;
};

// How near `checks` come to failing: the largest value / limit (limit /
// value for a floor), infinite for a failed request. A trial meets its SLOs
// when this is at most 1.
double SloPressure(const std::vector<SloCheck>& checks);

// Fewest nodes in [1, max_nodes] for which `trial(n).meets` (Plan searches
// replicas of a multi-node instance with it, `max_nodes` then the most
// replicas that fit --max-nodes): probes 1, 2,
// 4, ..., max_nodes until one meets, then tries every count below it from 1
// until one meets (every count up to max_nodes when no probe met), and the
// count after the answer (the report says when it fails). Not a bisection:
// more nodes can do worse, as a round-robin split can gather long prompts on
// one node and a P99 over a short replay moves with it (an audit found 7
// nodes meeting an SLO that 8 missed, where a bisection answered 9), so a
// failing count says nothing of a smaller one, and "none within max_nodes"
// is said only when every count failed (until 2026-12-06 the search answered
// none after failing probes alone: none within 8 nodes where 7 met, from a
// review). A trial with failed requests ends the search: the engine
// turns those requests away whatever the node count. Returns every trial in
// the order tried; the answer is the smallest meeting n among them.
absl::StatusOr<std::vector<NodeTrial>> SearchFewestNodes(
    const std::function<absl::StatusOr<NodeTrial>(int nodes)>& trial, int max_nodes);

struct PlanOptions {
  int max_nodes = 64;
  int threads = 1;  // replicas simulated in parallel (round robin only)
  // How the load balancer picks a node. Round robin splits the requests
  // i mod N and simulates the nodes independently (in parallel);
  // least-outstanding needs the nodes' state at every send, so all nodes run
  // in one simulation.
  serving::ReplicaBalancer balancer = serving::ReplicaBalancer::kRoundRobin;
  scenarios::EnvVars env;
  // A margin for the model's own error: every iteration and every API-server
  // request takes (1 + slowdown) x its predicted time. The held-out errors of
  // the live runs (README, "Accuracy") say how much to allow. 0 = as predicted.
  double slowdown = 0;
  // With fits: every node count must meet the SLOs with each of the
  // candidate engine's leave-one-out fits (`servesim run --spread`), and a
  // trial reports the binding one's figures (SloPressure's largest; the
  // earlier fold on a tie). An engine without fits in it is an error row.
  // Null: the context's own parameters only.
  const scenarios::FoldFits* spread_fits = nullptr;
  std::string spread_source;  // the fold file, as the report names it
  // How the workload was chosen where its command does not say (a trace
  // shorter than the default request count, replayed whole); printed under
  // the workload line. Empty: nothing to say.
  std::string workload_note;
  // What the predictions are costed with (runner::ContextSummary), printed
  // under the model line; empty: not printed.
  std::string context_summary;
  // Called after each node count tried, with the candidate's index in the
  // list and the trial (nodes counted in replicas' nodes): progress for a
  // search that may take minutes. Null: nothing called.
  std::function<void(size_t candidate, const NodeTrial& trial)> on_trial;
};

struct CandidateResult {
  std::string serve_command;
  PointStatus status = PointStatus::kOk;  // refused / error: `reason` says why
  std::string reason;
  std::vector<NodeTrial> trials;  // in the order tried
  int nodes = 0;                  // fewest meeting every SLO; 0: none up to max_nodes
  NodeTrial answer;               // the trial at `nodes` (valid when nodes > 0)
  NodeTrial largest;              // the trial at the largest n tried
  // nodes x 8 GPUs x benchmark duration, per million output tokens.
  double gpu_hours_per_million_output_tokens = 0;
  // Where the answer (else the largest trial) leaves the workloads the
  // engine's fitted parameters were fitted on (runner::ExtrapolationNotes).
  std::vector<runner::Extrapolation> extrapolations;
  // The candidate's engine and layout family (runner::WorkloadShape), set
  // where it has fitted parameters; and the leave-one-out's errors on live
  // runs of both, a line the caller may set (fit::FormatHeldOutEvidence),
  // printed after the extrapolations.
  scenarios::EngineKind engine = scenarios::ENGINE_UNSPECIFIED;
  std::string layout_family;
  std::string held_out_evidence;
};

struct PlanResult {
  std::string bench_command;
  int64_t num_requests = 0;
  double arrival_span_s = 0;  // first to last request's send time; 0 for a burst
  // Meeting candidates first (fewest nodes, then fewest GPU-hours per
  // million tokens, then input order), then failing, then refused/error.
  std::vector<CandidateResult> ranked;
};

// GPU-hours per million output tokens of `nodes` nodes over `figures`.
double GpuHoursPerMillionOutputTokens(int nodes, const PointFigures& figures);

absl::StatusOr<PlanResult> Plan(const runner::PredictionContext& context,
                                const std::string& bench_command,
                                const std::vector<std::string>& candidates, const Slo& slo,
                                const PlanOptions& options);

// InvalidArgument when any candidate is an error (a malformed serve command,
// a flag the engine does not know): bad input, even beside good candidates;
// it counts them and names the first. FailedPrecondition when the engine
// refuses every candidate, with the first one's reason: nothing was sized.
// A refusal beside an evaluated candidate is an outcome.
absl::Status CheckCandidates(const PlanResult& result);

// The human-readable answer: best configuration and node count, its cost,
// the runner-ups and, for each failing candidate, which SLO fails by how much.
std::string FormatPlanReport(const PlanResult& result, const Slo& slo, const PlanOptions& options);

// `vllm bench serve` replaying a trace at `rate_scale` times its rate
// (--trace-time-scale 1/rate_scale), capped at `num_prompts` requests.
absl::StatusOr<std::string> TraceBenchCommand(const std::string& trace_path, double rate_scale,
                                              int64_t num_prompts);

// A candidates file: one serve command per line; a shell comment (a '#' that
// starts a word outside quotes: WithoutShellComment) ends its line, blank
// lines are skipped, and a line ending in '\' continues on the next.
absl::StatusOr<std::vector<std::string>> ParseCandidates(const std::string& text,
                                                         const std::string& origin);

}  // namespace servesim::planning

#endif  // SERVESIM_SIM_PLANNING_PLAN_H_
