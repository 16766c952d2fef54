#include "sim/engine/sglang_replica_scheduler.h"

#include <algorithm>
#include <limits>

#include "base/check.h"

namespace servesim::engine {

void SglangSchedulerConfig::SetConservativeness(double schedule_conservativeness) {
  // scheduler.py: init_new_token_ratio = min(SGLANG_INIT_NEW_TOKEN_RATIO (0.7)
  // * conservativeness, 1); min = init * SGLANG_MIN_NEW_TOKEN_RATIO_FACTOR
  // (0.14); decay over SGLANG_NEW_TOKEN_RATIO_DECAY_STEPS (600) decode steps.
  init_new_token_ratio = std::min(0.7 * schedule_conservativeness, 1.0);
  min_new_token_ratio = init_new_token_ratio * 0.14;
  new_token_ratio_decay = (init_new_token_ratio - min_new_token_ratio) / 600;
}

SglangReplicaScheduler::SglangReplicaScheduler(const SglangSchedulerConfig& config,
                                               size_t num_requests)
    : config_(config),
      kv_(config.kv_blocks, config.page_size_tokens, num_requests),
      new_token_ratio_(config.init_new_token_ratio) {}

void SglangReplicaScheduler::Enqueue(RequestId id, RequestTable& requests) {
  // Requests sharing a prefix match it in the radix tree.
  const Request& r = requests[id];
  if (config_.radix_cache && !r.prefix_node_keys.empty()) {
    kv_.JoinPrefixChain(id, r.prefix_node_keys, r.prefix_node_tokens);
  }
  waiting_.push_back(id);
}

int64_t SglangReplicaScheduler::ClippedRemainingOutput(const Request& r) const {
  return std::min(r.max_output_tokens - r.output_tokens, config_.clip_max_new_tokens);
}

int64_t SglangReplicaScheduler::ClippedMaxNewTokens(const Request& r) const {
  return std::min(r.max_output_tokens, config_.clip_max_new_tokens);
}

void SglangReplicaScheduler::Schedule(RequestTable& requests, StepBatch* out) {
  // Prefill priority (get_next_batch_to_run): a new prefill batch whenever one
  // can be formed, else one decode step of the whole running batch.
  if (SchedulePrefillOnly(requests, out)) return;
  ScheduleDecodeOnly(requests, out);
}

bool SglangReplicaScheduler::SchedulePrefillOnly(RequestTable& requests, StepBatch* out) {
  out->clear();
  return SchedulePrefill(requests, out);
}

void SglangReplicaScheduler::ScheduleDecodeOnly(RequestTable& requests, StepBatch* out) {
  out->clear();
  ScheduleDecode(requests, out);
}

// SGLang's PrefillAdder (schedule_policy.py): one prefill batch as it is
// formed, with the budgets each admission charges.
struct SglangReplicaScheduler::PrefillAdder {
  int64_t page = 0;  // tokens per KV page
  // rem_total_tokens: the KV room left, less what admitted requests are
  // expected to write.
  double rem_total = 0;
  int64_t rem_input = 0;  // rem_input_tokens: what --max-prefill-tokens leaves
  int64_t rem_chunk = 0;  // rem_chunk_tokens: what --chunked-prefill-size leaves
  std::vector<ScheduledSeq> prefill;
  std::vector<RequestId> joined;  // prefill completes this step: join the decode batch
  // Prefix nodes this batch computes. SGLang inserts a prefill's KV into the
  // radix tree after the forward (cache_unfinished_req), so a later member
  // of the same batch does not match them and computes them again.
  std::vector<int64_t> computed_here;

  // PrefillAdder charges its budgets in whole KV pages (ceil_paged_tokens in
  // add_one_req and _update_prefill_budget): a 100-token prompt takes 128 of
  // a batch's chunk budget with 64-token pages.
  int64_t Paged(int64_t tokens) const { return (tokens + page - 1) / page * page; }

  // The nodes `r` caches first between its tokens `from` and `to` (what it
  // adds to its chain's shared blocks; a prefix someone else cached it
  // computes as its own, and that is no new node).
  void NoteComputed(const Request& r, int64_t from, int64_t to) {
    if (to <= from) return;  // nothing newly cached (a node's partial page never is)
    int64_t start = 0;
    for (size_t i = 0; i < r.prefix_node_keys.size() && start < to; ++i) {
      const int64_t end = start + r.prefix_node_tokens[i];
      if (end > from) computed_here.push_back(r.prefix_node_keys[i]);
      start = end;
    }
  }

  // The part of `r`'s cached prefix `hit` that it can match: the whole pages
  // before the first node this batch computes.
  int64_t Matchable(const Request& r, int64_t hit) const {
    int64_t end = 0;
    for (size_t i = 0; i < r.prefix_node_keys.size(); ++i) {
      if (std::find(computed_here.begin(), computed_here.end(), r.prefix_node_keys[i]) !=
          computed_here.end()) {
        return std::min(hit, end / page * page);
      }
      end += r.prefix_node_tokens[i];
    }
    return hit;
  }
};

bool SglangReplicaScheduler::SchedulePrefill(RequestTable& requests, StepBatch* out) {
  if (!RunningBatchAdmitsPrefill()) return false;
  PrefillAdder adder = NewPrefillAdder(requests);
  if (chunked_ >= 0) AddChunkedRequest(requests, adder);
  AddWaitingRequests(requests, adder);
  if (adder.prefill.empty()) return false;
  if (config_.enable_mixed_chunk) MixWithRunning(requests, out);
  out->seqs.insert(out->seqs.begin(), adder.prefill.begin(), adder.prefill.end());
  running_.insert(running_.end(), adder.joined.begin(), adder.joined.end());
  return true;
}

bool SglangReplicaScheduler::RunningBatchAdmitsPrefill() {
  // The flag belongs to the running batch, which an empty one does not keep.
  if (running_.empty()) batch_is_full_ = false;
  // get_new_batch_prefill: no prefill while the running batch is marked full
  // (by a request refused for KV room or by the running cap) until it shrinks.
  if (chunked_ < 0 && (batch_is_full_ || waiting_.empty())) return false;
  if (chunked_ < 0 && static_cast<int64_t>(running_.size()) >= config_.max_running_requests) {
    batch_is_full_ = true;
    return false;
  }
  return true;
}

SglangReplicaScheduler::PrefillAdder SglangReplicaScheduler::NewPrefillAdder(
    const RequestTable& requests) const {
  PrefillAdder adder;
  adder.page = config_.page_size_tokens;
  // rem_total: free KV minus the output the running requests are still
  // expected to write, at new_token_ratio.
  adder.rem_total = static_cast<double>(kv_.free_blocks() * adder.page);
  for (RequestId id : running_) {
    adder.rem_total -=
        static_cast<double>(ClippedRemainingOutput(requests[id])) * new_token_ratio_;
  }
  // Mixed chunk: the decodes ride in the prefill batch and take budget.
  const int64_t mixed = config_.enable_mixed_chunk ? static_cast<int64_t>(running_.size()) : 0;
  adder.rem_input = config_.max_prefill_tokens - mixed;
  adder.rem_chunk = Chunking() ? config_.chunked_prefill_size - mixed
                               : std::numeric_limits<int64_t>::max();
  return adder;
}

void SglangReplicaScheduler::AddChunkedRequest(RequestTable& requests, PrefillAdder& adder) {
  Request& r = requests[chunked_];
  const int64_t pending = r.known_tokens() - r.computed_tokens;
  const int64_t extend = std::min(pending, adder.rem_chunk);
  const int64_t shared_before = kv_.shared_blocks_of(chunked_) * adder.page;
  if (extend <= 0 || !kv_.GrowTo(chunked_, r.computed_tokens + extend)) return;
  adder.NoteComputed(r, shared_before, kv_.shared_blocks_of(chunked_) * adder.page);
  adder.prefill.push_back({chunked_, extend, r.computed_tokens, false});
  adder.rem_total -= static_cast<double>(adder.Paged(extend));
  adder.rem_input -= adder.Paged(extend);
  adder.rem_chunk -= adder.Paged(extend);
  if (extend == pending) {
    adder.rem_total -= static_cast<double>(ClippedMaxNewTokens(r));
    adder.joined.push_back(chunked_);
    chunked_ = -1;
  }
}

void SglangReplicaScheduler::AddWaitingRequests(RequestTable& requests, PrefillAdder& adder) {
  while (chunked_ < 0 && !waiting_.empty()) {
    // The running cap, or no KV room left (budget_state's NO_TOKEN), marks the
    // batch full; an exhausted input or chunk budget (OTHER) does not.
    if (static_cast<int64_t>(running_.size() + adder.prefill.size()) >=
            config_.max_running_requests ||
        adder.rem_total <= 0) {
      batch_is_full_ = true;
      return;
    }
    if (adder.rem_input <= 0 || adder.rem_chunk <= 0) return;
    if (!AddOneRequest(requests, adder)) return;
  }
}

bool SglangReplicaScheduler::AddOneRequest(RequestTable& requests, PrefillAdder& adder) {
  const RequestId id = waiting_.front();
  Request& r = requests[id];
  // match_prefix: a retracted request's prompt pages still in the tree.
  const int64_t hit = adder.Matchable(r, kv_.ReusablePrefixTokens(id, r.known_tokens()));
  const int64_t extend = r.known_tokens() - hit;
  const int64_t reserve = ClippedRemainingOutput(r);
  // add_one_req: NO_TOKEN when input + clipped max_new_tokens does not fit;
  // locking the matched prefix takes it out of the evictable room (nothing
  // where another running request has it locked already).
  const int64_t locked = kv_.BlocksTakenToReclaim(id, hit) * adder.page;
  if (static_cast<double>(extend + reserve + locked) >= adder.rem_total) {
    batch_is_full_ = true;  // add_one_req's NO_TOKEN
    return false;
  }
  // A whole prompt over the max_prefill_tokens budget only as the batch's
  // first. Whether it fits the chunk is its raw length, as the chunked
  // request's remainder is [U: add_one_req may compare the paged length;
  // the two differ only where the chunk budget is not a page multiple].
  const int64_t input = adder.Paged(extend);
  if (input >= adder.rem_input && !adder.prefill.empty()) return false;
  if (!Chunking() || extend <= adder.rem_chunk) {
    if (!StartPrefill(id, r, hit, extend, adder)) return false;
    adder.joined.push_back(id);
    adder.rem_total -= static_cast<double>(input + ClippedMaxNewTokens(r) + locked);
    adder.rem_input -= input;
    adder.rem_chunk -= input;
    return true;
  }
  // Too long for the chunk budget: truncate to whole pages and carry on
  // with this request in later batches.
  const int64_t trunc = adder.rem_chunk / adder.page * adder.page;
  if (trunc <= 0 || !StartPrefill(id, r, hit, trunc, adder)) return false;
  adder.rem_total -= static_cast<double>(trunc + locked);
  chunked_ = id;
  return true;
}

bool SglangReplicaScheduler::StartPrefill(RequestId id, Request& r, int64_t hit, int64_t tokens,
                                          PrefillAdder& adder) {
  if (!kv_.ReclaimAndGrowTo(id, hit, hit + tokens)) return false;
  r.computed_tokens = hit;
  adder.NoteComputed(r, hit, kv_.shared_blocks_of(id) * adder.page);
  adder.prefill.push_back({id, tokens, r.computed_tokens, false});
  waiting_.pop_front();
  return true;
}

void SglangReplicaScheduler::MixWithRunning(RequestTable& requests, StepBatch* out) {
  // mix_with_running: the running decodes join when their KV fits.
  for (RequestId id : running_) {
    Request& r = requests[id];
    if (!kv_.GrowTo(id, r.computed_tokens + DecodeTokens())) continue;
    out->seqs.push_back({id, DecodeTokens(), r.computed_tokens, true});
  }
}

void SglangReplicaScheduler::ScheduleDecode(RequestTable& requests, StepBatch* out) {
  // update_running_batch: filter_batch drops the finished requests, and a
  // batch that lost requests is no longer full.
  if (finished_since_decode_) batch_is_full_ = false;
  finished_since_decode_ = false;
  if (running_.empty()) return;
  const int64_t page = config_.page_size_tokens;
  auto pages_needed = [&] {
    int64_t need = 0;
    for (RequestId id : running_) {
      need += kv_.ExtraBlocksFor(id, requests[id].computed_tokens + DecodeTokens());
    }
    return need;
  };
  if (pages_needed() > kv_.free_blocks()) {
    // retract_decode: victims in order of fewest outputs, ties longest input,
    // until the rest have retract_decode_steps tokens of room each.
    std::vector<RequestId> order = running_;
    std::stable_sort(order.begin(), order.end(), [&](RequestId a, RequestId b) {
      const Request& x = requests[a];
      const Request& y = requests[b];
      if (x.output_tokens != y.output_tokens) return x.output_tokens > y.output_tokens;
      return x.prompt_tokens < y.prompt_tokens;
    });
    while (order.size() > 1 &&
           (pages_needed() > kv_.free_blocks() ||
            kv_.free_blocks() * page <
                static_cast<int64_t>(order.size()) * config_.retract_decode_steps)) {
      const RequestId victim = order.back();
      order.pop_back();
      Request& v = requests[victim];
      // retract_decode frees what follows the request's cached prefix (its
      // prompt, inserted into the tree when its prefill finished).
      kv_.Release(victim, config_.radix_cache ? std::min(v.prompt_tokens, v.computed_tokens) : 0);
      v.computed_tokens = 0;
      ++v.preemptions;
      ++num_retractions_;
      running_.erase(std::find(running_.begin(), running_.end(), victim));
      waiting_.push_back(victim);
    }
    // The retracted requests' share of the expected output comes back as a
    // higher ratio: (decoded + steps * reqs) / max_new_tokens of the rest.
    int64_t decoded = 0, max_new = 0;
    for (RequestId id : running_) {
      decoded += requests[id].output_tokens;
      max_new += requests[id].max_output_tokens;
    }
    batch_is_full_ = false;  // the batch shrank
    new_token_ratio_ = std::min(
        1.0, static_cast<double>(decoded + config_.retract_decode_steps *
                                               static_cast<int64_t>(running_.size())) /
                 static_cast<double>(max_new + 1));
  } else {
    new_token_ratio_ =
        std::max(new_token_ratio_ - config_.new_token_ratio_decay, config_.min_new_token_ratio);
  }
  for (RequestId id : running_) {
    Request& r = requests[id];
    if (!kv_.GrowTo(id, r.computed_tokens + DecodeTokens())) continue;  // pool smaller than one request
    out->seqs.push_back({id, DecodeTokens(), r.computed_tokens, true});
  }
}

void SglangReplicaScheduler::Complete(const StepBatch& batch, RequestTable& requests,
                                      StepOutcome* out) {
  const size_t first_finished = out->finished.size();
  CompleteStep(batch, config_.spec, requests, kv_, running_, out);
  // The batch is marked not full when update_running_batch filters these
  // out, as it forms the next decode step (ScheduleDecode), not now: a
  // prefill refused for room waits for that decode step, unless the batch
  // is now empty (an idle loop, no step, clears it; RunningBatchAdmitsPrefill).
  if (out->finished.size() > first_finished) finished_since_decode_ = true;
}

}  // namespace servesim::engine
