#include "sim/planning/sweep_plots.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/strip.h"

namespace servesim::planning {
namespace {

std::string Short(const std::string& axis) {
  return std::string(absl::StripPrefix(absl::StripPrefix(axis, "--"), "-"));
}

// Units of the axes a sweep usually varies, for the x-axis label.
std::string AxisLabel(const std::string& axis) {
  static const auto* const kUnits = new std::map<std::string, std::string>{
      {"--request-rate", "requests/s"},    {"--num-prompts", "requests"},
      {"--random-input-len", "tokens"},    {"--random-output-len", "tokens"},
      {"--context-length", "tokens"},      {"--max-model-len", "tokens"},
      {"--max-num-batched-tokens", "tokens"}, {"--max-concurrency", "requests"},
      {"--max-num-seqs", "sequences"},     {"--max-running-requests", "requests"},
      {"--dp-size", "ranks"},              {"--data-parallel-size", "ranks"},
      {"--trace-time-scale", "x"}};
  auto it = kUnits->find(axis);
  return it == kUnits->end() ? axis : absl::StrCat(axis, " (", it->second, ")");
}

std::string Subtitle(const SweepTable& table) {
  int64_t ok = 0;
  for (const PointResult& r : table.rows) ok += r.status == PointStatus::kOk;
  std::string s = absl::StrCat("servesim sweep: ", table.rows.size(), " point(s), ", ok, " ran");
  if (ok < static_cast<int64_t>(table.rows.size())) {
    absl::StrAppend(&s, ", ", table.rows.size() - ok, " refused or failed (not drawn; see sweep.csv)");
  }
  if (!table.rows.empty()) {
    // Commands of the first point, for context; values that vary are in the legend.
    absl::StrAppend(&s, "; DeepSeek-V3.2 on H200, simulated");
  }
  return s;
}

}  // namespace

std::vector<size_t> ParetoFront(const std::vector<std::pair<double, double>>& points) {
  std::vector<size_t> order(points.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  // Highest throughput first; among equal throughput, lowest latency first,
  // then the earlier point.
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    if (points[a].first != points[b].first) return points[a].first > points[b].first;
    return points[a].second < points[b].second;
  });
  std::vector<size_t> front;
  bool any = false;
  double best_latency = 0;
  for (size_t i : order) {
    if (!any || points[i].second < best_latency) {
      front.push_back(i);
      best_latency = points[i].second;
      any = true;
    }
  }
  std::reverse(front.begin(), front.end());
  return front;
}

Figure ThroughputFigure(const SweepTable& table) {
  Figure fig;
  PlotPanel panel;
  const bool has_axis = !table.axis_names.empty();
  const std::string first = has_axis ? table.axis_names[0] : "point";
  fig.title = has_axis ? absl::StrCat("Total token throughput vs ", first)
                       : "Total token throughput";
  fig.subtitle = Subtitle(table);
  panel.title = "total (input + output) tokens per second";
  panel.x_label = AxisLabel(first);
  panel.y_label = "total token throughput (tok/s)";

  // Numeric first axis: real positions; otherwise categories in grid order.
  bool numeric = has_axis;
  double lo = 0, hi = 0;
  std::vector<std::string> categories;
  for (const PointResult& r : table.rows) {
    const std::string v = has_axis ? r.point.values[0] : "base";
    double d = 0;
    // "inf" (every request at t = 0) has no place on a numeric axis: categories.
    if (!absl::SimpleAtod(v, &d) || !std::isfinite(d)) numeric = false;
    if (categories.empty() || std::find(categories.begin(), categories.end(), v) == categories.end()) {
      categories.push_back(v);
    }
    lo = categories.size() == 1 ? d : std::min(lo, d);
    hi = categories.size() == 1 ? d : std::max(hi, d);
  }
  if (numeric) {
    panel.log_x = lo > 0 && hi / lo > 10;
  } else {
    panel.x_categories = categories;
  }

  // One series per combination of the other axes, in grid order.
  std::vector<std::string> keys;
  std::map<std::string, PlotSeries> series;
  std::set<std::string> failed_series;  // a point of theirs lost requests
  int spread_fits = 0;                  // the most fits a point's whisker spans
  for (const PointResult& r : table.rows) {
    std::vector<std::string> parts;
    for (size_t k = 1; k < table.axis_names.size(); ++k) {
      parts.push_back(absl::StrCat(Short(table.axis_names[k]), "=", r.point.values[k]));
    }
    const std::string key = parts.empty() ? "simulated" : absl::StrJoin(parts, ", ");
    if (!series.count(key)) {
      keys.push_back(key);
      series[key].name = key;
    }
    if (r.status != PointStatus::kOk) continue;
    if (r.figures.failed > 0) failed_series.insert(key);
    PlotPoint p;
    const std::string v = has_axis ? r.point.values[0] : "base";
    if (numeric) {
      absl::SimpleAtod(v, &p.x);
    } else {
      p.x = static_cast<double>(std::find(categories.begin(), categories.end(), v) -
                                categories.begin());
    }
    p.y = r.figures.total_token_throughput;
    if (const FigureSpread* f = r.figures.spread.Find(kTotalTokenThroughput)) {
      p.has_range = true;
      p.y_low = f->low;
      p.y_high = f->high;
      spread_fits = std::max(spread_fits, r.figures.spread.fits);
    }
    series[key].points.push_back(p);
  }
  // Series with identical points would hide each other: one line, all names.
  std::vector<std::vector<std::string>> names;
  for (const std::string& k : keys) {
    PlotSeries s = series[k];
    std::stable_sort(s.points.begin(), s.points.end(),
                     [](const PlotPoint& a, const PlotPoint& b) { return a.x < b.x; });
    auto same = std::find_if(panel.series.begin(), panel.series.end(), [&](const PlotSeries& o) {
      return o.points.size() == s.points.size() &&
             std::equal(o.points.begin(), o.points.end(), s.points.begin(),
                        [](const PlotPoint& a, const PlotPoint& b) {
                          return a.x == b.x && a.y == b.y && a.has_range == b.has_range &&
                                 a.y_low == b.y_low && a.y_high == b.y_high;
                        });
    });
    if (same != panel.series.end() && !s.points.empty()) {
      names[static_cast<size_t>(same - panel.series.begin())].push_back(k);
      continue;
    }
    names.push_back({k});
    panel.series.push_back(std::move(s));
  }
  for (size_t i = 0; i < panel.series.size(); ++i) {
    panel.series[i].name = absl::StrJoin(names[i], " = ");
    if (failed_series.count(names[i][0])) absl::StrAppend(&panel.series[i].name, " (failed requests)");
  }
  if (table.axis_names.size() > 1) panel.legend_title = "series";
  if (spread_fits > 0) {
    panel.note = absl::StrCat("whiskers: lowest to highest over the engine's leave-one-out fits (",
                              "up to ", spread_fits, "; servesim sweep --spread)");
  }
  fig.panels.push_back(std::move(panel));
  return fig;
}

Figure ParetoFigure(const SweepTable& table) {
  Figure fig;
  fig.title = "Latency vs throughput: Pareto front of the configurations";
  fig.subtitle = Subtitle(table);
  struct Metric {
    const char* title;
    const char* label;
    double PointFigures::*field;
  };
  const Metric metrics[] = {
      {"P99 time to first token", "P99 TTFT (ms)", &PointFigures::p99_ttft_ms},
      {"Mean time per output token", "mean TPOT (ms)", &PointFigures::mean_tpot_ms}};
  for (const Metric& m : metrics) {
    PlotPanel panel;
    panel.title = m.title;
    panel.x_label = "total token throughput (tok/s)";
    panel.y_label = m.label;
    panel.note = "labels: point index in sweep.csv; front = no point has more tok/s and less latency";
    std::vector<std::pair<double, double>> xy;
    std::vector<const PointResult*> rows;
    // A configuration that turned requests away is not a candidate for the
    // front: its latency is measured on the requests it kept.
    PlotSeries lossy;
    lossy.name = "failed requests (not on front)";
    lossy.line = false;
    lossy.color = 1;
    for (const PointResult& r : table.rows) {
      if (r.status != PointStatus::kOk) continue;
      if (r.figures.failed > 0) {
        lossy.points.push_back(
            {r.figures.total_token_throughput, r.figures.*(m.field), absl::StrCat("#", r.point.index)});
        continue;
      }
      xy.emplace_back(r.figures.total_token_throughput, r.figures.*(m.field));
      rows.push_back(&r);
    }
    PlotSeries all;
    all.name = "configuration";
    all.line = false;
    all.color = 9;
    double lo = 0, hi = 0;
    for (size_t i = 0; i < xy.size(); ++i) {
      all.points.push_back({xy[i].first, xy[i].second, ""});
      lo = i == 0 ? xy[i].second : std::min(lo, xy[i].second);
      hi = i == 0 ? xy[i].second : std::max(hi, xy[i].second);
    }
    PlotSeries front;
    front.name = "Pareto front";
    front.emphasize = true;
    front.show_labels = true;
    front.color = 2;
    for (size_t i : ParetoFront(xy)) {
      front.points.push_back({xy[i].first, xy[i].second, absl::StrCat("#", rows[i]->point.index)});
    }
    for (const PlotPoint& p : lossy.points) {
      lo = xy.empty() && &p == &lossy.points.front() ? p.y : std::min(lo, p.y);
      hi = xy.empty() && &p == &lossy.points.front() ? p.y : std::max(hi, p.y);
    }
    panel.log_y = lo > 0 && hi / lo > 10;
    panel.series.push_back(std::move(all));
    if (!lossy.points.empty()) panel.series.push_back(std::move(lossy));
    panel.series.push_back(std::move(front));
    fig.panels.push_back(std::move(panel));
  }
  return fig;
}

}  // namespace servesim::planning
