#include "sim/planning/parallel_for.h"

#include <atomic>
#include <cstddef>
#include <vector>

#include "gtest/gtest.h"

namespace servesim::planning {
namespace {

// Every index runs exactly once, whatever the thread count, also with more
// threads than indices, none (n = 0), or a thread count below one.
TEST(ParallelForTest, RunsEveryIndexExactlyOnce) {
  for (const size_t n : {0, 1, 7, 1000}) {
    for (const int threads : {-3, 0, 1, 2, 8, 64}) {
      std::vector<std::atomic<int>> runs(n);
      ParallelFor(n, threads, [&](size_t i) { runs[i].fetch_add(1); });
      for (size_t i = 0; i < n; ++i) {
        EXPECT_EQ(runs[i].load(), 1) << "n " << n << " threads " << threads << " index " << i;
      }
    }
  }
}

// Results written by index come out in index order, so a sweep's output does
// not depend on --threads.
TEST(ParallelForTest, ResultsLandByIndex) {
  std::vector<size_t> squares(500);
  ParallelFor(squares.size(), 4, [&](size_t i) { squares[i] = i * i; });
  for (size_t i = 0; i < squares.size(); ++i) EXPECT_EQ(squares[i], i * i);
}

// One thread (the caller's) claims the indices in increasing order.
TEST(ParallelForTest, OneThreadRunsInOrder) {
  std::vector<size_t> order;
  ParallelFor(5, 1, [&](size_t i) { order.push_back(i); });
  EXPECT_EQ(order, (std::vector<size_t>{0, 1, 2, 3, 4}));
}

}  // namespace
}  // namespace servesim::planning
