// Paged KV cache of one DP rank: a pool of fixed-size blocks, allocated to
// requests as their tokens are computed.
//
// Free blocks form one queue, least recently freed first, as vLLM's
// FreeKVCacheBlockQueue does: allocation takes from its front. A request that
// is preempted (or retracted) with prefix caching on leaves its full blocks
// there still holding its KV; re-admitted before allocation has evicted them,
// it takes its prefix back instead of recomputing it. Eviction takes a
// released request's tail blocks first (vLLM frees a request's blocks in
// reverse order), so what survives is always a prefix. No two requests share
// a prefix in servesim's workloads, so a finished request's blocks are freed
// without anything to reuse.
#ifndef SERVESIM_SIM_ENGINE_KV_CACHE_MANAGER_H_
#define SERVESIM_SIM_ENGINE_KV_CACHE_MANAGER_H_

#include <algorithm>
#include <cstdint>
#include <list>
#include <vector>

#include "sim/engine/request.h"

namespace servesim::engine {

class KvCacheManager {
 public:
  // `num_requests` sizes the per-request table (ids are dense indices).
  KvCacheManager(int64_t total_blocks, int64_t block_size_tokens, size_t num_requests);

  static int64_t BlocksFor(int64_t tokens, int64_t block_size_tokens) {
    return (tokens + block_size_tokens - 1) / block_size_tokens;
  }
  // Blocks `id` would need in addition to what it holds to cover `tokens`.
  int64_t ExtraBlocksFor(RequestId id, int64_t tokens) const;
  bool CanGrowTo(RequestId id, int64_t tokens) const {
    return ExtraBlocksFor(id, tokens) <= free_blocks_;
  }
  // Grows `id`'s allocation to cover `tokens`. Returns false (and changes
  // nothing) when the pool is short.
  bool GrowTo(RequestId id, int64_t tokens);
  // Returns every block of `id` to the pool, nothing kept for reuse.
  void Free(RequestId id);

  // Returns every block of `id` to the pool, keeping the full blocks of its
  // first `cached_tokens` tokens reusable until evicted (prefix caching).
  void Release(RequestId id, int64_t cached_tokens);
  // Tokens of `id`'s released prefix still in the pool (whole blocks).
  int64_t CachedTokens(RequestId id) const;
  // What of that prefix a returning request that knows `known_tokens` reuses:
  // whole blocks, short of its last token, which must be computed to sample
  // (vLLM's get_computed_blocks, SGLang's match_prefix, both at len - 1).
  int64_t ReusablePrefixTokens(RequestId id, int64_t known_tokens) const {
    return std::min(CachedTokens(id), (known_tokens - 1) / block_size_ * block_size_);
  }
  // For a request that holds nothing: takes back the cached blocks of its
  // first `prefix_tokens` tokens (a multiple of the block size, at most
  // CachedTokens) and grows to cover `tokens`. Returns false (and changes
  // nothing) when the pool is short; the reclaimed blocks count against it
  // too, as vLLM's allocate_slots counts the evictable cached blocks it touches.
  bool ReclaimAndGrowTo(RequestId id, int64_t prefix_tokens, int64_t tokens);

  int64_t free_blocks() const { return free_blocks_; }
  int64_t total_blocks() const { return total_blocks_; }
  int64_t used_blocks() const { return total_blocks_ - free_blocks_; }
  int64_t block_size_tokens() const { return block_size_; }
  int64_t blocks_of(RequestId id) const { return held_[id]; }

 private:
  static constexpr RequestId kNoOwner = -1;
  // Consecutive free blocks in the queue; an owner's run is its cached prefix.
  struct FreeRun {
    RequestId owner;
    int64_t blocks;
  };
  using FreeQueue = std::list<FreeRun>;

  void PushFree(RequestId owner, int64_t blocks);
  // Takes `blocks` from the front of the free queue (evicting cached prefixes).
  void TakeFree(int64_t blocks);

  int64_t total_blocks_;
  int64_t block_size_;
  int64_t free_blocks_;
  std::vector<int64_t> held_;
  FreeQueue free_queue_;
  std::vector<FreeQueue::iterator> cached_run_;  // free_queue_.end(): none
};

}  // namespace servesim::engine

#endif  // SERVESIM_SIM_ENGINE_KV_CACHE_MANAGER_H_
