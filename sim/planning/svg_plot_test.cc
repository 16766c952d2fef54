#include "sim/planning/svg_plot.h"

#include <gtest/gtest.h>

namespace servesim::planning {
namespace {

std::vector<double> Values(const std::vector<Tick>& ticks) {
  std::vector<double> v;
  for (const Tick& t : ticks) v.push_back(t.value);
  return v;
}

TEST(LinearTicksTest, StepsOfOneTwoOrFiveCoverTheRange) {
  // 97 / 5 = 19.4 -> step 20.
  EXPECT_EQ(Values(LinearTicks(0, 97, 5)), (std::vector<double>{0, 20, 40, 60, 80, 100}));
  // 0.9 / 4 = 0.225 -> step 0.5.
  EXPECT_EQ(Values(LinearTicks(0.1, 1.0, 4)), (std::vector<double>{0, 0.5, 1.0}));
  const std::vector<Tick> t = LinearTicks(0, 12000, 5);
  EXPECT_EQ(t[1].label, "5k");  // 2400 per interval -> step 5000
}

TEST(LogTicksTest, DecadesAndTwoFiveBetweenThemOnShortRanges) {
  EXPECT_EQ(Values(LogTicks(1, 1000)), (std::vector<double>{1, 10, 100, 1000}));
  EXPECT_EQ(Values(LogTicks(1, 50)), (std::vector<double>{1, 2, 5, 10, 20, 50, 100}));
  EXPECT_TRUE(LogTicks(0, 10).empty());
}

TEST(TickLabelTest, CompactUnits) {
  EXPECT_EQ(TickLabel(1500), "1.5k");
  EXPECT_EQ(TickLabel(20000), "20k");
  EXPECT_EQ(TickLabel(3e6), "3M");
  EXPECT_EQ(TickLabel(0.5), "0.5");
  EXPECT_EQ(TickLabel(0), "0");
  EXPECT_EQ(TickLabel(12), "12");
}

TEST(RenderSvgTest, EscapesTextAndDrawsEverySeriesInTheLegend) {
  Figure f;
  f.title = "a < b & c";
  PlotPanel p;
  p.x_label = "rate (req/s)";
  p.y_label = "tok/s";
  p.series.push_back({"first", {{1, 2, ""}, {2, 3, ""}}, true, true, false, false, -1});
  p.series.push_back({"second", {{1, 1, ""}}, true, true, false, false, -1});
  f.panels.push_back(p);
  const std::string svg = RenderSvg(f);
  EXPECT_EQ(svg.rfind("<svg xmlns=\"http://www.w3.org/2000/svg\"", 0), 0u);
  EXPECT_NE(svg.find("a &lt; b &amp; c"), std::string::npos);
  EXPECT_NE(svg.find(">first</text>"), std::string::npos);
  EXPECT_NE(svg.find(">second</text>"), std::string::npos);
  EXPECT_NE(svg.find("<polyline"), std::string::npos);
  EXPECT_EQ(svg.substr(svg.size() - 7), "</svg>\n");
}

// A range is drawn as a capped whisker, and the y axis stretches to hold it:
// a point at 10 whose range reaches 100 needs a tick at 100.
TEST(RenderSvgTest, DrawsAPointsRangeAsAWhisker) {
  Figure f;
  PlotPanel p;
  PlotPoint with{2, 10, ""};
  with.has_range = true;
  with.y_low = 5;
  with.y_high = 100;
  p.series.push_back({"s", {{1, 10, ""}, with}, true, true, false, false, -1});
  f.panels.push_back(p);
  const std::string svg = RenderSvg(f);
  EXPECT_EQ(svg.find("<path d=\"M"), svg.rfind("<path d=\"M"));  // one whisker
  EXPECT_NE(svg.find("<path d=\"M"), std::string::npos) << svg;
  EXPECT_NE(svg.find(">100</text>"), std::string::npos) << svg;
  p.series[0].points[1].has_range = false;
  f.panels[0] = p;
  const std::string plain = RenderSvg(f);
  EXPECT_EQ(plain.find("<path"), std::string::npos);
  EXPECT_EQ(plain.find(">100</text>"), std::string::npos);
}

TEST(RenderSvgTest, LeavesOutPointsALogAxisCannotShow) {
  Figure f;
  PlotPanel p;
  p.log_y = true;
  p.series.push_back({"s", {{1, 0, "zero"}, {2, 10, "ten"}}, false, true, false, true, -1});
  f.panels.push_back(p);
  const std::string svg = RenderSvg(f);
  EXPECT_EQ(svg.find(">zero<"), std::string::npos);
  EXPECT_NE(svg.find(">ten<"), std::string::npos);
  EXPECT_NE(svg.find("(log scale)"), std::string::npos);
}

}  // namespace
}  // namespace servesim::planning
