// TensorRT-LLM 1.2's PyTorch-backend scheduler: a capacity scheduler that
// admits requests (GUARANTEED_NO_EVICT reserves each request's whole KV) and a
// micro-batch scheduler that packs context and generation work into one
// in-flight batch under max_batch_size and max_num_tokens.
#ifndef SERVESIM_SIM_ENGINE_TRTLLM_REPLICA_SCHEDULER_H_
#define SERVESIM_SIM_ENGINE_TRTLLM_REPLICA_SCHEDULER_H_

#include <deque>
#include <vector>

#include "sim/engine/kv_cache_manager.h"
#include "sim/engine/replica_scheduler.h"

namespace servesim::engine {

enum class TrtllmCapacityPolicy {
  // Admit only when blocks for prompt + max_tokens can be reserved; never evict.
  kGuaranteedNoEvict,
  // Allocate blocks as tokens are computed; pause (evict, recompute) the newest
  // request when they run out.
  kMaxUtilization,
};

struct TrtllmSchedulerConfig {
  int64_t max_batch_size = 2048;  // requests in flight at most
  int64_t max_num_tokens = 8192;  // tokens per step
  int64_t kv_blocks = 0;          // KV pool of this rank, in blocks
  int64_t tokens_per_block = 32;  // KvCacheConfig default
  bool enable_chunked_prefill = false;
  TrtllmCapacityPolicy policy = TrtllmCapacityPolicy::kGuaranteedNoEvict;
  SpeculativeConfig spec;
};

class TrtllmReplicaScheduler : public ReplicaScheduler {
 public:
  TrtllmReplicaScheduler(const TrtllmSchedulerConfig& config, size_t num_requests);

  void Enqueue(RequestId id, RequestTable& requests) override;
  void Schedule(RequestTable& requests, StepBatch* out) override;
  void Complete(const StepBatch& batch, RequestTable& requests, StepOutcome* out) override;

  bool HasWork() const override { return !active_.empty() || !waiting_.empty(); }
  int64_t num_waiting() const override { return static_cast<int64_t>(waiting_.size()); }
  int64_t num_running() const override { return static_cast<int64_t>(active_.size()); }
  const KvCacheManager& kv_cache() const override { return kv_; }
  int64_t num_evictions() const { return num_evictions_; }

  // Tokens GUARANTEED_NO_EVICT reserves for `r`: its whole sequence, plus
  // the draft tokens a last verification step writes.
  int64_t ReservedTokens(const Request& r) const;

 private:
  void Admit(RequestTable& requests);
  void Evict(RequestId id, RequestTable& requests);

  TrtllmSchedulerConfig config_;
  KvCacheManager kv_;
  std::vector<RequestId> active_;  // admitted, in admission order
  std::deque<RequestId> waiting_;  // FCFS; evicted requests go to the front
  int64_t num_evictions_ = 0;
};

}  // namespace servesim::engine

#endif  // SERVESIM_SIM_ENGINE_TRTLLM_REPLICA_SCHEDULER_H_
