#include "sim/fit/live_runs.h"

#include <gtest/gtest.h>

namespace servesim::fit {
namespace {

TEST(ParseCsvTest, QuotedFieldsKeepCommasQuotesAndNewlines) {
  auto rows = ParseCsv("a,b\n\"x, y\",\"say \"\"hi\"\"\nthere\"\n");
  ASSERT_TRUE(rows.ok());
  ASSERT_EQ(rows->size(), 2u);
  EXPECT_EQ((*rows)[1][0], "x, y");
  EXPECT_EQ((*rows)[1][1], "say \"hi\"\nthere");
}

TEST(ParseCsvTest, ReadsQuotedCommasQuotesAndLineBreaks) {
  absl::StatusOr<std::vector<std::vector<std::string>>> r =
      ParseCsv("a,\"b,c\",\"d\"\"e\"\r\n\"x\ny\",,\n");
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->size(), 2u);
  EXPECT_EQ((*r)[0], (std::vector<std::string>{"a", "b,c", "d\"e"}));
  EXPECT_EQ((*r)[1], (std::vector<std::string>{"x\ny", "", ""}));
  EXPECT_FALSE(ParseCsv("a,\"open\n").ok());
}

TEST(ParseCsvTest, UnterminatedQuoteIsAnError) {
  EXPECT_FALSE(ParseCsv("a\n\"open\n").ok());
}

TEST(ReadLiveRunsTest, ReadsTheSharedValidationRuns) {
  auto runs = ReadLiveRuns(std::string(SERVESIM_SHARED_DIR) + "/validation/sharegpt_runs.csv");
  ASSERT_TRUE(runs.ok()) << runs.status();
  ASSERT_EQ(runs->size(), 19u);
  const LiveRun& first = runs->front();
  EXPECT_EQ(first.name, "vllm-tp8-base");
  EXPECT_DOUBLE_EQ(first.measured.at("total_token_throughput"), 5713.95);
  // The MTP row's JSON keeps its quotes after CSV unescaping.
  EXPECT_NE((*runs)[4].serve_command.find("{\"method\":\"mtp\""), std::string::npos);
  EXPECT_EQ((*runs)[5].env.size(), 1u);
  EXPECT_EQ((*runs)[5].env[0].first, "VLLM_USE_DEEP_GEMM");
}

TEST(ReadLiveRunsTest, ReadsExpectedFailures) {
  auto runs =
      ReadLiveRuns(std::string(SERVESIM_SHARED_DIR) + "/validation/expected_failures.csv");
  ASSERT_TRUE(runs.ok()) << runs.status();
  ASSERT_EQ(runs->size(), 6u);
  for (const LiveRun& r : *runs) EXPECT_TRUE(r.expected_failure);
}

}  // namespace
}  // namespace servesim::fit
