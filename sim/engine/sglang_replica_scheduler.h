// SGLang v0.5.6's scheduler (python/sglang/srt/managers/scheduler.py and
// schedule_policy.py PrefillAdder): prefill-priority batches, one chunked
// request at a time, new-token-ratio KV admission and decode retraction.
#ifndef SERVESIM_SIM_ENGINE_SGLANG_REPLICA_SCHEDULER_H_
#define SERVESIM_SIM_ENGINE_SGLANG_REPLICA_SCHEDULER_H_

#include <deque>
#include <vector>

#include "sim/engine/kv_cache_manager.h"
#include "sim/engine/replica_scheduler.h"

namespace servesim::engine {

struct SglangSchedulerConfig {
  // Prefill tokens per batch (per DP rank, after SGLang's //dp_size); <= 0
  // disables chunking (a prompt then prefills whole).
  int64_t chunked_prefill_size = 8192;
  int64_t max_prefill_tokens = 16384;   // --max-prefill-tokens per prefill batch
  int64_t max_running_requests = 4096;  // per DP rank
  int64_t kv_blocks = 0;                // KV pool of this rank, in pages
  int64_t page_size_tokens = 64;        // forced to 64 for DeepSeek NSA
  // new_token_ratio: the share of each running request's remaining output
  // that admission reserves. SGLang: init = min(0.7 * conservativeness, 1),
  // min = init * 0.14, decay = (init - min) / 600 per decode step
  // (environ.py SGLANG_INIT_NEW_TOKEN_RATIO etc.; use FromConservativeness).
  double init_new_token_ratio = 0.7;
  double min_new_token_ratio = 0.098;
  double new_token_ratio_decay = (0.7 - 0.098) / 600;
  int64_t clip_max_new_tokens = 4096;  // SGLANG_CLIP_MAX_NEW_TOKENS_ESTIMATION
  int64_t retract_decode_steps = 20;   // SGLANG_RETRACT_DECODE_STEPS
  // --enable-mixed-chunk: a prefill batch also carries the running decodes.
  bool enable_mixed_chunk = false;
  // Radix cache (on unless --disable-radix-cache): a retracted request's
  // prompt stays in the tree, evictable, and is matched when it returns; a
  // request sharing a prefix with one before it reuses those pages.
  bool radix_cache = true;
  SpeculativeConfig spec;

  // Sets the three ratio fields from --schedule-conservativeness (already
  // x0.3 under DP attention).
  void SetConservativeness(double schedule_conservativeness);
};

class SglangReplicaScheduler : public ReplicaScheduler {
 public:
  SglangReplicaScheduler(const SglangSchedulerConfig& config, size_t num_requests);

  void Enqueue(RequestId id, RequestTable& requests) override;
  void Schedule(RequestTable& requests, StepBatch* out) override;
  bool SchedulePrefillOnly(RequestTable& requests, StepBatch* out) override;
  void ScheduleDecodeOnly(RequestTable& requests, StepBatch* out) override;
  void Complete(const StepBatch& batch, RequestTable& requests, StepOutcome* out) override;
  // self_check_during_idle resets new_token_ratio to its initial value:
  // admission after a lull starts conservative again.
  void OnEngineIdle() override { new_token_ratio_ = config_.init_new_token_ratio; }

  bool HasWork() const override { return !running_.empty() || !waiting_.empty() || chunked_ >= 0; }
  int64_t num_waiting() const override { return static_cast<int64_t>(waiting_.size()); }
  int64_t num_running() const override {
    return static_cast<int64_t>(running_.size()) + (chunked_ >= 0 ? 1 : 0);
  }
  const KvCacheManager& kv_cache() const override { return kv_; }
  double new_token_ratio() const { return new_token_ratio_; }
  int64_t num_retractions() const { return num_retractions_; }

 private:
  // A prefill batch from the chunked request and the waiting queue (the
  // PrefillAdder); false when none can be formed.
  bool SchedulePrefill(RequestTable& requests, StepBatch* out);

  // One prefill batch as it is formed and its budgets (defined in the .cc).
  struct PrefillAdder;
  // get_new_batch_prefill's first checks: false while no chunked request
  // continues and the running batch is full (marked so, or at the running
  // cap, which marks it) or nothing waits.
  bool RunningBatchAdmitsPrefill();
  // A PrefillAdder's budgets before any admission: the KV room less the
  // running requests' expected output at new_token_ratio; the input and chunk
  // budgets less the decodes a mixed chunk carries.
  PrefillAdder NewPrefillAdder(const RequestTable& requests) const;
  // add_chunked_req: the chunked request continues first. Its budget was
  // taken when it was first admitted, so only the chunk size limits it.
  void AddChunkedRequest(RequestTable& requests, PrefillAdder& adder);
  // The waiting queue in FCFS order, stopping at the first request that does
  // not fit (no skipping) or once a budget is spent.
  void AddWaitingRequests(RequestTable& requests, PrefillAdder& adder);
  // add_one_req for the head of the waiting queue: admits it whole, or its
  // first chunk as the chunked request; false when it does not fit.
  bool AddOneRequest(RequestTable& requests, PrefillAdder& adder);
  // Takes `id` (the head of the waiting queue) off the queue into the batch
  // with `tokens` to compute past its matched prefix of `hit` tokens; false,
  // and nothing taken, when the pool has no room for them.
  bool StartPrefill(RequestId id, Request& r, int64_t hit, int64_t tokens, PrefillAdder& adder);
  // --enable-mixed-chunk: the running decodes join the prefill batch.
  void MixWithRunning(RequestTable& requests, StepBatch* out);
  bool Chunking() const { return config_.chunked_prefill_size > 0; }

  // A decode batch of every running request, retracting on KV shortage.
  void ScheduleDecode(RequestTable& requests, StepBatch* out);
  // Remaining output the admission check reserves for `r`.
  int64_t ClippedRemainingOutput(const Request& r) const;
  // What an admitted request's budget update reserves: its whole max_new_tokens,
  // clipped (_update_prefill_budget does not subtract a retracted request's outputs).
  int64_t ClippedMaxNewTokens(const Request& r) const;
  int64_t DecodeTokens() const { return 1 + config_.spec.num_draft_tokens; }

  SglangSchedulerConfig config_;
  KvCacheManager kv_;
  std::vector<RequestId> running_;  // the decode batch, in admission order
  std::deque<RequestId> waiting_;   // FCFS; retracted requests rejoin at the back
  RequestId chunked_ = -1;          // the partially prefilled request, if any
  double new_token_ratio_;
  // running_batch.batch_is_full: set when admission stops for KV room or the
  // running cap; cleared when the next decode step drops a finished request,
  // on a retraction, or when the running batch empties.
  bool batch_is_full_ = false;
  // Requests finished since the last decode step was formed: SGLang filters
  // them out of the running batch (and clears batch_is_full_) only in
  // update_running_batch, when it forms the next decode step.
  bool finished_since_decode_ = false;
  int64_t num_retractions_ = 0;
};

}  // namespace servesim::engine

#endif  // SERVESIM_SIM_ENGINE_SGLANG_REPLICA_SCHEDULER_H_
