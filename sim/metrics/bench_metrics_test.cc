#include "sim/metrics/bench_metrics.h"

#include <gtest/gtest.h>

#include "sim/metrics/records_for_test.h"
#include "sim/metrics/report.h"

namespace servesim::metrics {
namespace {

TEST(BenchMetricsTest, HandComputedThreeRequestTimeline) {
  BenchMetrics m = ComputeBenchMetrics(ThreeRequests(), sim::Seconds(3.0));
  EXPECT_EQ(m.completed, 3);
  EXPECT_EQ(m.total_input_tokens, 60);
  EXPECT_EQ(m.total_output_tokens, 6);
  EXPECT_DOUBLE_EQ(m.request_throughput, 1.0);
  EXPECT_DOUBLE_EQ(m.output_throughput, 2.0);
  EXPECT_DOUBLE_EQ(m.total_token_throughput, 22.0);
  EXPECT_NEAR(m.ttft.mean_ms, 1433.333, 1e-3);
  EXPECT_NEAR(m.ttft.median_ms, 1000.0, 1e-9);
  EXPECT_NEAR(m.ttft.std_ms, 987.702, 1e-3);  // population std of {1.0, 0.5, 2.8}
  EXPECT_NEAR(m.ttft.p99_ms, 2764.0, 1e-6);   // 1.0 + 0.98 * (2.8 - 1.0)
  EXPECT_NEAR(m.tpot.mean_ms, 500.0, 1e-9);   // the 1-token request is excluded
  EXPECT_NEAR(m.itl.mean_ms, 500.0, 1e-9);
  EXPECT_NEAR(m.e2el.mean_ms, (2.0 + 1.0 + 2.8) / 3 * 1e3, 1e-6);
  // Chunks at 1.0, 1.5, 1.0 fall in second 1: the busiest bucket holds 3.
  EXPECT_DOUBLE_EQ(m.max_output_tokens_per_s, 3.0);
  EXPECT_DOUBLE_EQ(m.max_concurrent_requests, 3.0);
}

// The mean and spread of a list do not depend on which percentiles the
// client asked for: the selections reorder the list, and a sum in another
// order differs in its last bits.
TEST(BenchMetricsTest, MeanAndStdDoNotDependOnThePercentilesAsked) {
  std::vector<RequestRecord> records;
  for (int i = 0; i < 200; ++i) {
    std::vector<double> chunks;
    double t = 0.01 * i;
    for (int k = 0; k < 20; ++k) {
      t += 0.001 * ((i * 7 + k * 13) % 97) + 1e-7 * k;  // gaps of mixed sizes
      chunks.push_back(t);
    }
    records.push_back(Record(0.0, chunks, 10, 20));
  }
  MetricOptions few, many;
  few.percentiles = {50};
  many.percentiles = {10, 25, 50, 75, 90, 99, 99.9};
  const BenchMetrics a = ComputeBenchMetrics(records, sim::Seconds(5.0), few);
  const BenchMetrics b = ComputeBenchMetrics(records, sim::Seconds(5.0), many);
  for (auto stats : {&BenchMetrics::ttft, &BenchMetrics::tpot, &BenchMetrics::itl,
                     &BenchMetrics::e2el}) {
    EXPECT_EQ((a.*stats).mean_ms, (b.*stats).mean_ms);
    EXPECT_EQ((a.*stats).std_ms, (b.*stats).std_ms);
  }
}

// Peak concurrency is a sweep line over [start, start + latency): two
// requests in one second that never overlap count once (1-s buckets said
// 2), and one that ends as another starts does not overlap it.
TEST(BenchMetricsTest, PeakConcurrencyCountsRequestsActiveAtOneInstant) {
  BenchMetrics apart = ComputeBenchMetrics(
      {Record(0.0, {0.1, 0.4}, 10, 2), Record(0.5, {0.6, 0.9}, 10, 2)}, sim::Seconds(1.0));
  EXPECT_DOUBLE_EQ(apart.max_concurrent_requests, 1.0);
  // Each request sent as the one before it ends, as --max-concurrency 1
  // sends them: never two at once, at times whose sums in doubles do not
  // come out even (0.1 + 0.2 != 0.3).
  std::vector<RequestRecord> chain;
  double at = 0;
  for (int i = 0; i < 50; ++i) {
    const double end = at + 0.1 + 0.01 * (i % 7);
    chain.push_back(Record(at, {(at + end) / 2, end}, 10, 2));
    at = end;
  }
  EXPECT_DOUBLE_EQ(ComputeBenchMetrics(chain, sim::Seconds(at)).max_concurrent_requests, 1.0);
}

TEST(BenchMetricsTest, FailedRequestsAreCountedButNotMeasured) {
  auto records = ThreeRequests();
  records[2].success = false;
  BenchMetrics m = ComputeBenchMetrics(records, sim::Seconds(2.0));
  EXPECT_EQ(m.completed, 2);
  EXPECT_EQ(m.failed, 1);
  EXPECT_EQ(m.total_input_tokens, 30);
  // Its chunk at 3.0 s is in none of the figures: TTFTs 1.0 and 0.5 s,
  // latencies 2.0 and 1.0 s, 5 tokens over the 2 s run.
  EXPECT_EQ(m.total_output_tokens, 5);
  EXPECT_NEAR(m.ttft.mean_ms, 750.0, 1e-9);
  EXPECT_NEAR(m.e2el.mean_ms, 1500.0, 1e-9);
  EXPECT_DOUBLE_EQ(m.output_throughput, 2.5);
}

// The busiest second counts successful requests only, however the failed
// ones sit among them: a failure first (its zeros in the saved arrays) must
// not shift the timings the buckets read (it made a peak of 640 from 1660).
TEST(BenchMetricsTest, PeaksCountOnlySuccessesWhereverFailuresSit) {
  std::vector<RequestRecord> records = ThreeRequests();
  const BenchMetrics clean = ComputeBenchMetrics(records, sim::Seconds(3.0));
  RequestRecord failed = Record(0.0, {}, 5, 0);
  failed.success = false;
  records.insert(records.begin(), failed);
  records.insert(records.begin() + 2, failed);
  const BenchMetrics m = ComputeBenchMetrics(records, sim::Seconds(3.0));
  EXPECT_EQ(m.failed, 2);
  EXPECT_DOUBLE_EQ(m.max_output_tokens_per_s, clean.max_output_tokens_per_s);
  EXPECT_DOUBLE_EQ(m.max_concurrent_requests, clean.max_concurrent_requests);
  EXPECT_DOUBLE_EQ(m.max_output_tokens_per_s, 3.0);
}

TEST(PercentileTest, MatchesNumpyLinearInterpolation) {
  // numpy.percentile([1, 2, 3, 4], 99) == 3.97
  EXPECT_NEAR(Percentile({4, 1, 3, 2}, 99), 3.97, 1e-12);
  EXPECT_EQ(Percentile({}, 50), 0.0);
  EXPECT_EQ(Percentile({7}, 99), 7.0);
}

TEST(BenchMetricsTest, GoodputCountsRequestsWithinEverySlo) {
  // TTFTs 1.0, 0.5, 2.8 s; TPOTs 0.5, 0.5 and 0 (one token, vllm counts it
  // as 0); E2ELs 2.0, 1.0, 2.8 s.
  MetricOptions options;
  options.goodput_slo_ms = {{"ttft", 1000}, {"tpot", 500}};
  BenchMetrics m = ComputeBenchMetrics(ThreeRequests(), sim::Seconds(4.0), options);
  ASSERT_TRUE(m.request_goodput.has_value());
  EXPECT_DOUBLE_EQ(*m.request_goodput, 2.0 / 4.0);  // the third misses its TTFT
  options.goodput_slo_ms = {{"e2el", 1999}};
  m = ComputeBenchMetrics(ThreeRequests(), sim::Seconds(4.0), options);
  EXPECT_DOUBLE_EQ(*m.request_goodput, 1.0 / 4.0);
  // Without --goodput there is no goodput: no line, null in the JSON.
  m = ComputeBenchMetrics(ThreeRequests(), sim::Seconds(4.0));
  EXPECT_FALSE(m.request_goodput.has_value());
  EXPECT_EQ(FormatBenchReport(m, ReportOptions{}).find("goodput"), std::string::npos);
  EXPECT_NE(FormatResultJson(m, ReportOptions{}, "").find("\"request_goodput\": null"),
            std::string::npos);
}

}  // namespace
}  // namespace servesim::metrics
