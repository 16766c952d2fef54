#include "sim/engine/vllm_v1_replica_scheduler.h"

#include <algorithm>

#include "base/check.h"

namespace servesim::engine {

VllmV1ReplicaScheduler::VllmV1ReplicaScheduler(const VllmSchedulerConfig& config,
                                               size_t num_requests)
    : config_(config), kv_(config.kv_blocks, config.block_size_tokens, num_requests) {}

void VllmV1ReplicaScheduler::Enqueue(RequestId id, RequestTable& requests) {
  // Requests sharing a prefix hit each other's full blocks in the prefix cache.
  const Request& r = requests[id];
  if (config_.prefix_caching && !r.prefix_node_keys.empty()) {
    kv_.JoinPrefixChain(id, r.prefix_node_keys, r.prefix_node_tokens);
  }
  waiting_.push_back(id);
}

int64_t VllmV1ReplicaScheduler::WantedTokens(const Request& r) const {
  const int64_t pending = r.known_tokens() - r.computed_tokens;
  const bool decode = pending == 1 && r.output_tokens > 0;
  return decode ? 1 + config_.spec.num_draft_tokens : pending;
}

void VllmV1ReplicaScheduler::Preempt(RequestId id, RequestTable& requests) {
  Request& r = requests[id];
  // Full blocks of computed tokens carry a block hash and stay reusable.
  kv_.Release(id, config_.prefix_caching ? r.computed_tokens : 0);
  r.computed_tokens = 0;
  ++r.preemptions;
  ++num_preemptions_;
  waiting_.push_front(id);
}

void VllmV1ReplicaScheduler::Schedule(RequestTable& requests, StepBatch* out) {
  out->clear();
  int64_t budget = config_.max_num_batched_tokens;
  bool preempted = false;

  // Running requests first, in admission order.
  size_t i = 0;
  while (i < running_.size() && budget > 0) {
    const RequestId id = running_[i];
    Request& r = requests[id];
    const int64_t tokens = std::min(WantedTokens(r), budget);
    // Under MTP a running request also holds slots for the next step's
    // drafts (allocate_slots' num_lookahead_tokens = k when use_eagle) [U:
    // recalled; vLLM caps the slots at max_model_len, which this does not].
    const int64_t lookahead = config_.spec.num_draft_tokens;
    bool scheduled = false;
    while (true) {
      if (kv_.GrowTo(id, r.computed_tokens + tokens + lookahead)) {
        scheduled = true;
        break;
      }
      // Out of blocks: preempt the newest running request (possibly this one).
      const RequestId victim = running_.back();
      running_.pop_back();
      Preempt(victim, requests);
      preempted = true;
      if (victim == id) break;
    }
    if (!scheduled) break;
    const int64_t pending = r.known_tokens() - r.computed_tokens;
    out->seqs.push_back({id, tokens, r.computed_tokens, pending == 1 && r.output_tokens > 0});
    budget -= tokens;
    ++i;
  }

  // Then waiting requests, FCFS, unless this step preempted.
  while (!preempted && !waiting_.empty() && budget > 0 &&
         static_cast<int64_t>(running_.size()) < config_.max_num_seqs) {
    const RequestId id = waiting_.front();
    Request& r = requests[id];
    int64_t hit = kv_.ReusablePrefixTokens(id, r.known_tokens());
    // The MTP drafter needs the hidden state of the last matched token, so
    // vLLM gives back the last matched block under speculative decoding
    // (find_longest_cache_hit pops it when use_eagle, which method mtp is).
    if (config_.spec.num_draft_tokens > 0) {
      hit = std::max<int64_t>(0, hit - config_.block_size_tokens);
    }
    const int64_t tokens = std::min(r.known_tokens() - hit, budget);
    if (!kv_.ReclaimAndGrowTo(id, hit, hit + tokens)) break;
    r.computed_tokens = hit;
    waiting_.pop_front();
    running_.push_back(id);
    out->seqs.push_back({id, tokens, r.computed_tokens, false});
    budget -= tokens;
  }
}

void VllmV1ReplicaScheduler::Complete(const StepBatch& batch, RequestTable& requests,
                                      StepOutcome* out) {
  CompleteStep(batch, config_.spec, requests, kv_, running_, out);
}

}  // namespace servesim::engine
