#include "sim/workload/arrivals.h"

#include <cmath>
#include <fstream>
#include <vector>

#include "gtest/gtest.h"

namespace servesim::workload {
namespace {

BenchConfig RateConfig(double rate, double burstiness) {
  BenchConfig config;
  config.request_rate = rate;
  config.request_rate_given = true;
  config.burstiness = burstiness;
  return config;
}

TEST(ArrivalTimesNsTest, InfiniteRateSendsEverythingAtZero) {
  auto times = ArrivalTimesNs(BenchConfig{}, 1000, 0);
  ASSERT_TRUE(times.ok());
  ASSERT_EQ(times->size(), 1000u);
  for (int64_t t : *times) EXPECT_EQ(t, 0);
}

TEST(ArrivalTimesNsTest, LastArrivalLandsAtNOverRate) {
  auto times = ArrivalTimesNs(RateConfig(10.0, 1.0), 1000, 7);
  ASSERT_TRUE(times.ok());
  EXPECT_EQ(times->back(), 100'000'000'000);  // 1000 / 10 req/s = 100 s
  EXPECT_GT(times->front(), 0);               // the first request waits one gap too
  for (size_t i = 1; i < times->size(); ++i) EXPECT_GE((*times)[i], (*times)[i - 1]);
}

// Coefficient of variation of the gaps between consecutive arrivals.
double GapCv(const std::vector<int64_t>& times) {
  double sum = 0, sum_sq = 0;
  const int n = static_cast<int>(times.size()) - 1;
  for (int i = 0; i < n; ++i) {
    const double gap = static_cast<double>(times[i + 1] - times[i]);
    sum += gap;
    sum_sq += gap * gap;
  }
  const double mean = sum / n;
  return std::sqrt(sum_sq / n - mean * mean) / mean;
}

TEST(ArrivalTimesNsTest, PoissonGapsHaveMeanOneOverRateAndUnitCv) {
  // Gamma gaps with shape b have CV 1/sqrt(b). With 200k gaps the CV's sampling
  // sigma is about 0.005 (Poisson), so +-0.03 cannot flake for a correct sampler.
  constexpr int kN = 200000;
  auto times = ArrivalTimesNs(RateConfig(4.0, 1.0), kN, 1);
  ASSERT_TRUE(times.ok());
  const double mean_gap_s = (times->back() - times->front()) * 1e-9 / (kN - 1);
  EXPECT_NEAR(mean_gap_s, 0.25, 0.25 * 0.01);
  EXPECT_NEAR(GapCv(*times), 1.0, 0.03);
  auto smooth = ArrivalTimesNs(RateConfig(4.0, 4.0), kN, 1);
  ASSERT_TRUE(smooth.ok());
  EXPECT_NEAR(GapCv(*smooth), 0.5, 0.03);
  auto bursty = ArrivalTimesNs(RateConfig(4.0, 0.25), kN, 1);
  ASSERT_TRUE(bursty.ok());
  EXPECT_NEAR(GapCv(*bursty), 2.0, 0.1);
}

// rate x burstiness past doubles: the gaps' scale is 0 or infinite, which
// had given NaN gaps and a send time of INT64_MIN (found by UBSan).
TEST(ArrivalTimesNsTest, GapsOfNoFiniteScaleAreAnError) {
  EXPECT_EQ(ArrivalTimesNs(RateConfig(1e200, 1e200), 5, 1).status().message(),
            "--bench: --burstiness: 1e+200 at 1e+200 req/s gives arrival gaps of no finite "
            "scale (1 / (rate x burstiness))");
  EXPECT_NE(std::string(ArrivalTimesNs(RateConfig(1.0, 1e-320), 5, 1).status().message())
                .find("at 1 req/s gives arrival gaps of no finite scale"),
            std::string::npos);
  EXPECT_TRUE(ArrivalTimesNs(RateConfig(1.0, 0.01), 5, 1).ok());
  // A finite scale whose draws overflow: the rate is the cause, and named
  // (the message had named only the default burstiness of 1).
  EXPECT_EQ(ArrivalTimesNs(RateConfig(1e-308, 1.0), 20, 1).status().message(),
            "--bench: --burstiness: 1 at 1e-308 req/s gives arrival gaps that are not finite");
}

TEST(ArrivalTimesNsTest, SameSeedSameTimesOtherSeedOthers) {
  auto a = ArrivalTimesNs(RateConfig(5.0, 1.0), 100, 3);
  auto b = ArrivalTimesNs(RateConfig(5.0, 1.0), 100, 3);
  auto c = ArrivalTimesNs(RateConfig(5.0, 1.0), 100, 4);
  ASSERT_TRUE(a.ok() && b.ok() && c.ok());
  EXPECT_EQ(*a, *b);
  EXPECT_NE((*a)[0], (*c)[0]);
}

TEST(ArrivalTimesNsTest, NegativeCountIsAnError) {
  auto a = ArrivalTimesNs(RateConfig(5.0, 1.0), -1, 0);
  ASSERT_FALSE(a.ok());
  EXPECT_EQ(a.status().message(), "arrivals: n must be >= 0, got -1");
}

std::vector<BenchRequest> TraceRequests() {
  std::vector<BenchRequest> requests(3);
  requests[1].arrival_offset_ns = 1'000'000'000;
  requests[2].arrival_offset_ns = 4'000'000'000;
  return requests;
}

// vllm's _get_current_request_rate, by hand: progress i / (n - 1).
TEST(RampUpRateTest, LinearAndExponentialByHand) {
  const RampUp linear = RampUp{RampUp::Shape::kLinear, 2, 10};
  EXPECT_DOUBLE_EQ(RampUpRate(linear, 0, 5), 2.0);
  EXPECT_DOUBLE_EQ(RampUpRate(linear, 1, 5), 4.0);
  EXPECT_DOUBLE_EQ(RampUpRate(linear, 4, 5), 10.0);
  const RampUp exponential = RampUp{RampUp::Shape::kExponential, 1, 16};
  EXPECT_DOUBLE_EQ(RampUpRate(exponential, 0, 5), 1.0);
  EXPECT_DOUBLE_EQ(RampUpRate(exponential, 2, 5), 4.0);  // 16^(1/2)
  EXPECT_DOUBLE_EQ(RampUpRate(exponential, 4, 5), 16.0);
  EXPECT_DOUBLE_EQ(RampUpRate(linear, 0, 1), 2.0);  // one request: the start rate
}

// Each gap is drawn at its request's rate and nothing is rescaled, so the
// span is about sum_i 1 / rate_i; rising rates leave the late gaps short.
TEST(ArrivalTimesNsTest, RampUpGapsFollowEachRequestsRate) {
  constexpr int kN = 100000;
  BenchConfig config;
  config.ramp_up = RampUp{RampUp::Shape::kLinear, 1, 100};
  auto times = ArrivalTimesNs(config, kN, 5);
  ASSERT_TRUE(times.ok()) << times.status();
  double expected_span_s = 0;
  for (int i = 0; i < kN; ++i) expected_span_s += 1.0 / RampUpRate(*config.ramp_up, i, kN);
  // Sum of 1e5 exponential gaps: relative sigma below 1 % here.
  EXPECT_NEAR(times->back() * 1e-9, expected_span_s, 0.03 * expected_span_s);
  for (size_t i = 1; i < times->size(); ++i) EXPECT_GE((*times)[i], (*times)[i - 1]);
  // The first thousand requests go at ~1-2 req/s, the last thousand at ~99-100.
  const double early_s = ((*times)[1000] - (*times)[0]) * 1e-9;
  const double late_s = (times->back() - (*times)[kN - 1001]) * 1e-9;
  EXPECT_GT(early_s / late_s, 30.0);
}

BenchConfig TraceConfig() {
  BenchConfig config;
  config.dataset_name = DatasetName::kTrace;
  config.dataset_path = "unused";
  return config;
}

TEST(RequestArrivalTimesNsTest, TraceKeepsItsOwnClockScaledByTimeScale) {
  BenchConfig config = TraceConfig();
  auto times = RequestArrivalTimesNs(config, TraceRequests());
  ASSERT_TRUE(times.ok());
  EXPECT_EQ(*times, (std::vector<int64_t>{0, 1'000'000'000, 4'000'000'000}));
  config.trace_time_scale = 0.5;
  times = RequestArrivalTimesNs(config, TraceRequests());
  ASSERT_TRUE(times.ok());
  EXPECT_EQ(*times, (std::vector<int64_t>{0, 500'000'000, 2'000'000'000}));
}

TEST(RequestArrivalTimesNsTest, TraceWithRequestRateIsStretchedToNOverRate) {
  BenchConfig config = TraceConfig();
  config.request_rate = 1.5;  // 3 requests: last at 2 s
  config.request_rate_given = true;
  auto times = RequestArrivalTimesNs(config, TraceRequests());
  ASSERT_TRUE(times.ok());
  EXPECT_EQ(*times, (std::vector<int64_t>{0, 500'000'000, 2'000'000'000}));
  std::vector<BenchRequest> same_stamp(2);
  EXPECT_EQ(std::string(RequestArrivalTimesNs(config, same_stamp).status().message()),
            "--bench: --request-rate: the trace's requests share one time stamp; cannot stretch "
            "it to a rate");
}

// A trace with time stamps keeps its own gaps: --burstiness, which shapes
// generated gaps, would be ignored, so it is refused.
TEST(RequestArrivalTimesNsTest, BurstinessIsRefusedForATraceWithItsOwnClock) {
  BenchConfig config = TraceConfig();
  config.request_rate = 1.5;
  config.request_rate_given = true;
  config.burstiness = 0.5;
  config.burstiness_given = true;
  EXPECT_EQ(RequestArrivalTimesNs(config, TraceRequests()).status().message(),
            "--bench: --burstiness: the trace keeps its own arrival pattern (--request-rate "
            "only rescales its clock)");
  config.burstiness = 1.0;  // vllm's default, often written out: changes nothing
  EXPECT_TRUE(RequestArrivalTimesNs(config, TraceRequests()).ok());
}

TEST(RequestArrivalTimesNsTest, RampUpIsRefusedForATraceWithItsOwnClock) {
  BenchConfig config = TraceConfig();
  config.ramp_up = RampUp{RampUp::Shape::kLinear, 1, 2};
  EXPECT_EQ(RequestArrivalTimesNs(config, TraceRequests()).status().message(),
            "--bench: --ramp-up-strategy: the trace keeps its own arrival pattern "
            "(--request-rate only rescales its clock)");
}

// 50 requests at 1e-5 req/s arrive over 5e6 s (58 days): past the 30-day
// span, refused before any time leaves int64; 30 days to the second is not.
TEST(RequestArrivalTimesNsTest, ArrivalsSpanningMoreThanThirtyDaysAreRefused) {
  absl::StatusOr<std::vector<int64_t>> times = ArrivalTimesNs(RateConfig(1e-5, 1.0), 50, 0);
  ASSERT_FALSE(times.ok());
  EXPECT_NE(times.status().message().find("--request-rate"), std::string::npos);
  EXPECT_TRUE(ArrivalTimesNs(RateConfig(50.0 / kMaxArrivalSpanS, 1.0), 50, 0).ok());
  EXPECT_EQ(std::string(ArrivalTimesNs(RateConfig(1e-300, 1.0), 50, 0).status().message()),
            "--bench: --request-rate: the requests would be sent over 5e+301 s; servesim "
            "simulates benchmarks whose requests are sent within 30 days");

  BenchConfig config = TraceConfig();
  config.trace_time_scale = 1e6;  // the 4 s trace over 4e6 s
  config.trace_time_scale_given = true;
  times = RequestArrivalTimesNs(config, TraceRequests());
  ASSERT_FALSE(times.ok());
  EXPECT_NE(times.status().message().find("--trace-time-scale"), std::string::npos);
  config.trace_time_scale = 1e5;  // 4e5 s: 4.6 days
  EXPECT_TRUE(RequestArrivalTimesNs(config, TraceRequests()).ok());
  config.trace_time_scale = 1.0;
  config.request_rate = 1e-6;  // 3 requests stretched over 3e6 s
  config.request_rate_given = true;
  EXPECT_EQ(std::string(RequestArrivalTimesNs(config, TraceRequests()).status().message()),
            "--bench: --request-rate: the requests would be sent over 3e+06 s; servesim "
            "simulates benchmarks whose requests are sent within 30 days");
}

// 30 days is 2,592,000 s: that span is simulated, one second more is not,
// and the error leads with what the caller says sends the requests.
TEST(CheckArrivalSpanTest, ThirtyDaysToTheSecond) {
  EXPECT_TRUE(CheckArrivalSpan(2'592'000, "x").ok());
  EXPECT_EQ(std::string(CheckArrivalSpan(2'592'001, "--rate-scale: 0.5 sends the trace's 9 "
                                                    "requests")
                            .message()),
            "--rate-scale: 0.5 sends the trace's 9 requests over 2.592e+06 s; servesim "
            "simulates benchmarks whose requests are sent within 30 days");
}

TEST(RequestArrivalTimesNsTest, ALengthTableArrivesByTheRequestRate) {
  BenchConfig config = TraceConfig();
  config.request_rate = 2.0;
  config.request_rate_given = true;
  config.seed = 9;
  std::vector<BenchRequest> requests(50);
  for (BenchRequest& r : requests) r.trace_without_arrivals = true;
  auto times = RequestArrivalTimesNs(config, requests);
  auto direct = ArrivalTimesNs(config, 50, ArrivalSeed(9));
  ASSERT_TRUE(times.ok() && direct.ok()) << times.status();
  EXPECT_EQ(*times, *direct);
  EXPECT_EQ(times->back(), 25'000'000'000);  // n / rate
  // Nothing to scale: --trace-time-scale is refused.
  BenchConfig scaled = TraceConfig();
  scaled.trace_time_scale = 2.0;
  scaled.trace_time_scale_given = true;
  auto refused = RequestArrivalTimesNs(scaled, requests);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().message(),
            "--bench: --trace-time-scale: the trace has no arrival times to scale (use "
            "--request-rate)");
}

TEST(RequestArrivalTimesNsTest, SyntheticDatasetsUseTheArrivalStream) {
  BenchConfig config = RateConfig(2.0, 1.0);
  config.seed = 9;
  std::vector<BenchRequest> requests(50);
  auto times = RequestArrivalTimesNs(config, requests);
  auto direct = ArrivalTimesNs(config, 50, ArrivalSeed(9));
  ASSERT_TRUE(times.ok() && direct.ok());
  EXPECT_EQ(*times, *direct);
  EXPECT_EQ(times->back(), 25'000'000'000);
}

}  // namespace
}  // namespace servesim::workload
