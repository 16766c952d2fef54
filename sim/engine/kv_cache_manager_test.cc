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

// Three requests share 40 tokens (one prefix node): two whole blocks of 16.
TEST(KvCacheManagerTest, APrefixNodesBlocksAreComputedOnceAndHitByLaterRequests) {
  KvCacheManager kv(10, 16, 3);
  for (RequestId r = 0; r < 3; ++r) kv.JoinPrefixChain(r, {0}, {40});
  EXPECT_EQ(kv.ReusablePrefixTokens(0, 100), 0);  // nothing cached yet
  ASSERT_TRUE(kv.GrowTo(0, 50));                   // 4 blocks: 2 for the group, 2 its own
  EXPECT_EQ(kv.prefix_cached_blocks(0), 2);
  EXPECT_EQ(kv.shared_blocks_of(0), 2);
  EXPECT_EQ(kv.free_blocks(), 6);
  // The next member hits both shared blocks, which cost the pool nothing.
  EXPECT_EQ(kv.ReusablePrefixTokens(1, 100), 32);
  EXPECT_EQ(kv.BlocksTakenToReclaim(1, 32), 0);
  ASSERT_TRUE(kv.ReclaimAndGrowTo(1, 32, 50));  // 2 shared + 2 new
  EXPECT_EQ(kv.free_blocks(), 4);
  EXPECT_EQ(kv.held_prefix_blocks(), 2);
  // The group's blocks outlive their holders and stay reusable until evicted.
  kv.Free(0);
  kv.Free(1);
  EXPECT_EQ(kv.free_blocks(), 10);
  EXPECT_EQ(kv.ReusablePrefixTokens(2, 100), 32);
  EXPECT_EQ(kv.BlocksTakenToReclaim(2, 32), 2);  // nobody holds them: locking takes them
  ASSERT_TRUE(kv.ReclaimAndGrowTo(2, 32, 33));
  EXPECT_EQ(kv.free_blocks(), 7);
}

TEST(KvCacheManagerTest, EvictingANodesRunDropsItsLastBlocksFirst) {
  KvCacheManager kv(4, 16, 3);
  for (RequestId r = 0; r < 2; ++r) kv.JoinPrefixChain(r, {0}, {64});
  ASSERT_TRUE(kv.GrowTo(0, 64));  // the group's 4 blocks
  kv.Free(0);
  ASSERT_TRUE(kv.GrowTo(2, 16));  // a stranger evicts one block of the group
  EXPECT_EQ(kv.prefix_cached_blocks(0), 3);
  EXPECT_EQ(kv.ReusablePrefixTokens(1, 100), 48);
}

// A request that did not take the chain's cached blocks keeps what it
// computes itself private: vLLM caches a block's hash once.
TEST(KvCacheManagerTest, OnlyTheRequestAtTheChainsFrontierExtendsIt) {
  KvCacheManager kv(20, 16, 2);
  for (RequestId r = 0; r < 2; ++r) kv.JoinPrefixChain(r, {0}, {64});
  ASSERT_TRUE(kv.GrowTo(0, 16));                // group: 1 block
  ASSERT_TRUE(kv.ReclaimAndGrowTo(1, 0, 64));   // 1 did not take the hit: 4 own blocks
  EXPECT_EQ(kv.shared_blocks_of(1), 0);
  ASSERT_TRUE(kv.GrowTo(0, 64));                // 0 carries on: group 4 blocks
  EXPECT_EQ(kv.prefix_cached_blocks(0), 4);
  EXPECT_EQ(kv.free_blocks(), 20 - 4 - 4);
}

// Mooncake-style chains: A = [1, 2], B = [1, 3], C = [1, 2, 4], blocks of
// 16 and nodes of 32 tokens. B shares node 1 with A; C shares 1 and 2; a
// chain hits only as far as it is cached without a gap.
TEST(KvCacheManagerTest, ChainsShareTheirCommonNodesOnly) {
  KvCacheManager kv(40, 16, 3);
  kv.JoinPrefixChain(0, {1, 2}, {32, 32});
  kv.JoinPrefixChain(1, {1, 3}, {32, 32});
  kv.JoinPrefixChain(2, {1, 2, 4}, {32, 32, 32});
  ASSERT_TRUE(kv.GrowTo(0, 70));  // nodes 1 and 2 (4 blocks), 1 block its own
  EXPECT_EQ(kv.shared_blocks_of(0), 4);
  EXPECT_EQ(kv.ReusablePrefixTokens(1, 100), 32);  // node 1 only
  EXPECT_EQ(kv.ReusablePrefixTokens(2, 100), 64);  // nodes 1 and 2
  ASSERT_TRUE(kv.ReclaimAndGrowTo(1, 32, 64));     // computes node 3 for the tree
  EXPECT_EQ(kv.prefix_cached_blocks(3), 2);
  EXPECT_EQ(kv.held_prefix_blocks(), 6);
  EXPECT_EQ(kv.free_blocks(), 40 - 6 - 1);
  // With node 2 evicted C's chain has a gap: it hits node 1 alone.
  kv.Free(0);
  ASSERT_TRUE(kv.GrowTo(2, 0));
  EXPECT_EQ(kv.prefix_cached_blocks(2), 2);
  KvCacheManager small(6, 16, 3);
  small.JoinPrefixChain(0, {1, 2}, {32, 32});
  small.JoinPrefixChain(2, {1, 2, 4}, {32, 32, 32});
  ASSERT_TRUE(small.GrowTo(0, 64));
  small.Free(0);                     // node 2 is freed before node 1: evicted first
  ASSERT_TRUE(small.GrowTo(1, 48));  // 2 never-used blocks, then node 2's last block
  EXPECT_EQ(small.prefix_cached_blocks(2), 1);
  EXPECT_EQ(small.ReusablePrefixTokens(2, 200), 48);
  ASSERT_TRUE(small.GrowTo(1, 64));  // node 2's other block
  EXPECT_EQ(small.ReusablePrefixTokens(2, 200), 32);
}

TEST(KvCacheManagerTest, BlocksAreConservedThroughAnyMixOfOperations) {
  // Held + free = total after every call, and no request's cached prefix
  // exceeds the free pool.
  constexpr int kRequests = 5;
  KvCacheManager kv(40, 16, kRequests);
  // Requests 3 and 4 share their first 32 tokens (node 7), then differ.
  kv.JoinPrefixChain(3, {7, 8}, {32, 32});
  kv.JoinPrefixChain(4, {7, 9}, {32, 40});
  std::mt19937 rng(7);
  for (int i = 0; i < 5000; ++i) {
    const RequestId id = static_cast<RequestId>(rng() % kRequests);
    const int64_t tokens = static_cast<int64_t>(rng() % 300);
    switch (rng() % 4) {
      case 0:
        if (kv.blocks_of(id) > 0 || kv.OwnCachedTokens(id) == 0) kv.GrowTo(id, tokens);
        break;
      case 1:
        if (kv.OwnCachedTokens(id) == 0) kv.Free(id);
        break;
      case 2:
        if (kv.OwnCachedTokens(id) == 0) kv.Release(id, tokens);
        break;
      default:
        if (kv.blocks_of(id) == 0) {
          const int64_t prefix = std::min(kv.CachedTokens(id), tokens / 16 * 16);
          kv.ReclaimAndGrowTo(id, prefix, prefix + tokens % 50);
        }
    }
    int64_t own = 0, cached = 0;
    for (RequestId r = 0; r < kRequests; ++r) {
      own += kv.blocks_of(r) - kv.shared_blocks_of(r);
      cached += kv.OwnCachedTokens(r) / 16;
    }
    // The group's blocks count once, whoever holds them.
    ASSERT_EQ(own + kv.held_prefix_blocks() + kv.free_blocks(), kv.total_blocks())
        << "after operation " << i;
    ASSERT_LE(cached, kv.free_blocks()) << "after operation " << i;
    ASSERT_LE(kv.prefix_cached_blocks(7), 2) << "after operation " << i;
    ASSERT_LE(kv.prefix_cached_blocks(9), 2) << "after operation " << i;
  }
}

}  // namespace
}  // namespace servesim::engine
