// Paged KV cache of one DP rank: a pool of fixed-size blocks, allocated to
// requests as their tokens are computed and freed all at once.
#ifndef SERVESIM_SIM_ENGINE_KV_CACHE_MANAGER_H_
#define SERVESIM_SIM_ENGINE_KV_CACHE_MANAGER_H_

#include <cstdint>
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
  void Free(RequestId id);

  int64_t free_blocks() const { return free_blocks_; }
  int64_t total_blocks() const { return total_blocks_; }
  int64_t used_blocks() const { return total_blocks_ - free_blocks_; }
  int64_t block_size_tokens() const { return block_size_; }
  int64_t blocks_of(RequestId id) const { return held_[id]; }

 private:
  int64_t total_blocks_;
  int64_t block_size_;
  int64_t free_blocks_;
  std::vector<int64_t> held_;
};

}  // namespace servesim::engine

#endif  // SERVESIM_SIM_ENGINE_KV_CACHE_MANAGER_H_
