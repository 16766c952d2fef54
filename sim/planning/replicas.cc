#include "sim/planning/replicas.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "sim/planning/parallel_for.h"

namespace servesim::planning {

absl::StatusOr<PreparedWorkload> PrepareWorkload(const runner::PredictionContext& context,
                                                 const std::string& bench_command) {
  PreparedWorkload w;
  ASSIGN_OR_RETURN(w.bench, workload::ParseBenchCommand(bench_command));
  if (w.bench.save_result) {
    return absl::InvalidArgumentError(
        "plan: --save-result in --bench is not supported: a plan runs many simulations; its "
        "report is the output");
  }
  if (!w.bench.goodput_slo_ms.empty()) {
    return absl::InvalidArgumentError(
        "plan: --goodput in --bench is not supported: a plan judges its own SLOs "
        "(--slo-ttft-p99-ms, --slo-tpot-mean-ms, --slo-itl-p99-ms)");
  }
  if (w.bench.max_concurrency) {
    return absl::UnimplementedError(
        "plan: --max-concurrency is not supported: replicas behind a load balancer see an "
        "open-loop workload (use --request-rate or a trace)");
  }
  ASSIGN_OR_RETURN(w.requests, runner::BuildClientRequests(context, w.bench, &w.notice));
  return w;
}

absl::StatusOr<runner::PreparedRun> PrepareCandidate(const runner::PredictionContext& context,
                                                     const std::string& serve_command,
                                                     const scenarios::EnvVars& env,
                                                     const PreparedWorkload& workload) {
  return runner::PrepareRunForBench(context, serve_command, env, workload.bench);
}

std::vector<size_t> RoundRobinShare(size_t num_requests, int replicas, int r) {
  std::vector<size_t> share;
  for (size_t i = static_cast<size_t>(r); i < num_requests; i += static_cast<size_t>(replicas)) {
    share.push_back(i);
  }
  return share;
}

MergedRun MergeReplicaRecords(const std::vector<serving::SimulationResult>& per_replica) {
  MergedRun merged;
  const size_t n = per_replica.size();
  size_t total = 0;
  for (const auto& r : per_replica) total += r.records.size();
  merged.records.resize(total);
  for (size_t k = 0; k < n; ++k) {
    const serving::SimulationResult& r = per_replica[k];
    for (size_t j = 0; j < r.records.size(); ++j) merged.records[j * n + k] = r.records[j];
    // Every replica's clock starts with the benchmark's (t = 0).
    merged.duration = std::max(merged.duration, r.duration);
  }
  return merged;
}

absl::StatusOr<metrics::BenchMetrics> SimulateReplicas(const runner::PredictionContext& context,
                                                       const runner::PreparedRun& run,
                                                       const PreparedWorkload& workload,
                                                       int replicas, int threads) {
  if (replicas < 1) {
    return absl::InvalidArgumentError(absl::StrCat("replicas must be >= 1, got ", replicas));
  }
  // More replicas than requests: the extra ones stay idle and are not simulated.
  const int active = static_cast<int>(std::min<size_t>(replicas, workload.requests.size()));
  std::vector<serving::SimulationResult> results(static_cast<size_t>(active));
  std::vector<absl::Status> statuses(static_cast<size_t>(active));
  ParallelFor(static_cast<size_t>(active), threads, [&](size_t k) {
    serving::SimulationInput input = runner::ClientSimulationInput(workload.bench);
    for (size_t i : RoundRobinShare(workload.requests.size(), replicas, static_cast<int>(k))) {
      input.requests.push_back(workload.requests[i]);
    }
    absl::StatusOr<serving::SimulationResult> r =
        runner::SimulatePrepared(context, run, input, /*fallbacks=*/nullptr);
    if (r.ok()) {
      results[k] = std::move(*r);
    } else {
      statuses[k] = r.status();
    }
  });
  for (const absl::Status& s : statuses) RETURN_IF_ERROR(s);
  // With fewer active replicas than `replicas`, request i still went to i mod
  // replicas == i, so the interleave below is the identity on the active ones.
  MergedRun merged = MergeReplicaRecords(results);
  // At the default percentiles, not the bench's --metric-percentiles: the
  // plan's SLOs are P99s, which a bench asking for other percentiles would
  // leave uncomputed; --goodput is no plan figure.
  return metrics::ComputeBenchMetrics(merged.records, merged.duration);
}

absl::StatusOr<metrics::BenchMetrics> SimulateReplicasLeastOutstanding(
    const runner::PredictionContext& context, const runner::PreparedRun& run,
    const PreparedWorkload& workload, int replicas) {
  if (replicas < 1) {
    return absl::InvalidArgumentError(absl::StrCat("replicas must be >= 1, got ", replicas));
  }
  runner::PreparedRun nodes = run;
  nodes.setup.topology.replicas = replicas;
  nodes.setup.topology.replica_balancer = serving::ReplicaBalancer::kLeastOutstanding;
  serving::SimulationInput input = runner::ClientSimulationInput(workload.bench);
  input.requests = workload.requests;
  ASSIGN_OR_RETURN(serving::SimulationResult r,
                   runner::SimulatePrepared(context, nodes, input, /*fallbacks=*/nullptr));
  return metrics::ComputeBenchMetrics(r.records, r.duration);
}

}  // namespace servesim::planning
