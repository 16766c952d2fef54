#include "sim/metrics/report.h"

#include <algorithm>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "sim/metrics/bench_metrics.h"
#include "sim/metrics/records_for_test.h"

namespace servesim::metrics {
namespace {

// vLLM's --save-result arrays hold every request; a failed one keeps its
// prompt length and start, with zeros, no ITLs and its error message.
TEST(ReportTest, SavedArraysKeepFailedRequestsWithTheirError) {
  auto records = ThreeRequests();
  records[1].success = false;
  records[1].chunk_times.clear();
  records[1].error = "too long";
  BenchMetrics m = ComputeBenchMetrics(records, sim::Seconds(3.0));
  EXPECT_EQ(m.input_lens, (std::vector<int64_t>{10, 20, 30}));
  EXPECT_EQ(m.output_lens, (std::vector<int64_t>{3, 0, 1}));
  EXPECT_EQ(m.ttfts_s[1], 0.0);
  EXPECT_TRUE(m.itls_s[1].empty());
  const std::string json = FormatResultJson(m, ReportOptions{}, "");
  EXPECT_NE(json.find("\"errors\": [\"\", \"too long\", \"\"]"), std::string::npos) << json;
  EXPECT_NE(json.find("\"output_lens\": [3, 0, 1]"), std::string::npos) << json;
}

TEST(ReportTest, LinesFollowVllmFormat) {
  BenchMetrics m = ComputeBenchMetrics(ThreeRequests(), sim::Seconds(3.0));
  ReportOptions options;
  options.request_rate = std::numeric_limits<double>::infinity();
  const std::string text = FormatBenchReport(m, options);
  EXPECT_EQ(text.substr(0, 51), "============ Serving Benchmark Result ============\n");
  EXPECT_NE(text.find("Successful requests:                     3         \n"),
            std::string::npos);
  EXPECT_NE(text.find("Benchmark duration (s):                  3.00      \n"),
            std::string::npos);
  EXPECT_NE(text.find("---------------Time to First Token----------------\n"),
            std::string::npos);
  EXPECT_EQ(text.find("Request rate configured"), std::string::npos);
  // vLLM's capital T on this line alone.
  EXPECT_NE(text.find("\nTotal Token throughput (tok/s):          "), std::string::npos) << text;
}

TEST(ReportTest, SelectedMetricsAndPercentilesAsTheClientAsksForThem) {
  // --percentile-metrics e2el,ttft --metric-percentiles 50,99.9: vllm prints
  // the blocks in its own order (TTFT before E2EL), each with its P lines.
  MetricOptions metric_options;
  metric_options.percentiles = {50.0, 99.9};
  BenchMetrics m = ComputeBenchMetrics(ThreeRequests(), sim::Seconds(3.0), metric_options);
  ReportOptions options;
  options.percentile_metrics = {"e2el", "ttft"};
  const std::string text = FormatBenchReport(m, options);
  EXPECT_EQ(text.find("Inter-token Latency"), std::string::npos);
  EXPECT_EQ(text.find("P99 TTFT"), std::string::npos);
  const size_t ttft = text.find("---------------Time to First Token----------------\n");
  const size_t e2el = text.find("----------------End-to-end Latency----------------\n");
  ASSERT_NE(ttft, std::string::npos);
  ASSERT_NE(e2el, std::string::npos);
  EXPECT_LT(ttft, e2el);
  // TTFTs {0.5, 1.0, 2.8} s: P50 is the middle one, P99.9 is
  // 1.0 + 0.998 * (2.8 - 1.0) = 2.7964 s.
  EXPECT_NE(text.find("P50 TTFT (ms):                           1000.00   \n"), std::string::npos);
  EXPECT_NE(text.find("P99.9 TTFT (ms):                         2796.40   \n"), std::string::npos);
  const std::string json = FormatResultJson(m, options, "");
  EXPECT_NE(json.find("\"p99.9_e2el_ms\": "), std::string::npos);
  EXPECT_NE(json.find("\"p50_ttft_ms\": 1000.0"), std::string::npos);
  EXPECT_EQ(json.find("mean_itl_ms"), std::string::npos);
}

// 99 and 99.0 asked for together: two printed lines, as vllm prints them,
// but one key of its result dict.
TEST(ReportTest, APercentileAskedForTwiceIsOneJsonKey) {
  MetricOptions metric_options;
  metric_options.percentiles = {99.0, 50.0, 99.0};
  BenchMetrics m = ComputeBenchMetrics(ThreeRequests(), sim::Seconds(3.0), metric_options);
  ReportOptions options;
  const std::string json = FormatResultJson(m, options, "");
  const size_t first = json.find("\"p99_ttft_ms\"");
  ASSERT_NE(first, std::string::npos);
  EXPECT_EQ(json.find("\"p99_ttft_ms\"", first + 1), std::string::npos);
  EXPECT_NE(json.find("\"p50_ttft_ms\""), std::string::npos);
}

// The setup keys come first, as vllm writes them; one that names a figure
// (a --metadata key) yields to the figure, as in vllm's dict merge.
TEST(ReportTest, SetupKeysLeadTheJsonAndYieldToFigures) {
  BenchMetrics m = ComputeBenchMetrics(ThreeRequests(), sim::Seconds(3.0));
  ReportOptions options;
  options.setup_json = {{"model_id", "\"m\""}, {"num_prompts", "3"}, {"duration", "\"x\""}};
  const std::string json = FormatResultJson(m, options, "");
  EXPECT_EQ(json.rfind("{\"model_id\": \"m\", \"num_prompts\": 3, \"duration\": 3", 0), 0u)
      << json;
  EXPECT_EQ(json.find("\"duration\": \"x\""), std::string::npos);
}

// As Python's json.dump writes strings (ensure_ascii): printable ASCII as
// is, short escapes, other characters as \uXXXX, a surrogate pair past
// U+FFFF, and an invalid byte as U+FFFD. (Each expectation is what
// json.dumps gives for the same text.)
TEST(JsonStringTest, EscapesAsPythonsJsonDump) {
  EXPECT_EQ(JsonString("a\"b\\c"), "\"a\\\"b\\\\c\"");
  EXPECT_EQ(JsonString("\n\r\t\b\f\x01\x7f"), "\"\\n\\r\\t\\b\\f\\u0001\\u007f\"");
  EXPECT_EQ(JsonString("gr\xC3\xB6\xC3\x9F" "e"), "\"gr\\u00f6\\u00dfe\"");
  EXPECT_EQ(JsonString("\xE2\x82\xAC"), "\"\\u20ac\"");
  EXPECT_EQ(JsonString("\xF0\x9F\x98\x80"), "\"\\ud83d\\ude00\"");
  EXPECT_EQ(JsonString("a\xFF" "b\xC3"), "\"a\\ufffdb\\ufffd\"");
  // A truncated sequence is one replacement; overlong forms, surrogates and
  // code points past U+10FFFF are one per byte.
  EXPECT_EQ(JsonString("\xE2\x82" "b\xC0\x80"), "\"\\ufffdb\\ufffd\\ufffd\"");
  EXPECT_EQ(JsonString("\xED\xA0\x80"), "\"\\ufffd\\ufffd\\ufffd\"");
  EXPECT_EQ(JsonString("\xF5\x80\x80\x80"), "\"\\ufffd\\ufffd\\ufffd\\ufffd\"");
  EXPECT_EQ(JsonString("\xF0\x9F\x98"), "\"\\ufffd\"");
}

// main()'s traffic block: setup keys, before the figures.
TEST(ReportTest, AnUnboundedRequestRateIsSavedAsVllmsInfString) {
  BenchMetrics m = ComputeBenchMetrics(ThreeRequests(), sim::Seconds(3.0));
  ReportOptions options;
  options.setup_json =
      TrafficSetupJson(std::numeric_limits<double>::infinity(), 1.0, std::nullopt);
  EXPECT_EQ(FormatResultJson(m, options, "")
                .rfind("{\"request_rate\": \"inf\", \"burstiness\": 1.0, "
                       "\"max_concurrency\": null, \"duration\": 3",
                       0),
            0u);
  options.setup_json = TrafficSetupJson(2.5, 0.5, 8);
  EXPECT_EQ(FormatResultJson(m, options, "")
                .rfind("{\"request_rate\": 2.5, \"burstiness\": 0.5, \"max_concurrency\": 8, ", 0),
            0u);
}

// benchmark()'s keys in their order (engine-defaults.md B5): the arrays
// between the throughputs and the two peaks, the latency blocks last.
TEST(ReportTest, SavedKeysFollowVllmsOrder) {
  BenchMetrics m = ComputeBenchMetrics(ThreeRequests(), sim::Seconds(3.0));
  ReportOptions options;
  const std::string json = FormatResultJson(m, options, "");
  std::vector<size_t> at;
  for (const char* key : {"\"total_token_throughput\"", "\"input_lens\"", "\"output_lens\"",
                          "\"ttfts\"", "\"itls\"", "\"latencies\"", "\"start_times\"",
                          "\"generated_texts\"", "\"errors\"", "\"max_output_tokens_per_s\"",
                          "\"max_concurrent_requests\"", "\"mean_ttft_ms\""}) {
    at.push_back(json.find(key));
    ASSERT_NE(at.back(), std::string::npos) << key;
  }
  EXPECT_TRUE(std::is_sorted(at.begin(), at.end())) << json;
  EXPECT_NE(json.find("\"generated_texts\": [\"\", \"\", \"\"]"), std::string::npos);
  options.per_request_arrays = false;  // without --save-detailed
  const std::string plain = FormatResultJson(m, options, "");
  EXPECT_EQ(plain.find("\"itls\""), std::string::npos);
  EXPECT_EQ(plain.find("\"generated_texts\""), std::string::npos);
  EXPECT_NE(plain.find("\"start_times\""), std::string::npos);
}

TEST(ReportTest, JsonNumbersReadLikePython) {
  EXPECT_EQ(JsonNumber(1000.0), "1000.0");
  EXPECT_EQ(JsonNumber(0.1), "0.1");
  // Python's repr of each (json.dump writes floats so).
  EXPECT_EQ(JsonNumber(100000.0), "100000.0");
  EXPECT_EQ(JsonNumber(0.0005), "0.0005");
  EXPECT_EQ(JsonNumber(0.0001), "0.0001");
  EXPECT_EQ(JsonNumber(0.00001), "1e-05");
  EXPECT_EQ(JsonNumber(1.5e-7), "1.5e-07");
  EXPECT_EQ(JsonNumber(1e16), "1e+16");
  EXPECT_EQ(JsonNumber(1.25e17), "1.25e+17");
  EXPECT_EQ(JsonNumber(1234567890123456.0), "1234567890123456.0");
  EXPECT_EQ(JsonNumber(12.5), "12.5");
  EXPECT_EQ(JsonNumber(0.0), "0.0");
  EXPECT_EQ(JsonNumber(-0.0), "-0.0");
  EXPECT_EQ(JsonNumber(-2.75), "-2.75");
  EXPECT_EQ(JsonNumber(1e300), "1e+300");
  EXPECT_EQ(JsonNumber(std::numeric_limits<double>::infinity()), "Infinity");
}

}  // namespace
}  // namespace servesim::metrics
