// Paged KV cache of one DP rank: a pool of fixed-size blocks, allocated to
// requests as their tokens are computed.
//
// Free blocks form one queue, least recently freed first, as vLLM's
// FreeKVCacheBlockQueue does: allocation takes from its front. A request that
// is preempted (or retracted) with prefix caching on leaves its full blocks
// there still holding its KV; re-admitted before allocation has evicted them,
// it takes its prefix back instead of recomputing it. Eviction takes a
// released request's tail blocks first (vLLM frees a request's blocks in
// reverse order), so what survives is always a prefix.
//
// Requests can share a prefix: a chain of prefix nodes, each a run of tokens
// named by a key, whose keys say what is the same (one node for vllm bench
// serve's --random-prefix-len behind the chat template's leading tokens; one
// per 512-token block of a Mooncake trace's hash_ids, which name a block with
// everything before it). A node's full blocks are cached once: the request
// that computes them first extends the node, later ones take them as a
// prefix hit (vLLM's get_computed_blocks, SGLang's match_prefix) as far as
// the chain is cached without a gap, and they stay cached, evictable, after
// their last holder is done; a released chain is evicted deepest node first.
// A request's own blocks past its chain's are private, and a finished
// request's private blocks are freed with nothing to reuse.
#ifndef SERVESIM_SIM_ENGINE_KV_CACHE_MANAGER_H_
#define SERVESIM_SIM_ENGINE_KV_CACHE_MANAGER_H_

#include <algorithm>
#include <cstdint>
#include <list>
#include <unordered_map>
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
  // Grows `id`'s allocation to cover `tokens`. Returns false (and changes
  // nothing) when the pool is short.
  bool GrowTo(RequestId id, int64_t tokens);
  // Returns every block of `id` to the pool, nothing of its own kept for
  // reuse (its chain's nodes stay cached for other requests).
  void Free(RequestId id);

  // Gives `id` the prefix chain `keys` (node i spans `tokens[i]` tokens; a
  // key names the same tokens, after the same chain, in every request that
  // has it). Call before `id` allocates anything.
  void JoinPrefixChain(RequestId id, const std::vector<int64_t>& keys,
                       const std::vector<int64_t>& tokens);

  // Returns every block of `id` to the pool, keeping the full blocks of its
  // first `cached_tokens` tokens reusable until evicted (prefix caching).
  void Release(RequestId id, int64_t cached_tokens);
  // Tokens of `id`'s released prefix still in the pool (whole blocks): its
  // chain's cached blocks and, where they join on, its own.
  int64_t CachedTokens(RequestId id) const;
  // Of its own blocks (past its chain's), those still cached after a release.
  int64_t OwnCachedTokens(RequestId id) const {
    return cached_run_[id] == free_queue_.end() ? 0 : cached_run_[id]->blocks * block_size_;
  }
  // What of that prefix a request that knows `known_tokens` reuses: whole
  // blocks, short of its last token, which must be computed to sample
  // (vLLM's get_computed_blocks, SGLang's match_prefix, both at len - 1).
  int64_t ReusablePrefixTokens(RequestId id, int64_t known_tokens) const {
    return std::min(CachedTokens(id), (known_tokens - 1) / block_size_ * block_size_);
  }
  // Free blocks that taking back `prefix_tokens` of `id`'s cached prefix
  // uses up: evictable blocks it locks (a chain node's blocks that another
  // request holds cost nothing).
  int64_t BlocksTakenToReclaim(RequestId id, int64_t prefix_tokens) const;
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
  // Blocks covering `id`'s tokens, its chain's shared ones included.
  int64_t blocks_of(RequestId id) const { return held_[id]; }
  // Of those, its chain's (each counted once in the pool, however many
  // requests hold them).
  int64_t shared_blocks_of(RequestId id) const { return shared_held_[id]; }
  // Blocks the prefix node `key` has in the pool, held or evictable.
  int64_t prefix_cached_blocks(int64_t key) const;
  // Prefix nodes' blocks that some request holds: not free, not private.
  int64_t held_prefix_blocks() const;

 private:
  // A free run's owner: a request (>= 0), nobody, or a prefix node.
  static constexpr RequestId kNoOwner = -1;
  static constexpr RequestId NodeOwner(int32_t node) { return -2 - node; }
  static constexpr int32_t NodeOf(RequestId owner) { return -2 - owner; }
  // Consecutive free blocks in the queue; an owner's run is its cached prefix.
  struct FreeRun {
    RequestId owner;
    int64_t blocks;
  };
  using FreeQueue = std::list<FreeRun>;
  struct PrefixNode {
    int64_t full_blocks = 0;  // whole blocks of the node's tokens
    int64_t cached = 0;       // of them, blocks in the pool (held or evictable)
    int64_t holders = 0;      // requests holding them; 0: they are a free run
    FreeQueue::iterator run;  // that run, or the queue's end
  };

  void PushFree(RequestId owner, int64_t blocks);
  // Takes `blocks` from the front of the free queue (evicting cached prefixes).
  void TakeFree(int64_t blocks);
  // Blocks of `id`'s chain cached without a gap from its start.
  int64_t ChainCachedBlocks(RequestId id) const;
  // Calls f(node) for the nodes of `id`'s chain that cover its first
  // `blocks` blocks, in chain order.
  template <typename F>
  void ForNodesCovering(RequestId id, int64_t blocks, F f) const {
    int64_t start = 0;
    for (int32_t node : chain_[id]) {
      if (start >= blocks) break;
      f(node);
      start += nodes_[node].full_blocks;
    }
  }

  int64_t total_blocks_;
  int64_t block_size_;
  int64_t free_blocks_;
  std::vector<int64_t> held_;         // blocks covering each request's tokens
  std::vector<int64_t> shared_held_;  // of them, its chain's
  FreeQueue free_queue_;
  std::vector<FreeQueue::iterator> cached_run_;  // free_queue_.end(): none
  // Where a request's own cached run starts (its chain's blocks come first).
  std::vector<int64_t> cached_run_start_;
  std::vector<std::vector<int32_t>> chain_;  // per request, indices into nodes_
  std::vector<PrefixNode> nodes_;
  std::unordered_map<int64_t, int32_t> node_of_key_;
};

}  // namespace servesim::engine

#endif  // SERVESIM_SIM_ENGINE_KV_CACHE_MANAGER_H_
