#include "sim/engine/trtllm_replica_scheduler.h"

#include <algorithm>

#include "base/check.h"

namespace servesim::engine {

TrtllmReplicaScheduler::TrtllmReplicaScheduler(const TrtllmSchedulerConfig& config,
                                               size_t num_requests)
    : config_(config), kv_(config.kv_blocks, config.tokens_per_block, num_requests) {}

void TrtllmReplicaScheduler::Enqueue(RequestId id, RequestTable& /*requests*/) {
  waiting_.push_back(id);
}

int64_t TrtllmReplicaScheduler::ReservedTokens(const Request& r) const {
  return r.prompt_tokens + r.max_output_tokens + config_.spec.num_draft_tokens;
}

void TrtllmReplicaScheduler::Evict(RequestId id, RequestTable& requests) {
  Request& r = requests[id];
  kv_.Free(id);
  r.computed_tokens = 0;
  ++r.preemptions;
  ++num_evictions_;
  active_.erase(std::find(active_.begin(), active_.end(), id));
  waiting_.push_front(id);
}

void TrtllmReplicaScheduler::Admit(RequestTable& requests) {
  // Capacity scheduler: FCFS, stopping at the first request that does not fit.
  // MAX_UTILIZATION reserves nothing ahead but counts, as it schedules, the
  // blocks each request's next step takes (MaxUtilizationScheduler's running
  // tally): a new prompt is admitted only if its blocks fit beside those of
  // the active requests and of the prompts admitted before it.
  int64_t next_step_blocks = 0;
  if (config_.policy == TrtllmCapacityPolicy::kMaxUtilization) {
    for (RequestId id : active_) {
      const Request& r = requests[id];
      // A decoding request's next step holds its new token and its drafts.
      const bool decoding = r.output_tokens > 0;
      next_step_blocks += kv_.ExtraBlocksFor(
          id, r.known_tokens() + (decoding ? config_.spec.num_draft_tokens : 0));
    }
  }
  while (!waiting_.empty() && static_cast<int64_t>(active_.size()) < config_.max_batch_size) {
    const RequestId id = waiting_.front();
    Request& r = requests[id];
    if (config_.policy == TrtllmCapacityPolicy::kGuaranteedNoEvict) {
      // The whole request's blocks are taken now, so it can never run short.
      if (!kv_.GrowTo(id, ReservedTokens(r))) break;
    } else {
      const int64_t blocks = kv_.ExtraBlocksFor(id, r.known_tokens());
      if (next_step_blocks + blocks > kv_.free_blocks()) break;
      next_step_blocks += blocks;
    }
    waiting_.pop_front();
    active_.push_back(id);
  }
}

void TrtllmReplicaScheduler::Schedule(RequestTable& requests, StepBatch* out) {
  out->clear();
  Admit(requests);
  // Micro-batch scheduler: active requests in admission order, context and
  // generation alike, until a request does not fit the token budget.
  int64_t budget = config_.max_num_tokens;
  const int64_t decode_tokens = 1 + config_.spec.num_draft_tokens;
  size_t i = 0;
  while (i < active_.size() && static_cast<int64_t>(out->seqs.size()) < config_.max_batch_size) {
    const RequestId id = active_[i];
    Request& r = requests[id];
    const int64_t pending = r.known_tokens() - r.computed_tokens;
    const bool decode = pending == 1 && r.output_tokens > 0;
    int64_t tokens = decode ? decode_tokens : pending;
    if (tokens > budget) {
      // Without chunked context a prompt runs whole or waits for a later step.
      if (decode || !config_.enable_chunked_prefill) break;
      tokens = budget / config_.tokens_per_block * config_.tokens_per_block;
      if (tokens <= 0) break;
    }
    if (config_.policy == TrtllmCapacityPolicy::kMaxUtilization) {
      bool fits = kv_.GrowTo(id, r.computed_tokens + tokens);
      while (!fits) {
        const RequestId victim = active_.back();
        Evict(victim, requests);
        if (victim == id) break;
        fits = kv_.GrowTo(id, r.computed_tokens + tokens);
      }
      if (!fits) break;
    } else {
      SERVESIM_CHECK(kv_.blocks_of(id) * config_.tokens_per_block >=
                         r.computed_tokens + tokens,
                     "a no-evict request outgrew its reservation");
    }
    out->seqs.push_back({id, tokens, r.computed_tokens, decode});
    budget -= tokens;
    ++i;
  }
}

void TrtllmReplicaScheduler::Complete(const StepBatch& batch, RequestTable& requests,
                                      StepOutcome* out) {
  CompleteStep(batch, config_.spec, requests, kv_, active_, out);
}

}  // namespace servesim::engine
