#include "models/attention_keys.h"

#include <algorithm>
#include <cstdint>

#include "gtest/gtest.h"

namespace servesim::models {
namespace {

// Brute force over the rows: row i sees c + i + 1 keys, at most cap.
int64_t Summed(int64_t q, int64_t c, int64_t cap, bool only_longer) {
  int64_t sum = 0;
  for (int64_t i = 0; i < q; ++i) {
    const int64_t keys = c + i + 1;
    if (only_longer) {
      if (keys > cap) sum += keys;
    } else {
      sum += std::min(keys, cap);
    }
  }
  return sum;
}

TEST(AttentionKeysTest, CausalPairsByHand) {
  EXPECT_EQ(CausalPairs(1, 0), 1);
  EXPECT_EQ(CausalPairs(4, 0), 1 + 2 + 3 + 4);
  EXPECT_EQ(CausalPairs(1, 2048), 2049);  // a decode at context 2048
  EXPECT_EQ(CausalPairs(3, 10), 11 + 12 + 13);
}

TEST(AttentionKeysTest, CappedAndSelectedKeysMatchTheRowsSummedOneByOne) {
  for (int64_t q : {1, 7, 512, 2048, 2049, 8192}) {
    for (int64_t c : {0, 5, 2047, 2048, 10000}) {
      EXPECT_EQ(CappedPairs(q, c, 2048), Summed(q, c, 2048, false)) << q << " " << c;
      EXPECT_EQ(KeysOfRowsLongerThan(q, c, 2048), Summed(q, c, 2048, true)) << q << " " << c;
    }
  }
}

// A row with at most top-k keys is kept whole: no selection. A decode at
// context 2047 scores 2048 keys (none selected), at 2048 it scores 2049.
TEST(AttentionKeysTest, OnlyRowsPastTheTopKAreSelected) {
  EXPECT_EQ(KeysOfRowsLongerThan(1, 2047, 2048), 0);
  EXPECT_EQ(KeysOfRowsLongerThan(1, 2048, 2048), 2049);
  EXPECT_EQ(KeysOfRowsLongerThan(2048, 0, 2048), 0);  // a 2048-token prompt
}

}  // namespace
}  // namespace servesim::models
