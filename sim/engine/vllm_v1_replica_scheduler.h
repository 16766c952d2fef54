// vLLM v1's scheduler (v0.13, vllm/v1/core/sched/scheduler.py): one token
// budget per step, running requests first, then waiting ones FCFS, chunked
// prefill, recompute preemption of the newest running request; with prefix
// caching (on by default) a preempted request takes back whatever of its KV
// has not been evicted when it is admitted again.
#ifndef SERVESIM_SIM_ENGINE_VLLM_V1_REPLICA_SCHEDULER_H_
#define SERVESIM_SIM_ENGINE_VLLM_V1_REPLICA_SCHEDULER_H_

#include <deque>
#include <vector>

#include "sim/engine/kv_cache_manager.h"
#include "sim/engine/replica_scheduler.h"

namespace servesim::engine {

struct VllmSchedulerConfig {
  int64_t max_num_batched_tokens = 8192;  // per-step token budget
  int64_t max_num_seqs = 1024;            // running requests at most
  int64_t kv_blocks = 0;                  // KV pool of this rank, in blocks
  int64_t block_size_tokens = 64;         // forced to 64 for FlashMLA sparse
  bool prefix_caching = true;             // --enable-prefix-caching (v1 default)
  SpeculativeConfig spec;
};

class VllmV1ReplicaScheduler : public ReplicaScheduler {
 public:
  VllmV1ReplicaScheduler(const VllmSchedulerConfig& config, size_t num_requests);

  void Enqueue(RequestId id, RequestTable& requests) override;
  void Schedule(RequestTable& requests, StepBatch* out) override;
  void Complete(const StepBatch& batch, RequestTable& requests, StepOutcome* out) override;

  bool HasWork() const override { return !running_.empty() || !waiting_.empty(); }
  int64_t num_waiting() const override { return static_cast<int64_t>(waiting_.size()); }
  int64_t num_running() const override { return static_cast<int64_t>(running_.size()); }
  const KvCacheManager& kv_cache() const override { return kv_; }
  int64_t num_preemptions() const { return num_preemptions_; }

 private:
  // Tokens `r` asks for this step: its pending tokens, plus drafts on decode.
  int64_t WantedTokens(const Request& r) const;
  void Preempt(RequestId id, RequestTable& requests);

  VllmSchedulerConfig config_;
  KvCacheManager kv_;
  std::vector<RequestId> running_;  // admission order: the newest is last
  std::deque<RequestId> waiting_;   // FCFS; preempted requests go to the front
  int64_t num_preemptions_ = 0;
};

}  // namespace servesim::engine

#endif  // SERVESIM_SIM_ENGINE_VLLM_V1_REPLICA_SCHEDULER_H_
