#include "sim/planning/sweep_table.h"

#include <algorithm>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"

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
    if (i == 1) {
      r.figures.extrapolations = {{"longer prompts", "extrapolation: prompts up to 2000 tokens"},
                                  {"spread arrivals", "extrapolation: requests arrive over time"}};
    }
    if (i == 2) r.figures.extrapolations = {{"longer prompts", "extrapolation: prompts ..."}};
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

// A figure is a count, a time or a rate: an edited shard's nan, inf or
// negative value is refused, not merged as null or -5.
TEST(SweepCsvTest, RejectsAFigureThatIsNotAFiniteNumberAtLeastZero) {
  const std::string csv = FormatSweepCsv(MakeTable());
  const std::vector<std::string> lines = absl::StrSplit(csv, '\n');
  const std::vector<std::string> header = absl::StrSplit(lines[0], ',');
  auto column = [&](const char* name) {
    return static_cast<size_t>(std::find(header.begin(), header.end(), name) - header.begin());
  };
  ASSERT_LT(column("mean_ttft_ms"), header.size());
  for (const char* bad : {"nan", "inf", "-5"}) {
    std::vector<std::string> row = absl::StrSplit(lines[1], ',');
    ASSERT_EQ(row[column("status")], "ok");
    row[column("mean_ttft_ms")] = bad;
    std::vector<std::string> edited = lines;
    edited[1] = absl::StrJoin(row, ",");
    absl::Status s = ParseSweepCsv(absl::StrJoin(edited, "\n"), "x.csv").status();
    EXPECT_NE(s.message().find(absl::StrCat("x.csv: row 1: mean_ttft_ms: expected a finite "
                                            "number >= 0, got \"", bad, "\"")),
              std::string::npos)
        << s;
  }
}

// The whole table's rows with index % count == index, as `sweep --shard`
// writes them and sweep-merge reads them back.
SweepTable ShardOf(const SweepTable& whole, int index, int count,
                   const std::string& sweep_id = "0123456789abcdef") {
  SweepTable shard;
  shard.axis_names = whole.axis_names;
  shard.spread_figures = whole.spread_figures;
  shard.sweep_id = sweep_id;
  shard.sweep_points = static_cast<int64_t>(whole.rows.size());
  for (const PointResult& r : whole.rows) {
    if (r.point.index % count == index) shard.rows.push_back(r);
  }
  return *ParseSweepCsv(FormatSweepCsv(shard), ShardFileName({index, count}));
}

std::string MergeError(const std::vector<SweepTable>& shards) {
  absl::StatusOr<SweepTable> merged = MergeTables(shards);
  return merged.ok() ? "ok" : std::string(merged.status().message());
}

TEST(MergeTablesTest, ShardsMergeToTheWholeTable) {
  const SweepTable whole = MakeTable();
  absl::StatusOr<SweepTable> merged = MergeTables({ShardOf(whole, 1, 2), ShardOf(whole, 0, 2)});
  ASSERT_TRUE(merged.ok()) << merged.status();
  EXPECT_EQ(FormatSweepCsv(*merged), FormatSweepCsv(whole));
  EXPECT_EQ(FormatSweepJson(*merged), FormatSweepJson(whole));
  // More shards than points: a shard may hold none.
  std::vector<SweepTable> sevenths;
  for (int i = 0; i < 7; ++i) sevenths.push_back(ShardOf(whole, i, 7));
  EXPECT_EQ(MergeError(sevenths), "ok");
}

// A shard names its sweep and the sweep's size on every row.
TEST(MergeTablesTest, AShardCarriesItsSweepIdAndPointCount) {
  const std::string csv = FormatSweepCsv(ShardOf(MakeTable(), 0, 2));
  EXPECT_NE(csv.find(",p99_itl_ms,extrapolations,sweep_points,sweep_id\n"), std::string::npos)
      << csv;
  EXPECT_NE(csv.find(",5,0123456789abcdef\n"), std::string::npos) << csv;
  absl::StatusOr<SweepTable> back = ParseSweepCsv(csv, "s.csv");
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->sweep_id, "0123456789abcdef");
  EXPECT_EQ(back->sweep_points, 5);
  EXPECT_EQ(FormatSweepCsv(*back), csv);
}

// The table keeps each point's extrapolation kinds, so a merged sweep's
// summary counts them as the whole run's did.
TEST(SweepCsvTest, KeepsTheExtrapolationKinds) {
  const SweepTable whole = MakeTable();
  const std::string csv = FormatSweepCsv(whole);
  EXPECT_NE(csv.find(",longer prompts; spread arrivals\n"), std::string::npos) << csv;
  absl::StatusOr<SweepTable> merged = MergeTables({ShardOf(whole, 0, 2), ShardOf(whole, 1, 2)});
  ASSERT_TRUE(merged.ok()) << merged.status();
  ASSERT_EQ(merged->rows[1].figures.extrapolations.size(), 2u);
  EXPECT_EQ(merged->rows[1].figures.extrapolations[1].kind, "spread arrivals");
  EXPECT_EQ(ExtrapolationSummary(merged->rows), ExtrapolationSummary(whole.rows));
  EXPECT_NE(ExtrapolationSummary(merged->rows).find("2 of 4 ok point(s) extrapolate"),
            std::string::npos)
      << ExtrapolationSummary(merged->rows);
  EXPECT_NE(FormatSweepJson(whole).find(
                "\"extrapolations\": [\"longer prompts\", \"spread arrivals\"]}"),
            std::string::npos);
  std::string bad = csv;
  bad.replace(bad.find("spread arrivals"), 15, "spread Arrivals");
  const absl::Status s = ParseSweepCsv(bad, "x.csv").status();
  EXPECT_NE(s.message().find("x.csv: row 2: extrapolations: unknown kind \"spread Arrivals\""),
            std::string::npos)
      << s;
}

TEST(MergeTablesTest, DuplicateIndexAndAxisMismatchAreErrors) {
  const SweepTable whole = MakeTable();
  EXPECT_NE(MergeError({ShardOf(whole, 0, 1), ShardOf(whole, 0, 1)}).find("appears twice"),
            std::string::npos);
  SweepTable other = ShardOf(whole, 1, 2);
  other.axis_names = {"--num-prompts", "engine"};
  EXPECT_NE(MergeError({ShardOf(whole, 0, 2), other}).find("disagree on the axes"),
            std::string::npos);
}

// Shards of two sweeps with the same axes merged into one table that was
// neither; a row out of range stood in for a point that was then missing.
TEST(MergeTablesTest, RefusesShardsThatDoNotMakeOneSweep) {
  const SweepTable whole = MakeTable();
  EXPECT_NE(MergeError({ShardOf(whole, 0, 2), ShardOf(whole, 1, 2, "fedcba9876543210")})
                .find("sweep merge: sweep.shard-1-of-2.csv is a shard of another sweep "
                      "(fedcba9876543210, 5 points) than sweep.shard-0-of-2.csv"),
            std::string::npos);
  SweepTable far = ShardOf(whole, 1, 2);
  far.rows[0].point.index = 99999;
  EXPECT_NE(MergeError({ShardOf(whole, 0, 2), far})
                .find("sweep.shard-1-of-2.csv: point 99999 is out of range: the sweep has 5 "
                      "points"),
            std::string::npos);
  EXPECT_EQ(MergeError({ShardOf(whole, 0, 2)}),
            "sweep merge: the shards hold 3 of the sweep's 5 points; point 1 is in none");
  // A whole table is no shard.
  EXPECT_NE(MergeError({*ParseSweepCsv(FormatSweepCsv(whole), "sweep.csv")}).find("no sweep_id"),
            std::string::npos);
}

SweepTable SpreadTable() {
  SweepTable t = MakeTable();
  t.spread_figures = {"total_token_throughput", "mean_tpot_ms"};
  t.rows[0].figures.spread.fits = 7;
  t.rows[0].figures.spread.figures = {{"total_token_throughput", 1000.5, 1300.25},
                                      {"mean_tpot_ms", 40, 52.5}};
  t.rows[2].figures.spread.fits = 11;
  t.rows[2].figures.spread.figures = {{"total_token_throughput", 2000, 2000},
                                      {"mean_tpot_ms", 30, 31}};
  return t;
}

// `sweep --spread`: each ok point's ranges sit after its extrapolations (and
// before a shard's columns), read back as written, and merge like the rest.
TEST(SweepCsvTest, KeepsEachPointsSpread) {
  const SweepTable t = SpreadTable();
  const std::string csv = FormatSweepCsv(t);
  EXPECT_NE(csv.find(",extrapolations,spread_fits,total_token_throughput_low,"
                     "total_token_throughput_high,mean_tpot_ms_low,mean_tpot_ms_high\n"),
            std::string::npos)
      << csv;
  EXPECT_NE(csv.find(",7,1000.5,1300.25,40,52.5\n"), std::string::npos) << csv;
  // A point without a spread (a refusal here) leaves the columns empty.
  EXPECT_NE(csv.find("really\",,,,,,,,,,,,,,,,,,,,,,,\n"), std::string::npos) << csv;
  absl::StatusOr<SweepTable> back = ParseSweepCsv(csv, "t.csv");
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->spread_figures, t.spread_figures);
  EXPECT_EQ(back->rows[0].figures.spread.fits, 7);
  ASSERT_EQ(back->rows[0].figures.spread.figures.size(), 2u);
  EXPECT_EQ(back->rows[0].figures.spread.figures[1].key, "mean_tpot_ms");
  EXPECT_EQ(back->rows[0].figures.spread.figures[1].high, 52.5);
  EXPECT_EQ(back->rows[1].figures.spread.fits, 0);
  EXPECT_TRUE(back->rows[1].figures.spread.figures.empty());
  EXPECT_EQ(FormatSweepCsv(*back), csv);

  const SweepTable shard = ShardOf(t, 0, 2);
  EXPECT_NE(FormatSweepCsv(shard).find(",mean_tpot_ms_high,sweep_points,sweep_id\n"),
            std::string::npos);
  absl::StatusOr<SweepTable> merged = MergeTables({shard, ShardOf(t, 1, 2)});
  ASSERT_TRUE(merged.ok()) << merged.status();
  EXPECT_EQ(FormatSweepCsv(*merged), csv);
  EXPECT_EQ(FormatSweepJson(*merged), FormatSweepJson(t));
  // Shards with and without the spread are not one sweep.
  EXPECT_NE(MergeError({shard, ShardOf(MakeTable(), 1, 2)}).find("disagree on the spread columns"),
            std::string::npos);

  EXPECT_NE(FormatSweepJson(t).find("\"spread\": {\"fits\": 7, \"total_token_throughput\": "
                                    "{\"low\": 1000.5, \"high\": 1300.25}, \"mean_tpot_ms\": "
                                    "{\"low\": 40.0, \"high\": 52.5}}}"),
            std::string::npos)
      << FormatSweepJson(t);
}

TEST(SweepCsvTest, RejectsMalformedSpreadColumns) {
  const std::string csv = FormatSweepCsv(SpreadTable());
  auto error = [](std::string text, const std::string& from, const std::string& to) {
    text.replace(text.find(from), from.size(), to);
    return std::string(ParseSweepCsv(text, "x.csv").status().message());
  };
  // Not a figure, a high without its low, a figure twice, a pair cut short.
  EXPECT_NE(error(csv, "mean_tpot_ms_low,mean_tpot_ms_high", "speed_low,speed_high")
                .find("x.csv: spread columns must be KEY_low,KEY_high of a figure column, each "
                      "once, got speed_low,speed_high"),
            std::string::npos);
  EXPECT_NE(error(csv, "mean_tpot_ms_high", "mean_ttft_ms_high").find("spread columns must be"),
            std::string::npos);
  EXPECT_NE(error(csv, "mean_tpot_ms_low,mean_tpot_ms_high",
                  "total_token_throughput_low,total_token_throughput_high")
                .find("each once"),
            std::string::npos);
  EXPECT_NE(error(csv, ",mean_tpot_ms_high\n", "\n").find("spread_fits must be followed by"),
            std::string::npos);
  // A range that runs backwards, and a count of no fits.
  EXPECT_NE(error(csv, ",1000.5,1300.25,", ",1300.25,1000.5,")
                .find("row 1: total_token_throughput_low, total_token_throughput_high: expected "
                      "numbers, low <= high, got \"1300.25\", \"1000.5\""),
            std::string::npos);
  EXPECT_NE(error(csv, ",7,1000.5,", ",0,1000.5,")
                .find("row 1: spread_fits: expected an integer >= 1, got \"0\""),
            std::string::npos);
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
