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
      group_of_(num_requests, -1) {
  SERVESIM_CHECK(total_blocks >= 0 && block_size_tokens > 0, "bad KV pool size");
  cached_run_.assign(num_requests, free_queue_.end());
  PushFree(kNoOwner, total_blocks);
}

KvCacheManager::PrefixGroup* KvCacheManager::GroupFor(RequestId id) {
  return group_of_[id] < 0 ? nullptr : &groups_[group_of_[id]];
}

const KvCacheManager::PrefixGroup* KvCacheManager::GroupFor(RequestId id) const {
  return group_of_[id] < 0 ? nullptr : &groups_[group_of_[id]];
}

void KvCacheManager::JoinPrefixGroup(RequestId id, int group, int64_t shared_tokens) {
  SERVESIM_CHECK(group >= 0 && held_[id] == 0 && cached_run_[id] == free_queue_.end(),
                 "a request joins a prefix group before it allocates");
  if (static_cast<size_t>(group) >= groups_.size()) {
    const size_t old = groups_.size();
    groups_.resize(group + 1);
    for (size_t g = old; g < groups_.size(); ++g) {
      groups_[g].full_blocks = -1;
      groups_[g].run = free_queue_.end();
    }
  }
  PrefixGroup& g = groups_[group];
  const int64_t full = std::max<int64_t>(shared_tokens, 0) / block_size_;
  g.full_blocks = g.full_blocks < 0 ? full : std::min(g.full_blocks, full);
  group_of_[id] = group;
}

int64_t KvCacheManager::ExtraBlocksFor(RequestId id, int64_t tokens) const {
  const int64_t need = BlocksFor(tokens, block_size_);
  return need > held_[id] ? need - held_[id] : 0;
}

bool KvCacheManager::GrowTo(RequestId id, int64_t tokens) {
  const int64_t extra = ExtraBlocksFor(id, tokens);
  if (extra > free_blocks_) return false;
  TakeFree(extra);
  // A member computing the group's next blocks (it holds nothing of its own
  // yet and is at the group's frontier) caches them for the group; anything
  // else it computes is its own.
  PrefixGroup* g = GroupFor(id);
  if (g != nullptr && extra > 0 && held_[id] == shared_held_[id] &&
      shared_held_[id] == g->cached && g->cached < g->full_blocks) {
    const int64_t k = std::min(extra, g->full_blocks - g->cached);
    if (shared_held_[id] == 0) ++g->holders;
    g->cached += k;
    shared_held_[id] += k;
  }
  held_[id] += extra;
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
  // the group's blocks, the request's first, last.
  PushFree(kNoOwner, own - cached);
  if (cached > 0) {
    free_queue_.push_back({id, cached});
    cached_run_[id] = std::prev(free_queue_.end());
    cached_run_start_[id] = shared;
    free_blocks_ += cached;
  }
  if (shared > 0) {
    PrefixGroup& g = *GroupFor(id);
    if (--g.holders == 0) {
      free_queue_.push_back({GroupOwner(group_of_[id]), g.cached});
      g.run = std::prev(free_queue_.end());
      free_blocks_ += g.cached;
    }
  }
  held_[id] = 0;
  shared_held_[id] = 0;
  SERVESIM_CHECK(free_blocks_ <= total_blocks_, "KV blocks freed twice");
}

int64_t KvCacheManager::CachedTokens(RequestId id) const {
  const PrefixGroup* g = GroupFor(id);
  const int64_t group_blocks = g == nullptr ? 0 : g->cached;
  int64_t blocks = group_blocks;
  // The request's own run counts where it joins on to what the group has.
  if (cached_run_[id] != free_queue_.end() && cached_run_start_[id] <= group_blocks) {
    blocks = std::max(blocks, cached_run_start_[id] + cached_run_[id]->blocks);
  }
  return blocks * block_size_;
}

int64_t KvCacheManager::BlocksTakenToReclaim(RequestId id, int64_t prefix_tokens) const {
  const int64_t prefix = prefix_tokens / block_size_;
  const PrefixGroup* g = GroupFor(id);
  const int64_t from_group = g == nullptr ? 0 : std::min(prefix, g->cached);
  // Locking the group's blocks takes all of them out of the free queue when
  // nobody holds them (one run), nothing when somebody does.
  const int64_t group_cost = from_group > 0 && g->holders == 0 ? g->cached : 0;
  return group_cost + (prefix - from_group);
}

bool KvCacheManager::ReclaimAndGrowTo(RequestId id, int64_t prefix_tokens, int64_t tokens) {
  SERVESIM_CHECK(held_[id] == 0, "reclaiming a prefix for a request that holds blocks");
  SERVESIM_CHECK(prefix_tokens % block_size_ == 0 && prefix_tokens <= CachedTokens(id) &&
                     prefix_tokens <= tokens,
                 "reclaiming more than the cached prefix");
  const int64_t prefix = prefix_tokens / block_size_;
  const int64_t taken = BlocksTakenToReclaim(id, prefix_tokens);
  if (taken + BlocksFor(tokens, block_size_) - prefix > free_blocks_) return false;
  PrefixGroup* g = GroupFor(id);
  const int64_t from_group = g == nullptr ? 0 : std::min(prefix, g->cached);
  if (from_group > 0) {
    if (g->holders == 0) {
      free_blocks_ -= g->cached;
      free_queue_.erase(g->run);
      g->run = free_queue_.end();
    }
    ++g->holders;
  }
  const int64_t own = prefix - from_group;
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
  shared_held_[id] = from_group;
  return GrowTo(id, tokens);
}

int64_t KvCacheManager::group_cached_blocks(int group) const {
  return static_cast<size_t>(group) < groups_.size() ? groups_[group].cached : 0;
}

int64_t KvCacheManager::held_group_blocks() const {
  int64_t blocks = 0;
  for (const PrefixGroup& g : groups_) blocks += g.holders > 0 ? g.cached : 0;
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
    // Evicting from a group's run drops its last cached blocks.
    if (front.owner < kNoOwner) groups_[GroupOf(front.owner)].cached -= taken;
    if (front.blocks == 0) {
      if (front.owner >= 0) cached_run_[front.owner] = free_queue_.end();
      if (front.owner < kNoOwner) groups_[GroupOf(front.owner)].run = free_queue_.end();
      free_queue_.pop_front();
    }
  }
}

}  // namespace servesim::engine
