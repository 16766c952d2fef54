#include "sim/engine/kv_cache_manager.h"

#include <algorithm>

#include "base/check.h"

namespace servesim::engine {

KvCacheManager::KvCacheManager(int64_t total_blocks, int64_t block_size_tokens,
                               size_t num_requests)
    : total_blocks_(total_blocks),
      block_size_(block_size_tokens),
      free_blocks_(0),
      held_(num_requests, 0),
      shared_held_(num_requests, 0),
      cached_run_start_(num_requests, 0),
      chain_(num_requests) {
  SERVESIM_CHECK(total_blocks >= 0 && block_size_tokens > 0, "bad KV pool size");
  cached_run_.assign(num_requests, free_queue_.end());
  PushFree(kNoOwner, total_blocks);
}

void KvCacheManager::JoinPrefixChain(RequestId id, const std::vector<int64_t>& keys,
                                     const std::vector<int64_t>& tokens) {
  SERVESIM_CHECK(keys.size() == tokens.size(), "a prefix chain needs one length per node");
  SERVESIM_CHECK(held_[id] == 0 && cached_run_[id] == free_queue_.end() && chain_[id].empty(),
                 "a request joins a prefix chain before it allocates");
  for (size_t i = 0; i < keys.size(); ++i) {
    const int64_t full = std::max<int64_t>(tokens[i], 0) / block_size_;
    auto [it, added] = node_of_key_.try_emplace(keys[i], static_cast<int32_t>(nodes_.size()));
    if (added) {
      nodes_.push_back({full, 0, 0, free_queue_.end()});
    } else {
      // The same key is the same tokens: a request whose prompt ends inside
      // the node names fewer of them, which cannot shrink what others cached.
      nodes_[it->second].full_blocks = std::max(nodes_[it->second].full_blocks, full);
    }
    chain_[id].push_back(it->second);
    // A node whose blocks a request cannot fill ends its shareable chain.
    if (full * block_size_ != tokens[i]) break;
  }
}

int64_t KvCacheManager::ChainCachedBlocks(RequestId id) const {
  int64_t blocks = 0;
  for (int32_t node : chain_[id]) {
    blocks += nodes_[node].cached;
    if (nodes_[node].cached < nodes_[node].full_blocks) break;
  }
  return blocks;
}

int64_t KvCacheManager::ExtraBlocksFor(RequestId id, int64_t tokens) const {
  const int64_t need = BlocksFor(tokens, block_size_);
  return need > held_[id] ? need - held_[id] : 0;
}

bool KvCacheManager::GrowTo(RequestId id, int64_t tokens) {
  const int64_t extra = ExtraBlocksFor(id, tokens);
  if (extra > free_blocks_) return false;
  TakeFree(extra);
  held_[id] += extra;
  // A request computing its chain's next blocks (it holds nothing of its
  // own yet and all the chain has cached) caches them for the chain;
  // anything else it computes is its own.
  if (chain_[id].empty() || extra == 0 || held_[id] - extra != shared_held_[id] ||
      shared_held_[id] != ChainCachedBlocks(id)) {
    return true;
  }
  int64_t remaining = extra;
  int64_t start = 0;
  for (int32_t index : chain_[id]) {
    PrefixNode& node = nodes_[index];
    const int64_t mine = std::clamp<int64_t>(shared_held_[id] - start, 0, node.full_blocks);
    start += node.full_blocks;
    if (mine == node.full_blocks) continue;
    // Blocks of this node that someone cached past a gap are not reachable:
    // the request computes its own.
    if (node.cached != mine || remaining == 0) break;
    const int64_t k = std::min(remaining, node.full_blocks - mine);
    if (mine == 0) ++node.holders;
    node.cached += k;
    shared_held_[id] += k;
    remaining -= k;
    if (node.cached < node.full_blocks) break;
  }
  return true;
}

void KvCacheManager::Free(RequestId id) { Release(id, 0); }

void KvCacheManager::Release(RequestId id, int64_t cached_tokens) {
  SERVESIM_CHECK(cached_run_[id] == free_queue_.end(), "a request released twice");
  const int64_t shared = shared_held_[id];
  const int64_t own = held_[id] - shared;
  const int64_t cached = std::clamp<int64_t>(
      std::max<int64_t>(cached_tokens, 0) / block_size_ - shared, 0, own);
  // Reverse order: the tail (blocks past the cached prefix) is evicted first,
  // the chain's nodes, the request's first blocks, last and deepest first.
  PushFree(kNoOwner, own - cached);
  if (cached > 0) {
    free_queue_.push_back({id, cached});
    cached_run_[id] = std::prev(free_queue_.end());
    cached_run_start_[id] = shared;
    free_blocks_ += cached;
  }
  std::vector<int32_t> held_nodes;
  ForNodesCovering(id, shared, [&](int32_t node) { held_nodes.push_back(node); });
  for (auto it = held_nodes.rbegin(); it != held_nodes.rend(); ++it) {
    PrefixNode& node = nodes_[*it];
    if (--node.holders > 0) continue;
    free_queue_.push_back({NodeOwner(*it), node.cached});
    node.run = std::prev(free_queue_.end());
    free_blocks_ += node.cached;
  }
  held_[id] = 0;
  shared_held_[id] = 0;
  SERVESIM_CHECK(free_blocks_ <= total_blocks_, "KV blocks freed twice");
}

int64_t KvCacheManager::CachedTokens(RequestId id) const {
  const int64_t chain = ChainCachedBlocks(id);
  int64_t blocks = chain;
  // The request's own run counts where it joins on to what the chain has.
  if (cached_run_[id] != free_queue_.end() && cached_run_start_[id] <= chain) {
    blocks = std::max(blocks, cached_run_start_[id] + OwnCachedTokens(id) / block_size_);
  }
  return blocks * block_size_;
}

int64_t KvCacheManager::BlocksTakenToReclaim(RequestId id, int64_t prefix_tokens) const {
  const int64_t prefix = prefix_tokens / block_size_;
  const int64_t from_chain = std::min(prefix, ChainCachedBlocks(id));
  // Locking a node takes all its blocks out of the free queue when nobody
  // holds it (one run), nothing when somebody does.
  int64_t taken = prefix - from_chain;
  ForNodesCovering(id, from_chain, [&](int32_t node) {
    if (nodes_[node].holders == 0) taken += nodes_[node].cached;
  });
  return taken;
}

bool KvCacheManager::ReclaimAndGrowTo(RequestId id, int64_t prefix_tokens, int64_t tokens) {
  SERVESIM_CHECK(held_[id] == 0, "reclaiming a prefix for a request that holds blocks");
  SERVESIM_CHECK(prefix_tokens % block_size_ == 0 && prefix_tokens <= CachedTokens(id) &&
                     prefix_tokens <= tokens,
                 "reclaiming more than the cached prefix");
  const int64_t prefix = prefix_tokens / block_size_;
  const int64_t taken = BlocksTakenToReclaim(id, prefix_tokens);
  if (taken + BlocksFor(tokens, block_size_) - prefix > free_blocks_) return false;
  const int64_t from_chain = std::min(prefix, ChainCachedBlocks(id));
  ForNodesCovering(id, from_chain, [&](int32_t index) {
    PrefixNode& node = nodes_[index];
    if (node.holders++ > 0) return;
    free_blocks_ -= node.cached;
    free_queue_.erase(node.run);
    node.run = free_queue_.end();
  });
  const int64_t own = prefix - from_chain;
  if (cached_run_[id] != free_queue_.end()) {
    // Blocks past the reused prefix stay in the queue with nothing to reuse.
    FreeQueue::iterator run = cached_run_[id];
    run->owner = kNoOwner;
    run->blocks -= own;
    if (run->blocks == 0) free_queue_.erase(run);
    cached_run_[id] = free_queue_.end();
  }
  free_blocks_ -= own;
  held_[id] = prefix;
  shared_held_[id] = from_chain;
  return GrowTo(id, tokens);
}

int64_t KvCacheManager::prefix_cached_blocks(int64_t key) const {
  auto it = node_of_key_.find(key);
  return it == node_of_key_.end() ? 0 : nodes_[it->second].cached;
}

int64_t KvCacheManager::held_prefix_blocks() const {
  int64_t blocks = 0;
  for (const PrefixNode& node : nodes_) blocks += node.holders > 0 ? node.cached : 0;
  return blocks;
}

void KvCacheManager::PushFree(RequestId owner, int64_t blocks) {
  if (blocks <= 0) return;
  free_blocks_ += blocks;
  if (owner == kNoOwner && !free_queue_.empty() && free_queue_.back().owner == kNoOwner) {
    free_queue_.back().blocks += blocks;
    return;
  }
  free_queue_.push_back({owner, blocks});
}

void KvCacheManager::TakeFree(int64_t blocks) {
  free_blocks_ -= blocks;
  while (blocks > 0) {
    SERVESIM_CHECK(!free_queue_.empty(), "free block queue out of step with its count");
    FreeRun& front = free_queue_.front();
    const int64_t taken = std::min(blocks, front.blocks);
    front.blocks -= taken;
    blocks -= taken;
    // Evicting from a node's run drops its last cached blocks.
    if (front.owner < kNoOwner) nodes_[NodeOf(front.owner)].cached -= taken;
    if (front.blocks == 0) {
      if (front.owner >= 0) cached_run_[front.owner] = free_queue_.end();
      if (front.owner < kNoOwner) nodes_[NodeOf(front.owner)].run = free_queue_.end();
      free_queue_.pop_front();
    }
  }
}

}  // namespace servesim::engine
