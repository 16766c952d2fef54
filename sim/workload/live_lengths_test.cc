#include "sim/workload/live_lengths.h"

#include <numeric>
#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace servesim::workload {
namespace {

// n random requests of a 1000-token prompt asking for `out` tokens each.
std::vector<BenchRequest> RandomRequests(int n, int64_t out) {
  std::vector<BenchRequest> r(n);
  for (int i = 0; i < n; ++i) r[i] = {.id = i, .prompt_tokens = 1000, .output_tokens = out};
  return r;
}

// The bench command that asks for `out` tokens per random request.
BenchConfig RandomBench(int64_t out) {
  BenchConfig b;
  b.dataset_name = DatasetName::kRandom;
  b.random_output_len = out;
  b.seed = 42;
  return b;
}

int64_t TotalOutput(const std::vector<BenchRequest>& r) {
  return std::accumulate(r.begin(), r.end(), int64_t{0},
                         [](int64_t s, const BenchRequest& x) { return s + x.output_tokens; });
}

// 100 requests asked for 2000 tokens, the live run generated 30,000 over
// its 100 completions: the replies are cut to add up to 30,000 (within a
// token per request), each between 1 and 2000, and the client still asks
// for 2000 (what the engine plans KV with).
TEST(ApplyLiveLengthsTest, EosCutMatchesTheLiveTotalOfARandomRun) {
  std::vector<BenchRequest> r = RandomRequests(100, 2000);
  std::string notice;
  ASSERT_TRUE(ApplyLiveLengths({.completed = 100, .total_output_tokens = 30000}, RandomBench(2000), r,
                               &notice)
                  .ok());
  EXPECT_NEAR(static_cast<double>(TotalOutput(r)), 30000.0, 100.0);
  for (const BenchRequest& x : r) {
    EXPECT_GE(x.output_tokens, 1);
    EXPECT_LE(x.output_tokens, 2000);
    EXPECT_EQ(x.max_completion_tokens, 2000);
  }
  EXPECT_NE(notice.find("geometric EOS"), std::string::npos);
  // Deterministic: the same inputs cut the same way.
  std::vector<BenchRequest> again = RandomRequests(100, 2000);
  ASSERT_TRUE(ApplyLiveLengths({.completed = 100, .total_output_tokens = 30000}, RandomBench(2000),
                               again, nullptr)
                  .ok());
  for (size_t i = 0; i < r.size(); ++i) EXPECT_EQ(r[i].output_tokens, again[i].output_tokens);
}

// Nothing to cut: every completed request generated all it asked for (16 of
// 1000 failed, as TensorRT-LLM's did), or the client sent --ignore-eos, or
// the dataset has its own EOS model (ShareGPT's table).
TEST(ApplyLiveLengthsTest, LeavesFullRepliesIgnoreEosAndShareGptAlone) {
  std::vector<BenchRequest> r = RandomRequests(1000, 100);
  ASSERT_TRUE(
      ApplyLiveLengths({.completed = 984, .total_output_tokens = 98400}, RandomBench(100), r, nullptr)
          .ok());
  EXPECT_EQ(TotalOutput(r), 100000);
  BenchConfig ignore = RandomBench(100);
  ignore.ignore_eos = true;
  ASSERT_TRUE(
      ApplyLiveLengths({.completed = 1000, .total_output_tokens = 5000}, ignore, r, nullptr).ok());
  EXPECT_EQ(TotalOutput(r), 100000);
  BenchConfig sharegpt = RandomBench(100);
  sharegpt.dataset_name = DatasetName::kSharegpt;
  ASSERT_TRUE(
      ApplyLiveLengths({.completed = 1000, .total_output_tokens = 5000}, sharegpt, r, nullptr)
          .ok());
  EXPECT_EQ(TotalOutput(r), 100000);
}

// A --save-result JSON's per-request lengths replace the sampled ones in
// send order; a request that failed live (0) keeps its sampled reply.
TEST(ApplyLiveLengthsTest, PerRequestLengthsReplaceTheSampledOnes) {
  std::vector<BenchRequest> r = RandomRequests(3, 500);
  ASSERT_TRUE(ApplyLiveLengths({.input_lens = {900, 950, 1000}, .output_lens = {120, 0, 500}},
                               RandomBench(500), r, nullptr)
                  .ok());
  EXPECT_EQ(r[0].prompt_tokens, 900);
  EXPECT_EQ(r[0].output_tokens, 120);
  EXPECT_EQ(r[0].max_completion_tokens, 500);
  EXPECT_EQ(r[1].output_tokens, 500);
  EXPECT_EQ(r[2].output_tokens, 500);
  EXPECT_FALSE(
      ApplyLiveLengths({.output_lens = {1, 2}}, RandomBench(500), r, nullptr).ok());  // 2 for 3
  EXPECT_EQ(std::string(
                ApplyLiveLengths({.output_lens = {1, -2, 3}}, RandomBench(500), r, nullptr)
                    .message()),
            "the live run lists a negative length");
}

// Live lengths that this bench command cannot have produced are refused:
// 100 requests of at most 256 tokens cannot reply 30,000 tokens or fewer
// than one per completed request, nor a single reply of 300.
TEST(ApplyLiveLengthsTest, RefusesLengthsTheBenchCommandCannotProduce) {
  std::vector<BenchRequest> r = RandomRequests(100, 256);
  EXPECT_FALSE(
      ApplyLiveLengths({.completed = 100, .total_output_tokens = 30000}, RandomBench(256), r, nullptr)
          .ok());
  EXPECT_FALSE(
      ApplyLiveLengths({.completed = 100, .total_output_tokens = 99}, RandomBench(256), r, nullptr)
          .ok());
  std::vector<int64_t> lens(100, 10);
  lens[7] = 300;
  absl::Status s = ApplyLiveLengths({.output_lens = lens}, RandomBench(256), r, nullptr);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("output_lens[7] is 300"), std::string::npos) << s;
  // With --random-range-ratio 0.5 vLLM may ask for up to 150 of 100 tokens,
  // whatever servesim drew for that request.
  BenchConfig ranged = RandomBench(100);
  ranged.random_range_ratio = 0.5;
  std::vector<BenchRequest> few = RandomRequests(2, 60);
  EXPECT_TRUE(ApplyLiveLengths({.output_lens = {140, 20}}, ranged, few, nullptr).ok());
  EXPECT_EQ(few[0].output_tokens, 140);
  EXPECT_EQ(few[0].max_completion_tokens, 140);
  EXPECT_EQ(std::string(
                ApplyLiveLengths({.output_lens = {160, 20}}, ranged, few, nullptr).message()),
            "the live run's output_lens[0] is 160 tokens, more than its bench command lets a "
            "request ask for");
  // ShareGPT's replies are the dataset's, not a fixed length: a longer live
  // reply than servesim's stand-in table sampled is the real one.
  BenchConfig sharegpt = RandomBench(256);
  sharegpt.dataset_name = DatasetName::kSharegpt;
  EXPECT_TRUE(ApplyLiveLengths({.output_lens = lens}, sharegpt, r, nullptr).ok());
  EXPECT_EQ(r[7].output_tokens, 300);
}

}  // namespace
}  // namespace servesim::workload
