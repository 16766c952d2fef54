#include "sim/engine/kv_cache_manager.h"

#include <gtest/gtest.h>

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

}  // namespace
}  // namespace servesim::engine
