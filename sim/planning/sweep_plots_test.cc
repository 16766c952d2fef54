#include "sim/planning/sweep_plots.h"

#include <gtest/gtest.h>

namespace servesim::planning {
namespace {

TEST(ParetoFrontTest, KeepsOnlyUndominatedPointsInThroughputOrder) {
  // (150, 90) loses to (200, 70); (200, 80) loses to (200, 70) at equal
  // throughput; the others each trade latency for throughput.
  const std::vector<std::pair<double, double>> pts = {
      {100, 50}, {200, 80}, {150, 90}, {200, 70}, {50, 40}};
  EXPECT_EQ(ParetoFront(pts), (std::vector<size_t>{4, 0, 3}));
}

TEST(ParetoFrontTest, IdenticalPointsKeepTheFirst) {
  EXPECT_EQ(ParetoFront({{10, 5}, {10, 5}}), (std::vector<size_t>{0}));
  EXPECT_TRUE(ParetoFront({}).empty());
}

SweepTable Table() {
  SweepTable t;
  t.axis_names = {"--request-rate", "--dp-size"};
  int64_t i = 0;
  for (const char* rate : {"1", "4", "32"}) {
    for (const char* dp : {"1", "8"}) {
      PointResult r;
      r.point.index = i++;
      r.point.values = {rate, dp};
      r.figures.total_token_throughput = 100.0 * r.point.index + 1;
      r.figures.p99_ttft_ms = 10.0 + r.point.index;
      r.figures.mean_tpot_ms = 5;
      if (r.point.index == 5) r.status = PointStatus::kRefused;
      t.rows.push_back(r);
    }
  }
  return t;
}

TEST(ThroughputFigureTest, OneSeriesPerOtherAxisComboAndLogXOverTenfold) {
  const Figure f = ThroughputFigure(Table());
  ASSERT_EQ(f.panels.size(), 1u);
  const PlotPanel& p = f.panels[0];
  EXPECT_TRUE(p.log_x);  // 1 .. 32 spans more than 10x
  EXPECT_TRUE(p.x_categories.empty());
  ASSERT_EQ(p.series.size(), 2u);
  EXPECT_EQ(p.series[0].name, "dp-size=1");
  EXPECT_EQ(p.series[0].points.size(), 3u);
  EXPECT_EQ(p.series[1].points.size(), 2u);  // the refused point is not drawn
  EXPECT_EQ(p.series[0].points[2].x, 32);
  EXPECT_EQ(p.series[0].points[2].y, 401);
  EXPECT_NE(f.subtitle.find("1 refused or failed"), std::string::npos);
  EXPECT_EQ(p.x_label, "--request-rate (requests/s)");
}

// A point's throughput range becomes its whisker, and the panel says what
// the whiskers span.
TEST(ThroughputFigureTest, ASpreadDrawsWhiskers) {
  SweepTable t = Table();
  t.rows[2].figures.spread.fits = 7;
  t.rows[2].figures.spread.figures = {{"mean_tpot_ms", 1, 9}, {"total_token_throughput", 150, 260}};
  const PlotPanel p = ThroughputFigure(t).panels[0];
  ASSERT_EQ(p.series[0].points.size(), 3u);
  const PlotPoint& with = p.series[0].points[1];  // rate 4, dp 1: point 2
  EXPECT_EQ(with.y, 201);
  EXPECT_TRUE(with.has_range);
  EXPECT_EQ(with.y_low, 150);
  EXPECT_EQ(with.y_high, 260);
  EXPECT_FALSE(p.series[0].points[0].has_range);
  EXPECT_NE(p.note.find("leave-one-out fits (up to 7;"), std::string::npos) << p.note;
  EXPECT_TRUE(ThroughputFigure(Table()).panels[0].note.empty());
}

TEST(ThroughputFigureTest, NonNumericFirstAxisIsCategorical) {
  SweepTable t = Table();
  t.axis_names[0] = "engine";
  for (PointResult& r : t.rows) r.point.values[0] = r.point.index < 2 ? "vllm" : "sglang";
  const PlotPanel p = ThroughputFigure(t).panels[0];
  EXPECT_EQ(p.x_categories, (std::vector<std::string>{"vllm", "sglang"}));
  EXPECT_FALSE(p.log_x);
}

TEST(ParetoFigureTest, MarksTheFrontWithPointIndices) {
  const Figure f = ParetoFigure(Table());
  ASSERT_EQ(f.panels.size(), 2u);
  // Throughput and TTFT both rise with the index, so every ok point is on the
  // TTFT front; at equal TPOT only the highest throughput is.
  EXPECT_EQ(f.panels[0].series[1].points.size(), 5u);
  ASSERT_EQ(f.panels[1].series[1].points.size(), 1u);
  EXPECT_EQ(f.panels[1].series[1].points[0].label, "#4");
}

TEST(ParetoFigureTest, PointsThatFailedRequestsAreNotOnTheFront) {
  SweepTable t = Table();
  t.rows[4].figures.failed = 3;  // the best TPOT point lost requests
  const PlotPanel p = ParetoFigure(t).panels[1];
  ASSERT_EQ(p.series.size(), 3u);
  EXPECT_EQ(p.series[1].points.size(), 1u);
  EXPECT_EQ(p.series[1].points[0].label, "#4");
  ASSERT_EQ(p.series[2].points.size(), 1u);  // the front: next best, #3
  EXPECT_EQ(p.series[2].points[0].label, "#3");
}

TEST(ThroughputFigureTest, IdenticalSeriesShareOneLegendEntry) {
  SweepTable t = Table();
  t.rows[5].status = PointStatus::kOk;
  for (PointResult& r : t.rows) {
    r.figures.total_token_throughput = r.point.values[0] == "1" ? 10 : 20;
  }
  const PlotPanel p = ThroughputFigure(t).panels[0];
  ASSERT_EQ(p.series.size(), 1u);
  EXPECT_EQ(p.series[0].name, "dp-size=1 = dp-size=8");
}

}  // namespace
}  // namespace servesim::planning
