// Hand-written SVG charts: panels of line/scatter series with titled, ticked
// axes (linear, logarithmic or categorical) and a legend. No plotting library.
#ifndef SERVESIM_SIM_PLANNING_SVG_PLOT_H_
#define SERVESIM_SIM_PLANNING_SVG_PLOT_H_

#include <string>
#include <vector>

namespace servesim::planning {

struct Tick {
  double value = 0;
  std::string label;
};

// "Nice" ticks (steps of 1, 2 or 5 times a power of ten) covering [lo, hi]
// with about `target_count` intervals; the first tick <= lo, the last >= hi.
std::vector<Tick> LinearTicks(double lo, double hi, int target_count);
// Ticks at powers of ten covering [lo, hi] (lo > 0), with 2x and 5x between
// them when the range spans fewer than three decades.
std::vector<Tick> LogTicks(double lo, double hi);
// Compact label: 0.5, 12, 1.5k, 20k, 3M.
std::string TickLabel(double v);

struct PlotPoint {
  double x = 0;  // for a categorical axis, the category index
  double y = 0;
  std::string label;  // drawn beside the marker when the series shows labels
  // With has_range: a whisker from y_low to y_high through the marker.
  bool has_range = false;
  double y_low = 0;
  double y_high = 0;
};

struct PlotSeries {
  std::string name;  // legend entry; empty: not in the legend
  std::vector<PlotPoint> points;
  bool line = true;      // join the points in order
  bool markers = true;
  bool emphasize = false;  // thicker line, larger markers, drawn on top
  bool show_labels = false;
  int color = -1;  // palette index; -1: the series' position
};

struct PlotPanel {
  std::string title;
  std::string x_label;  // with units, e.g. "request rate (req/s)"
  std::string y_label;
  bool log_x = false;
  bool log_y = false;
  // Non-empty: a categorical x axis; PlotPoint::x is the index.
  std::vector<std::string> x_categories;
  std::vector<PlotSeries> series;
  std::string legend_title;
  std::string note;  // one line under the x-axis label
};

struct Figure {
  std::string title;
  std::string subtitle;
  std::vector<PlotPanel> panels;  // side by side
  int panel_width = 700;          // px, legend included
  int panel_height = 460;
};

// The whole SVG document. Points with non-finite coordinates, or <= 0 on a
// log axis, are left out.
std::string RenderSvg(const Figure& figure);

}  // namespace servesim::planning

#endif  // SERVESIM_SIM_PLANNING_SVG_PLOT_H_
