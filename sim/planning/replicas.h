// N identical serving replicas (each one engine instance of one or more
// nodes) behind a load balancer, round robin (request i goes to replica
// i mod N) or least outstanding requests; each replica is simulated on its
// own, and the client's metrics are computed over all requests together.
#ifndef SERVESIM_SIM_PLANNING_REPLICAS_H_
#define SERVESIM_SIM_PLANNING_REPLICAS_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "sim/metrics/bench_metrics.h"
#include "sim/runner/prediction.h"
#include "sim/serving/serving_simulation.h"
#include "sim/workload/bench_config.h"

namespace servesim::planning {

// A benchmark workload sampled once (lengths and send times), to be split
// over any number of replicas.
struct PreparedWorkload {
  workload::BenchConfig bench;
  std::vector<serving::ClientRequest> requests;  // in send order
  std::string notice;                            // the dataset's note, if any
};

// Parses and samples `bench_command` as runner::Predict does. A client
// concurrency cap (--max-concurrency) is Unimplemented: one client semaphore
// across independent replicas is not what round robin over replicas models.
absl::StatusOr<PreparedWorkload> PrepareWorkload(const runner::PredictionContext& context,
                                                 const std::string& bench_command);

// The serve command parsed and its engine set up once, for a workload, as
// `run` prepares it (runner::PrepareRunForBench; FailedPrecondition = refusal).
absl::StatusOr<runner::PreparedRun> PrepareCandidate(const runner::PredictionContext& context,
                                                     const std::string& serve_command,
                                                     const scenarios::EnvVars& env,
                                                     const PreparedWorkload& workload);

// Request i of `requests` goes to replica i mod `replicas`: the indices of
// replica `r`'s share, in send order.
std::vector<size_t> RoundRobinShare(size_t num_requests, int replicas, int r);

// Records of replica r (its share, in order) interleaved back into request
// order, and the benchmark duration over all: from the benchmark's start
// (t = 0) to the last completion of any.
struct MergedRun {
  std::vector<metrics::RequestRecord> records;
  sim::SimTime duration;
};
MergedRun MergeReplicaRecords(const std::vector<serving::SimulationResult>& per_replica);

// Simulates `replicas` copies of `run` (each replica simulated on its own
// thread when `threads` > 1; the result does not depend on it) and returns
// the client's metrics over every request.
absl::StatusOr<metrics::BenchMetrics> SimulateReplicas(const runner::PredictionContext& context,
                                                       const runner::PreparedRun& run,
                                                       const PreparedWorkload& workload,
                                                       int replicas, int threads);

// `replicas` nodes behind a least-outstanding-requests balancer: one
// simulation in which each request goes to the node with the fewest requests
// sent and not yet finished.
absl::StatusOr<metrics::BenchMetrics> SimulateReplicasLeastOutstanding(
    const runner::PredictionContext& context, const runner::PreparedRun& run,
    const PreparedWorkload& workload, int replicas);

}  // namespace servesim::planning

#endif  // SERVESIM_SIM_PLANNING_REPLICAS_H_
