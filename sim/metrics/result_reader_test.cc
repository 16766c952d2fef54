#include "sim/metrics/result_reader.h"

#include <gtest/gtest.h>

#include <cmath>

#include "absl/strings/str_cat.h"
#include "sim/metrics/bench_metrics.h"
#include "sim/metrics/report.h"

namespace servesim::metrics {
namespace {

BenchMetrics FourRequests() {
  std::vector<RequestRecord> records;
  const double starts[] = {0.0, 0.0, 0.2, 0.7};
  const std::vector<std::vector<double>> chunks = {
      {1.0, 1.5, 2.0}, {0.5, 1.0}, {3.0}, {1.25, 1.5, 1.875, 2.5}};
  for (int i = 0; i < 4; ++i) {
    RequestRecord r;
    r.prompt_tokens = 10 * (i + 1);
    r.output_tokens = static_cast<int64_t>(chunks[i].size());
    r.success = true;
    r.start = sim::Seconds(starts[i]);
    for (double t : chunks[i]) r.chunk_times.push_back(sim::Seconds(t));
    records.push_back(r);
  }
  MetricOptions options;
  options.percentiles = {50.0, 99.0, 99.9};
  options.goodput_slo_ms = {{"ttft", 1200.0}};
  return ComputeBenchMetrics(records, sim::Seconds(3.0), options);
}

// What the report prints reads back as the same figures, under the same
// keys, as the --save-result JSON of the same run holds (to the report's two
// decimals): the report's labels and the JSON's keys are one mapping.
TEST(ResultReaderTest, ReportReadsBackAsTheJsonFigures) {
  const BenchMetrics m = FourRequests();
  ReportOptions options;
  options.percentile_metrics = {"ttft", "tpot", "itl", "e2el"};
  options.request_rate = 4.0;
  options.setup_json = TrafficSetupJson(4.0, 1.0, std::nullopt);
  absl::StatusOr<std::map<std::string, double>> report =
      ReadBenchReportFigures(FormatBenchReport(m, options));
  absl::StatusOr<std::map<std::string, double>> json =
      ReadResultJsonFigures(FormatResultJson(m, options, "\"servesim\": {\"x\": [1, {\"y\": \"}\"}]}"));
  ASSERT_TRUE(report.ok()) << report.status();
  ASSERT_TRUE(json.ok()) << json.status();
  for (const auto& [key, value] : *report) {
    ASSERT_TRUE(json->count(key)) << key;
    EXPECT_NEAR(value, json->at(key), 0.005 + 1e-9) << key;
  }
  // The report prints every JSON figure but the standard deviations (and
  // burstiness, a setup key printed before the block).
  for (const auto& [key, value] : *json) {
    if (key.rfind("std_", 0) == 0 || key == "burstiness") continue;
    EXPECT_TRUE(report->count(key)) << key;
  }
  EXPECT_EQ(report->at("completed"), 4);
  EXPECT_EQ(report->at("request_rate"), 4.0);
  EXPECT_TRUE(report->count("p99.9_e2el_ms"));
  EXPECT_TRUE(report->count("p50_itl_ms"));
  EXPECT_TRUE(report->count("request_goodput"));
}

// A console log as vllm prints it, with lines before the block and a line
// servesim does not print (a speculative-decoding figure).
TEST(ResultReaderTest, ReadsTheBlockOutOfAConsoleLog) {
  const char* log =
      "INFO 12-02 10:00:00 Starting initial single prompt test run...\n"
      "100%|##########| 1000/1000 [01:12<00:00, 13.74it/s]\n"
      "============ Serving Benchmark Result ============\n"
      "Successful requests:                     984       \n"
      "Failed requests:                         16        \n"
      "Benchmark duration (s):                  236.70    \n"
      "Total input tokens:                      215176    \n"
      "Total generated tokens:                  194893    \n"
      "Request throughput (req/s):              4.16      \n"
      "Output token throughput (tok/s):         823.39    \n"
      "Peak output token throughput (tok/s):    4212.00   \n"
      "Peak concurrent requests:                984.00    \n"
      "Total token throughput (tok/s):          1732.48   \n"
      "---------------Time to First Token----------------\n"
      "Mean TTFT (ms):                          65710.22  \n"
      "Median TTFT (ms):                        66076.17  \n"
      "P99 TTFT (ms):                           125723.14 \n"
      "---------------Speculative Decoding---------------\n"
      "Acceptance rate (%):                     71.20     \n"
      "==================================================\n"
      "INFO shutting down\n";
  absl::StatusOr<std::map<std::string, double>> figures = ReadBenchReportFigures(log);
  ASSERT_TRUE(figures.ok()) << figures.status();
  EXPECT_EQ(figures->size(), 13u);
  EXPECT_EQ(figures->at("completed"), 984);
  EXPECT_EQ(figures->at("failed"), 16);
  EXPECT_DOUBLE_EQ(figures->at("duration"), 236.70);
  EXPECT_DOUBLE_EQ(figures->at("total_token_throughput"), 1732.48);
  EXPECT_DOUBLE_EQ(figures->at("p99_ttft_ms"), 125723.14);
  // vLLM's own spelling, "Total Token throughput", reads the same (a log
  // with it had lost the figure without a word).
  std::string capital = log;
  capital.replace(capital.find("Total token"), 11, "Total Token");
  absl::StatusOr<std::map<std::string, double>> again = ReadBenchReportFigures(capital);
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_DOUBLE_EQ(again->at("total_token_throughput"), 1732.48);
}

TEST(ResultReaderTest, RefusesWhatIsNotAResult) {
  EXPECT_EQ(std::string(ReadBenchReportFigures("INFO nothing here\n").status().message()),
            "no \"Serving Benchmark Result\" block in the report");
  EXPECT_FALSE(ReadBenchReportFigures("============ Serving Benchmark Result ============\n"
                                      "Successful requests:                     x\n"
                                      "==================================================\n")
                   .ok());
  // A block cut short (the run died mid-print).
  EXPECT_FALSE(ReadBenchReportFigures("============ Serving Benchmark Result ============\n"
                                      "Successful requests:                     10\n"
                                      "Benchmark duration (s):                  2.0\n")
                   .ok());
  EXPECT_EQ(std::string(
                ReadResultJsonFigures("{\"completed\": 10, \"duration\": 2.0").status().message()),
            "JSON: expected ',' or '}' at offset 33");
  EXPECT_EQ(std::string(ReadResultJsonFigures("{\"completed\": 10}").status().message()),
            "the result JSON has no \"duration\" figure");
  EXPECT_EQ(std::string(ReadResultJsonFigures("[1, 2]").status().message()),
            "JSON: expected '{' at offset 0");
  // vllm bench serve --append-result: one object per run, one per line.
  EXPECT_EQ(ReadResultJsonFigures("{\"completed\": 10, \"duration\": 2.0}\n"
                                  "{\"completed\": 10, \"duration\": 2.1}\n")
                .status()
                .message(),
            "JSON: a second result object (--append-result writes one per run; keep one run's "
            "result per file) at offset 35");
  absl::StatusOr<std::map<std::string, double>> ok = ReadResultJsonFigures(
      "{\"date\": \"20261202\", \"completed\": 10, \"duration\": 2.5, \"request_rate\": \"inf\", "
      "\"request_goodput\": null, \"std_ttft_ms\": NaN, \"ttfts\": [0.1, 0.2], "
      "\"errors\": [\"\", \"a \\\"quoted\\\" ]\"]}");
  ASSERT_TRUE(ok.ok()) << ok.status();
  EXPECT_EQ(ok->size(), 2u);
  EXPECT_DOUBLE_EQ(ok->at("duration"), 2.5);
  // A figure the report prints must be a number where the JSON has it.
  for (const char* bad : {"\"280.0\"", "true", "[1]", "NaN", "Infinity", "1e400"}) {
    absl::StatusOr<std::map<std::string, double>> r = ReadResultJsonFigures(
        absl::StrCat("{\"completed\": 10, \"duration\": 2.5, \"mean_ttft_ms\": ", bad, "}"));
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_NE(r.status().message().find("\"mean_ttft_ms\" is not a finite number"),
              std::string::npos)
        << r.status();
  }
}

// A figure only the saved JSON holds (failed, num_prompts) may not be
// another type either; and a console log that gives one figure twice with
// two values is refused rather than read as its later line, while the same
// line twice (a percentile asked for twice) is read.
TEST(ResultReaderTest, RefusesAWronglyTypedOrRepeatedFigure) {
  for (const char* bad : {"\"abc\"", "[1]", "{\"a\": 1}", "true"}) {
    for (const char* key : {"failed", "num_prompts"}) {
      absl::StatusOr<std::map<std::string, double>> r = ReadResultJsonFigures(
          absl::StrCat("{\"completed\": 10, \"duration\": 2.5, \"", key, "\": ", bad, "}"));
      ASSERT_FALSE(r.ok()) << key << " " << bad;
      EXPECT_NE(r.status().message().find("is not a finite number: not a number"),
                std::string::npos)
          << r.status();
    }
  }
  EXPECT_TRUE(ReadResultJsonFigures("{\"completed\": 10, \"duration\": 2.5, \"failed\": null}")
                  .ok());
  absl::StatusOr<std::map<std::string, double>> twice =
      ReadBenchReportFigures("============ Serving Benchmark Result ============\n"
                             "Successful requests:                     10\n"
                             "Benchmark duration (s):                  2.0\n"
                             "Mean TTFT (ms):                          273.42\n"
                             "Mean TTFT (ms):                          999.0\n"
                             "==================================================\n");
  ASSERT_FALSE(twice.ok());
  EXPECT_EQ(twice.status().message(),
            "the report gives \"Mean TTFT (ms):\" twice, with different values");
  absl::StatusOr<std::map<std::string, double>> repeated = ReadBenchReportFigures(
      "============ Serving Benchmark Result ============\n"
      "Successful requests:                     10\n"
      "Benchmark duration (s):                  2.0\n"
      "P99 TTFT (ms):                           273.42\n"
      "P99 TTFT (ms):                           273.42\n"
      "==================================================\n");
  ASSERT_TRUE(repeated.ok()) << repeated.status();
  EXPECT_EQ(repeated->at("p99_ttft_ms"), 273.42);
}

// Python writes NaN and Infinity into the JSON: a core figure written so is
// there but not a number, which the error says instead of calling it missing.
TEST(ResultReaderTest, ANonFiniteCoreFigureIsNamedAsSuch) {
  for (const char* bad : {"NaN", "Infinity", "-Infinity"}) {
    absl::Status s =
        ReadResultJsonFigures(absl::StrCat("{\"completed\": 10, \"duration\": ", bad, "}")).status();
    EXPECT_EQ(s.message(), absl::StrCat("the result JSON's \"duration\" is not a finite number: ", bad));
  }
  absl::Status s = ReadResultJsonFigures("{\"completed\": NaN, \"duration\": 1}").status();
  EXPECT_EQ(s.message(), "the result JSON's \"completed\" is not a finite number: NaN");
}

// A --save-result JSON's per-request lists, in send order; other keys,
// nested values included, are skipped.
TEST(ResultReaderTest, ReadsThePerRequestLengths) {
  absl::StatusOr<ResultLengths> l = ReadResultJsonLengths(
      R"({"completed": 2, "input_lens": [100, 250], "itls": [[0.1, 0.2], []],)"
      R"( "output_lens": [30, 0], "errors": ["", "boom"]})");
  ASSERT_TRUE(l.ok()) << l.status();
  EXPECT_EQ(l->input_lens, (std::vector<int64_t>{100, 250}));
  EXPECT_EQ(l->output_lens, (std::vector<int64_t>{30, 0}));
  absl::StatusOr<ResultLengths> none = ReadResultJsonLengths(R"({"completed": 2})");
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(none->output_lens.empty());
  EXPECT_EQ(std::string(ReadResultJsonLengths(R"({"output_lens": [30, -1]})").status().message()),
            "JSON: \"output_lens\": expected a whole number >= 0, got \"-1\" at offset 23");
  EXPECT_EQ(std::string(ReadResultJsonLengths(R"({"output_lens": [30, 2.5]})").status().message()),
            "JSON: \"output_lens\": expected a whole number >= 0, got \"2.5\" at offset 24");
  EXPECT_EQ(std::string(ReadResultJsonLengths(R"({"output_lens": 30})").status().message()),
            "JSON: \"output_lens\": expected a list at offset 16");
}

}  // namespace
}  // namespace servesim::metrics
