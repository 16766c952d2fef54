#include "sim/engine/kv_cache_manager.h"

#include "base/check.h"

namespace servesim::engine {

KvCacheManager::KvCacheManager(int64_t total_blocks, int64_t block_size_tokens,
                               size_t num_requests)
    : total_blocks_(total_blocks),
      block_size_(block_size_tokens),
      free_blocks_(total_blocks),
      held_(num_requests, 0) {
  SERVESIM_CHECK(total_blocks >= 0 && block_size_tokens > 0, "bad KV pool size");
}

int64_t KvCacheManager::ExtraBlocksFor(RequestId id, int64_t tokens) const {
  const int64_t need = BlocksFor(tokens, block_size_);
  return need > held_[id] ? need - held_[id] : 0;
}

bool KvCacheManager::GrowTo(RequestId id, int64_t tokens) {
  const int64_t extra = ExtraBlocksFor(id, tokens);
  if (extra > free_blocks_) return false;
  held_[id] += extra;
  free_blocks_ -= extra;
  return true;
}

void KvCacheManager::Free(RequestId id) {
  free_blocks_ += held_[id];
  held_[id] = 0;
  SERVESIM_CHECK(free_blocks_ <= total_blocks_, "KV blocks freed twice");
}

}  // namespace servesim::engine
