#include "sim/planning/svg_plot.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace servesim::planning {
namespace {

// Tableau 10: distinguishable, and readable by most colour-blind readers.
constexpr const char* kPalette[] = {"#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f",
                                    "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac"};
constexpr int kPaletteSize = 10;

constexpr int kHeaderPx = 64;   // figure title and subtitle
constexpr int kLegendPx = 190;  // right of each plot area
constexpr int kLeftPx = 80, kTopPx = 42, kBottomPx = 78, kRightGapPx = 18;

std::string Escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      default: out += c;
    }
  }
  return out;
}

// Legend lines hold about this many 11-px characters beside the swatch.
constexpr size_t kLegendChars = 26;

// Greedy word wrap at blanks; a word longer than `width` gets a line of its own.
std::vector<std::string> WrapWords(const std::string& text, size_t width) {
  std::vector<std::string> lines;
  std::string line;
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find(' ', start);
    if (end == std::string::npos) end = text.size();
    const std::string word = text.substr(start, end - start);
    if (!line.empty() && line.size() + 1 + word.size() > width) {
      lines.push_back(line);
      line.clear();
    }
    line += line.empty() ? word : " " + word;
    start = end + 1;
  }
  if (!line.empty()) lines.push_back(line);
  return lines;
}

std::string Num(double v) { return absl::StrFormat("%.1f", v); }

// One axis: data value -> pixel.
struct Scale {
  bool log = false;
  bool categorical = false;
  double lo = 0, hi = 1;  // in data units (categorical: -0.5 .. n-0.5)
  double px_lo = 0, px_hi = 1;
  std::vector<Tick> ticks;

  double operator()(double v) const {
    const double a = log ? std::log10(lo) : lo;
    const double b = log ? std::log10(hi) : hi;
    const double t = ((log ? std::log10(v) : v) - a) / (b - a);
    return px_lo + t * (px_hi - px_lo);
  }
};

bool Usable(double v, bool log) { return std::isfinite(v) && (!log || v > 0); }

Scale MakeScale(std::vector<double> values, bool log, const std::vector<std::string>& categories) {
  Scale s;
  if (!categories.empty()) {
    s.categorical = true;
    s.lo = -0.5;
    s.hi = static_cast<double>(categories.size()) - 0.5;
    for (size_t i = 0; i < categories.size(); ++i) {
      s.ticks.push_back({static_cast<double>(i), categories[i]});
    }
    return s;
  }
  s.log = log;
  if (values.empty()) values = {log ? 1.0 : 0.0, log ? 10.0 : 1.0};
  double lo = *std::min_element(values.begin(), values.end());
  double hi = *std::max_element(values.begin(), values.end());
  if (log) {
    if (hi <= lo) {
      lo /= 2;
      hi *= 2;
    }
    s.ticks = LogTicks(lo, hi);
    s.lo = std::pow(10.0, std::floor(std::log10(lo) + 1e-9));
    s.hi = std::pow(10.0, std::ceil(std::log10(hi) - 1e-9));
    // Tighten to the outer 2x/5x ticks when they exist, so the data fills the plot.
    double tlo = s.lo, thi = s.hi;
    for (const Tick& t : s.ticks) {
      if (t.value <= lo * (1 + 1e-9)) tlo = std::max(tlo, t.value);
      if (t.value >= hi * (1 - 1e-9)) thi = std::min(thi, t.value);
    }
    s.lo = tlo;
    s.hi = thi;
    std::vector<Tick> kept;
    for (const Tick& t : s.ticks) {
      if (t.value >= s.lo * (1 - 1e-9) && t.value <= s.hi * (1 + 1e-9)) kept.push_back(t);
    }
    s.ticks = kept;
    return s;
  }
  if (lo >= 0) lo = 0;  // magnitudes read best from a zero baseline
  if (hi <= lo) hi = lo + (lo == 0 ? 1 : std::fabs(lo) * 0.2);
  s.ticks = LinearTicks(lo, hi, 5);
  s.lo = s.ticks.front().value;
  s.hi = s.ticks.back().value;
  return s;
}

std::string Marker(double x, double y, const char* color, bool emphasize) {
  return absl::StrFormat(
      "<circle cx=\"%s\" cy=\"%s\" r=\"%s\" fill=\"%s\" stroke=\"%s\" stroke-width=\"1\"/>\n",
      Num(x), Num(y), emphasize ? "5" : "3.5", emphasize ? color : "white", color);
}

// The plot area's corners, in pixels.
struct PlotBox {
  double x0, x1, y0, y1;
};

// The panel's title, grid, ticks, frame and axis labels.
std::string RenderAxes(const PlotPanel& panel, const Scale& sx, const Scale& sy, const PlotBox& box,
                       int left, int top) {
  const double px_x0 = box.x0, px_x1 = box.x1, px_y0 = box.y0, px_y1 = box.y1;
  std::string out;
  absl::StrAppend(&out, absl::StrFormat(
                            "<text x=\"%s\" y=\"%d\" font-size=\"15\" font-weight=\"bold\" "
                            "text-anchor=\"middle\">%s</text>\n",
                            Num((px_x0 + px_x1) / 2), top + 24, Escape(panel.title)));
  // Grid and ticks.
  for (const Tick& t : sy.ticks) {
    const double y = sy(t.value);
    absl::StrAppend(&out, absl::StrFormat("<line x1=\"%s\" y1=\"%s\" x2=\"%s\" y2=\"%s\" "
                                          "stroke=\"#e4e4e4\"/>\n",
                                          Num(px_x0), Num(y), Num(px_x1), Num(y)));
    absl::StrAppend(&out, absl::StrFormat("<text x=\"%s\" y=\"%s\" font-size=\"11\" "
                                          "text-anchor=\"end\">%s</text>\n",
                                          Num(px_x0 - 6), Num(y + 4), Escape(t.label)));
  }
  for (const Tick& t : sx.ticks) {
    const double x = sx(t.value);
    absl::StrAppend(&out, absl::StrFormat("<line x1=\"%s\" y1=\"%s\" x2=\"%s\" y2=\"%s\" "
                                          "stroke=\"#e4e4e4\"/>\n",
                                          Num(x), Num(px_y0), Num(x), Num(px_y1)));
    absl::StrAppend(&out, absl::StrFormat("<text x=\"%s\" y=\"%s\" font-size=\"11\" "
                                          "text-anchor=\"middle\">%s</text>\n",
                                          Num(x), Num(px_y1 + 16), Escape(t.label)));
  }
  absl::StrAppend(&out, absl::StrFormat("<rect x=\"%s\" y=\"%s\" width=\"%s\" height=\"%s\" "
                                        "fill=\"none\" stroke=\"#444\"/>\n",
                                        Num(px_x0), Num(px_y0), Num(px_x1 - px_x0),
                                        Num(px_y1 - px_y0)));
  const std::string x_label =
      absl::StrCat(panel.x_label, panel.log_x ? " (log scale)" : "");
  const std::string y_label =
      absl::StrCat(panel.y_label, panel.log_y ? " (log scale)" : "");
  absl::StrAppend(&out, absl::StrFormat("<text x=\"%s\" y=\"%s\" font-size=\"13\" "
                                        "text-anchor=\"middle\">%s</text>\n",
                                        Num((px_x0 + px_x1) / 2), Num(px_y1 + 38),
                                        Escape(x_label)));
  const double ymid = (px_y0 + px_y1) / 2;
  absl::StrAppend(&out, absl::StrFormat("<text x=\"%d\" y=\"%s\" font-size=\"13\" "
                                        "text-anchor=\"middle\" transform=\"rotate(-90 %d %s)\">"
                                        "%s</text>\n",
                                        left + 20, Num(ymid), left + 20, Num(ymid),
                                        Escape(y_label)));
  if (!panel.note.empty()) {
    absl::StrAppend(&out, absl::StrFormat("<text x=\"%s\" y=\"%s\" font-size=\"11\" "
                                          "fill=\"#555\" text-anchor=\"middle\">%s</text>\n",
                                          Num((px_x0 + px_x1) / 2), Num(px_y1 + 58),
                                          Escape(panel.note)));
  }

  return out;
}

// Each series' line, range whiskers, markers and labels.
std::string RenderSeries(const PlotPanel& panel, const Scale& sx, const Scale& sy) {
  std::string out;
  // Series: plain ones first, emphasized ones on top.
  for (int pass = 0; pass < 2; ++pass) {
    for (size_t i = 0; i < panel.series.size(); ++i) {
      const PlotSeries& s = panel.series[i];
      if (s.emphasize != (pass == 1)) continue;
      const char* color = kPalette[(s.color >= 0 ? s.color : static_cast<int>(i)) % kPaletteSize];
      std::vector<std::pair<double, double>> px;
      std::vector<const PlotPoint*> kept;
      for (const PlotPoint& p : s.points) {
        if (!Usable(p.x, panel.log_x) || !Usable(p.y, panel.log_y)) continue;
        px.emplace_back(sx(p.x), sy(p.y));
        kept.push_back(&p);
      }
      if (s.line && px.size() > 1) {
        std::string pts;
        for (const auto& [x, y] : px) absl::StrAppend(&pts, Num(x), ",", Num(y), " ");
        absl::StrAppend(&out, absl::StrFormat("<polyline points=\"%s\" fill=\"none\" "
                                              "stroke=\"%s\" stroke-width=\"%s\"/>\n",
                                              pts, color, s.emphasize ? "2.5" : "1.6"));
      }
      for (size_t k = 0; k < px.size(); ++k) {
        const PlotPoint& p = *kept[k];
        if (!p.has_range || !Usable(p.y_low, panel.log_y) || !Usable(p.y_high, panel.log_y)) {
          continue;
        }
        const double x = px[k].first, lo = sy(p.y_low), hi = sy(p.y_high);
        absl::StrAppend(&out, absl::StrFormat("<path d=\"M%s %sV%sM%s %sH%sM%s %sH%s\" "
                                              "stroke=\"%s\" stroke-width=\"1.2\"/>\n",
                                              Num(x), Num(lo), Num(hi), Num(x - 4), Num(lo),
                                              Num(x + 4), Num(x - 4), Num(hi), Num(x + 4), color));
      }
      for (size_t k = 0; k < px.size(); ++k) {
        if (s.markers) absl::StrAppend(&out, Marker(px[k].first, px[k].second, color, s.emphasize));
        if (s.show_labels && !kept[k]->label.empty()) {
          absl::StrAppend(&out, absl::StrFormat("<text x=\"%s\" y=\"%s\" font-size=\"10\" "
                                                "fill=\"#222\">%s</text>\n",
                                                Num(px[k].first + 6), Num(px[k].second - 6),
                                                Escape(kept[k]->label)));
        }
      }
    }
  }

  return out;
}

// The legend, right of the plot area.
std::string RenderLegend(const PlotPanel& panel, const PlotBox& box) {
  const double px_x1 = box.x1, px_y0 = box.y0;
  std::string out;
  double ly = px_y0 + 4;
  const double lx = px_x1 + 16;
  if (!panel.legend_title.empty()) {
    absl::StrAppend(&out, absl::StrFormat("<text x=\"%s\" y=\"%s\" font-size=\"12\" "
                                          "font-weight=\"bold\">%s</text>\n",
                                          Num(lx), Num(ly + 8), Escape(panel.legend_title)));
    ly += 20;
  }
  for (size_t i = 0; i < panel.series.size(); ++i) {
    const PlotSeries& s = panel.series[i];
    if (s.name.empty()) continue;
    const char* color = kPalette[(s.color >= 0 ? s.color : static_cast<int>(i)) % kPaletteSize];
    if (s.line) {
      absl::StrAppend(&out, absl::StrFormat("<line x1=\"%s\" y1=\"%s\" x2=\"%s\" y2=\"%s\" "
                                            "stroke=\"%s\" stroke-width=\"%s\"/>\n",
                                            Num(lx), Num(ly + 4), Num(lx + 22), Num(ly + 4),
                                            color, s.emphasize ? "2.5" : "1.6"));
    }
    if (s.markers) absl::StrAppend(&out, Marker(lx + 11, ly + 4, color, s.emphasize));
    for (const std::string& line : WrapWords(s.name, kLegendChars)) {
      absl::StrAppend(&out, absl::StrFormat("<text x=\"%s\" y=\"%s\" font-size=\"11\">%s</text>\n",
                                            Num(lx + 28), Num(ly + 8), Escape(line)));
      ly += 14;
    }
    ly += 4;
  }
  return out;
}

std::string RenderPanel(const PlotPanel& panel, int left, int top, int width, int height) {
  const double px_x0 = left + kLeftPx;
  const double px_x1 = left + width - kLegendPx - kRightGapPx;
  const double px_y0 = top + kTopPx;
  const double px_y1 = top + height - kBottomPx;

  std::vector<double> xs, ys;
  for (const PlotSeries& s : panel.series) {
    for (const PlotPoint& p : s.points) {
      if (!Usable(p.x, panel.log_x) || !Usable(p.y, panel.log_y)) continue;
      xs.push_back(p.x);
      ys.push_back(p.y);
      if (p.has_range && Usable(p.y_low, panel.log_y) && Usable(p.y_high, panel.log_y)) {
        ys.push_back(p.y_low);
        ys.push_back(p.y_high);
      }
    }
  }
  Scale sx = MakeScale(xs, panel.log_x, panel.x_categories);
  sx.px_lo = px_x0;
  sx.px_hi = px_x1;
  Scale sy = MakeScale(ys, panel.log_y, {});
  sy.px_lo = px_y1;  // y grows upwards
  sy.px_hi = px_y0;

  const PlotBox box{px_x0, px_x1, px_y0, px_y1};
  return absl::StrCat(RenderAxes(panel, sx, sy, box, left, top), RenderSeries(panel, sx, sy),
                      RenderLegend(panel, box));
}

}  // namespace

std::string TickLabel(double v) {
  const double a = std::fabs(v);
  auto trim = [](std::string s) {
    if (s.find('.') != std::string::npos) {
      while (!s.empty() && s.back() == '0') s.pop_back();
      if (!s.empty() && s.back() == '.') s.pop_back();
    }
    return s;
  };
  if (a >= 1e6) return trim(absl::StrFormat("%.2f", v / 1e6)) + "M";
  if (a >= 1e3) return trim(absl::StrFormat("%.2f", v / 1e3)) + "k";
  if (a >= 1 || a == 0) return trim(absl::StrFormat("%.2f", v));
  return trim(absl::StrFormat("%.4f", v));
}

std::vector<Tick> LinearTicks(double lo, double hi, int target_count) {
  if (!(hi > lo)) hi = lo + 1;
  const double raw = (hi - lo) / std::max(1, target_count);
  const double mag = std::pow(10.0, std::floor(std::log10(raw)));
  double step = mag;
  for (double m : {1.0, 2.0, 5.0, 10.0}) {
    if (m * mag >= raw * (1 - 1e-9)) {
      step = m * mag;
      break;
    }
  }
  const double first = std::floor(lo / step + 1e-9) * step;
  std::vector<Tick> ticks;
  for (int i = 0;; ++i) {
    double v = first + i * step;
    if (std::fabs(v) < step * 1e-9) v = 0;
    ticks.push_back({v, TickLabel(v)});
    if (v >= hi * (1 - 1e-12) - step * 1e-9) break;
  }
  return ticks;
}

std::vector<Tick> LogTicks(double lo, double hi) {
  std::vector<Tick> ticks;
  if (!(lo > 0) || !(hi >= lo)) return ticks;
  const int d0 = static_cast<int>(std::floor(std::log10(lo) + 1e-9));
  const int d1 = static_cast<int>(std::ceil(std::log10(hi) - 1e-9));
  const bool fine = d1 - d0 < 3;
  for (int d = d0; d <= d1; ++d) {
    const double base = std::pow(10.0, d);
    ticks.push_back({base, TickLabel(base)});
    if (fine && d < d1) {
      ticks.push_back({2 * base, TickLabel(2 * base)});
      ticks.push_back({5 * base, TickLabel(5 * base)});
    }
  }
  return ticks;
}

std::string RenderSvg(const Figure& figure) {
  const int n = std::max<int>(1, static_cast<int>(figure.panels.size()));
  const int width = n * figure.panel_width;
  const int height = kHeaderPx + figure.panel_height;
  std::string out = absl::StrFormat(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
      "viewBox=\"0 0 %d %d\" font-family=\"Helvetica, Arial, sans-serif\">\n"
      "<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n",
      width, height, width, height);
  absl::StrAppend(&out, absl::StrFormat("<text x=\"%d\" y=\"26\" font-size=\"18\" "
                                        "font-weight=\"bold\" text-anchor=\"middle\">%s</text>\n",
                                        width / 2, Escape(figure.title)));
  if (!figure.subtitle.empty()) {
    absl::StrAppend(&out, absl::StrFormat("<text x=\"%d\" y=\"48\" font-size=\"12\" fill=\"#555\" "
                                          "text-anchor=\"middle\">%s</text>\n",
                                          width / 2, Escape(figure.subtitle)));
  }
  for (size_t i = 0; i < figure.panels.size(); ++i) {
    absl::StrAppend(&out, RenderPanel(figure.panels[i], static_cast<int>(i) * figure.panel_width,
                                      kHeaderPx, figure.panel_width, figure.panel_height));
  }
  absl::StrAppend(&out, "</svg>\n");
  return out;
}

}  // namespace servesim::planning
