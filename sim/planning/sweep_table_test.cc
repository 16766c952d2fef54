#include "sim/planning/sweep_table.h"

#include <gtest/gtest.h>

#include "absl/strings/str_cat.h"

namespace servesim::planning {
namespace {

TEST(CsvFieldTest, QuotesOnlyWhatNeedsIt) {
  EXPECT_EQ(CsvField("plain"), "plain");
  EXPECT_EQ(CsvField("a,b"), "\"a,b\"");
  EXPECT_EQ(CsvField("say \"hi\""), "\"say \"\"hi\"\"\"");
  EXPECT_EQ(CsvField("two\nlines"), "\"two\nlines\"");
  EXPECT_EQ(CsvField(" padded"), "\" padded\"");
  EXPECT_EQ(CsvField(""), "");
}

SweepTable MakeTable() {
  SweepTable t;
  t.axis_names = {"--request-rate", "engine"};
  for (int i = 0; i < 5; ++i) {
    PointResult r;
    r.point.index = i;
    r.point.values = {std::to_string(i + 1), i % 2 ? "sglang" : "vllm"};
    r.point.serve_command = "vllm serve m --speculative-config '{\"method\": \"mtp\"}'";
    r.point.bench_command = absl::StrCat("vllm bench serve --request-rate ", i + 1);
    r.figures.completed = 100 + i;
    r.figures.total_token_throughput = 1234.5678901234567 * (i + 1);
    r.figures.p99_ttft_ms = 0.1 + i;
    if (i == 3) {
      r.status = PointStatus::kRefused;
      r.reason = "KV cache: 0 blocks, need \"more\", really";
    }
    t.rows.push_back(r);
  }
  return t;
}

TEST(SweepCsvTest, RoundTripsByteForByte) {
  const SweepTable t = MakeTable();
  const std::string csv = FormatSweepCsv(t);
  absl::StatusOr<SweepTable> back = ParseSweepCsv(csv, "t.csv");
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->axis_names, t.axis_names);
  ASSERT_EQ(back->rows.size(), 5u);
  EXPECT_EQ(back->rows[3].status, PointStatus::kRefused);
  EXPECT_EQ(back->rows[3].reason, t.rows[3].reason);
  EXPECT_EQ(back->rows[4].figures.total_token_throughput, t.rows[4].figures.total_token_throughput);
  EXPECT_EQ(FormatSweepCsv(*back), csv);
}

TEST(SweepCsvTest, RefusedRowsHaveEmptyFigures) {
  const std::string csv = FormatSweepCsv(MakeTable());
  const std::string header = csv.substr(0, csv.find('\n'));
  EXPECT_EQ(header.rfind("index,--request-rate,engine,serve_command,bench_command,status,reason,"
                         "completed,",
                         0),
            0u);
  EXPECT_NE(csv.find(",refused,\"KV cache: 0 blocks, need \"\"more\"\", really\",,,"),
            std::string::npos);
}

TEST(SweepCsvTest, RejectsAForeignHeaderAndBadRows) {
  EXPECT_FALSE(ParseSweepCsv("a,b\n1,2\n", "x.csv").ok());
  std::string csv = FormatSweepCsv(MakeTable());
  csv.replace(csv.find(",ok,"), 4, ",maybe,");
  absl::Status s = ParseSweepCsv(csv, "x.csv").status();
  EXPECT_NE(s.message().find("x.csv: row 1: status"), std::string::npos) << s;
}

TEST(MergeTablesTest, ShardsMergeToTheWholeTable) {
  const SweepTable whole = MakeTable();
  SweepTable even, odd;
  even.axis_names = odd.axis_names = whole.axis_names;
  for (const PointResult& r : whole.rows) (r.point.index % 2 ? odd : even).rows.push_back(r);
  // Written and read back as separate processes would.
  absl::StatusOr<SweepTable> a = ParseSweepCsv(FormatSweepCsv(odd), "1");
  absl::StatusOr<SweepTable> b = ParseSweepCsv(FormatSweepCsv(even), "0");
  absl::StatusOr<SweepTable> merged = MergeTables({*a, *b});
  ASSERT_TRUE(merged.ok()) << merged.status();
  EXPECT_EQ(FormatSweepCsv(*merged), FormatSweepCsv(whole));
  EXPECT_EQ(FormatSweepJson(*merged), FormatSweepJson(whole));
}

TEST(MergeTablesTest, DuplicateIndexAndAxisMismatchAreErrors) {
  const SweepTable whole = MakeTable();
  EXPECT_FALSE(MergeTables({whole, whole}).ok());
  SweepTable other = whole;
  other.axis_names = {"--num-prompts", "engine"};
  other.rows.clear();
  EXPECT_FALSE(MergeTables({whole, other}).ok());
}

TEST(SweepJsonTest, RefusedPointsHaveReasonAndNullMetrics) {
  const std::string json = FormatSweepJson(MakeTable());
  EXPECT_NE(json.find("\"status\": \"refused\", \"reason\": \"KV cache: 0 blocks, need \\\"more\\\", "
                      "really\",\n     \"metrics\": null}"),
            std::string::npos)
      << json;
  EXPECT_NE(json.find("\"axes\": {\"--request-rate\": \"1\", \"engine\": \"vllm\"}"),
            std::string::npos);
  EXPECT_NE(json.find("\"completed\": 100,"), std::string::npos);
}

TEST(ShardFileNameTest, NamesShardAndCount) {
  EXPECT_EQ(ShardFileName({2, 8}), "sweep.shard-2-of-8.csv");
}

}  // namespace
}  // namespace servesim::planning
