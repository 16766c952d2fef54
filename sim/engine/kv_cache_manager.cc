#include "sim/engine/kv_cache_manager.h"

#include <algorithm>

#include "base/check.h"

namespace servesim::engine {

KvCacheManager::KvCacheManager(int64_t total_blocks, int64_t block_size_tokens,
                               size_t num_requests)
    : total_blocks_(total_blocks),
      block_size_(block_size_tokens),
      free_blocks_(0),
      held_(num_requests, 0) {
  SERVESIM_CHECK(total_blocks >= 0 && block_size_tokens > 0, "bad KV pool size");
  cached_run_.assign(num_requests, free_queue_.end());
  PushFree(kNoOwner, total_blocks);
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
  return true;
}

void KvCacheManager::Free(RequestId id) { Release(id, 0); }

void KvCacheManager::Release(RequestId id, int64_t cached_tokens) {
  SERVESIM_CHECK(cached_run_[id] == free_queue_.end(), "a request released twice");
  const int64_t cached = std::min(held_[id], std::max<int64_t>(cached_tokens, 0) / block_size_);
  // Reverse order: the tail (blocks past the cached prefix) is evicted first.
  PushFree(kNoOwner, held_[id] - cached);
  if (cached > 0) {
    free_queue_.push_back({id, cached});
    cached_run_[id] = std::prev(free_queue_.end());
    free_blocks_ += cached;
  }
  held_[id] = 0;
  SERVESIM_CHECK(free_blocks_ <= total_blocks_, "KV blocks freed twice");
}

int64_t KvCacheManager::CachedTokens(RequestId id) const {
  return cached_run_[id] == free_queue_.end() ? 0 : cached_run_[id]->blocks * block_size_;
}

bool KvCacheManager::ReclaimAndGrowTo(RequestId id, int64_t prefix_tokens, int64_t tokens) {
  SERVESIM_CHECK(held_[id] == 0, "reclaiming a prefix for a request that holds blocks");
  SERVESIM_CHECK(prefix_tokens % block_size_ == 0 && prefix_tokens <= CachedTokens(id) &&
                     prefix_tokens <= tokens,
                 "reclaiming more than the cached prefix");
  const int64_t reclaimed = prefix_tokens / block_size_;
  if (BlocksFor(tokens, block_size_) > free_blocks_) return false;
  if (cached_run_[id] != free_queue_.end()) {
    // Blocks past the reused prefix stay in the queue with nothing to reuse.
    FreeQueue::iterator run = cached_run_[id];
    run->owner = kNoOwner;
    run->blocks -= reclaimed;
    if (run->blocks == 0) free_queue_.erase(run);
    cached_run_[id] = free_queue_.end();
  }
  free_blocks_ -= reclaimed;
  held_[id] = reclaimed;
  return GrowTo(id, tokens);
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
    if (front.blocks == 0) {
      if (front.owner != kNoOwner) cached_run_[front.owner] = free_queue_.end();
      free_queue_.pop_front();
    }
  }
}

}  // namespace servesim::engine
