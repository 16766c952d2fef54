#include "sim/engine/kv_cache_manager.h"

#include <gtest/gtest.h>

#include <random>

namespace servesim::engine {
namespace {

TEST(KvCacheManagerTest, AllocatesWholeBlocks) {
  KvCacheManager kv(10, 64, 2);
  EXPECT_TRUE(kv.GrowTo(0, 65));  // 65 tokens need 2 blocks of 64
  EXPECT_EQ(kv.blocks_of(0), 2);
  EXPECT_EQ(kv.free_blocks(), 8);
  EXPECT_TRUE(kv.GrowTo(0, 128));  // still 2 blocks
  EXPECT_EQ(kv.free_blocks(), 8);
}

TEST(KvCacheManagerTest, RefusesWithoutChangingStateWhenShort) {
  KvCacheManager kv(3, 64, 2);
  EXPECT_TRUE(kv.GrowTo(0, 128));
  EXPECT_FALSE(kv.GrowTo(1, 129));  // needs 3, 1 free
  EXPECT_EQ(kv.blocks_of(1), 0);
  EXPECT_EQ(kv.free_blocks(), 1);
}

TEST(KvCacheManagerTest, FreeReturnsEveryBlock) {
  KvCacheManager kv(8, 64, 3);
  ASSERT_TRUE(kv.GrowTo(0, 200));
  ASSERT_TRUE(kv.GrowTo(2, 64));
  kv.Free(0);
  kv.Free(2);
  EXPECT_EQ(kv.free_blocks(), 8);
  EXPECT_EQ(kv.used_blocks(), 0);
}

TEST(KvCacheManagerTest, ReleaseKeepsOnlyTheFullBlocksOfThePrefix) {
  KvCacheManager kv(10, 64, 1);
  ASSERT_TRUE(kv.GrowTo(0, 200));  // 4 blocks
  kv.Release(0, 150);              // 2 full blocks of computed tokens
  EXPECT_EQ(kv.CachedTokens(0), 128);
  EXPECT_EQ(kv.free_blocks(), 10);  // cached blocks are free, only reusable
  EXPECT_EQ(kv.blocks_of(0), 0);
}

TEST(KvCacheManagerTest, AllocationEvictsTheLeastRecentlyFreedFirstAndATailFirst) {
  // 6 blocks of 16: 2 never used, then request 0's 4 cached blocks.
  KvCacheManager kv(6, 16, 2);
  ASSERT_TRUE(kv.GrowTo(0, 64));
  kv.Release(0, 64);
  ASSERT_TRUE(kv.GrowTo(1, 48));  // the 2 unused blocks, then 0's last block
  EXPECT_EQ(kv.CachedTokens(0), 48);
  ASSERT_TRUE(kv.GrowTo(1, 96));  // 3 more: the rest of request 0's prefix
  EXPECT_EQ(kv.CachedTokens(0), 0);
  EXPECT_EQ(kv.free_blocks(), 0);
}

TEST(KvCacheManagerTest, ReclaimCountsThePrefixAgainstThePoolAndChangesNothingWhenShort) {
  KvCacheManager kv(6, 16, 2);
  ASSERT_TRUE(kv.GrowTo(0, 64));
  kv.Release(0, 64);
  ASSERT_TRUE(kv.GrowTo(1, 48));  // leaves 3 of 0's blocks, 48 tokens
  // 64 tokens need 4 blocks; only 0's 3 cached ones are free.
  EXPECT_FALSE(kv.ReclaimAndGrowTo(0, 48, 64));
  EXPECT_EQ(kv.CachedTokens(0), 48);
  EXPECT_EQ(kv.free_blocks(), 3);
  kv.Free(1);
  ASSERT_TRUE(kv.ReclaimAndGrowTo(0, 48, 64));
  EXPECT_EQ(kv.blocks_of(0), 4);
  EXPECT_EQ(kv.free_blocks(), 2);
  EXPECT_EQ(kv.CachedTokens(0), 0);
}

TEST(KvCacheManagerTest, CachedBlocksPastTheReusedPrefixStayFree) {
  KvCacheManager kv(8, 16, 1);
  ASSERT_TRUE(kv.GrowTo(0, 64));
  kv.Release(0, 64);
  ASSERT_TRUE(kv.ReclaimAndGrowTo(0, 32, 40));  // 2 reused + 1 new
  EXPECT_EQ(kv.blocks_of(0), 3);
  EXPECT_EQ(kv.free_blocks(), 5);
  kv.Free(0);
  EXPECT_EQ(kv.free_blocks(), 8);
  EXPECT_EQ(kv.CachedTokens(0), 0);
}

TEST(KvCacheManagerTest, BlocksAreConservedThroughAnyMixOfOperations) {
  // Held + free = total after every call, and no request's cached prefix
  // exceeds the free pool.
  constexpr int kRequests = 5;
  KvCacheManager kv(40, 16, kRequests);
  std::mt19937 rng(7);
  for (int i = 0; i < 5000; ++i) {
    const RequestId id = static_cast<RequestId>(rng() % kRequests);
    const int64_t tokens = static_cast<int64_t>(rng() % 300);
    switch (rng() % 4) {
      case 0:
        if (kv.blocks_of(id) > 0 || kv.CachedTokens(id) == 0) kv.GrowTo(id, tokens);
        break;
      case 1:
        if (kv.CachedTokens(id) == 0) kv.Free(id);
        break;
      case 2:
        if (kv.CachedTokens(id) == 0) kv.Release(id, tokens);
        break;
      default:
        if (kv.blocks_of(id) == 0) {
          const int64_t prefix = std::min(kv.CachedTokens(id), tokens / 16 * 16);
          kv.ReclaimAndGrowTo(id, prefix, prefix + tokens % 50);
        }
    }
    int64_t held = 0, cached = 0;
    for (RequestId r = 0; r < kRequests; ++r) {
      held += kv.blocks_of(r);
      cached += kv.CachedTokens(r) / 16;
    }
    ASSERT_EQ(held + kv.free_blocks(), kv.total_blocks()) << "after operation " << i;
    ASSERT_LE(cached, kv.free_blocks()) << "after operation " << i;
  }
}

}  // namespace
}  // namespace servesim::engine
