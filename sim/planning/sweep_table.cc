#include "sim/planning/sweep_table.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstring>
#include <map>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "base/status_macros.h"
#include "sim/metrics/report.h"
#include "sim/runner/fit_coverage.h"
#include "sim/workload/csv.h"

namespace servesim::planning {
namespace {

// Every figure column, bound to its PointFigures field (one of the two
// pointers is set).
struct FigureColumn {
  const char* name;
  int64_t PointFigures::*integer;
  double PointFigures::*real;
};

const std::vector<FigureColumn>& FigureColumns() {
  using F = PointFigures;
  static const auto* const kColumns = new std::vector<FigureColumn>{
      {"completed", &F::completed, nullptr},
      {"failed", &F::failed, nullptr},
      {"duration_s", nullptr, &F::duration_s},
      {"total_input_tokens", &F::total_input_tokens, nullptr},
      {"total_output_tokens", &F::total_output_tokens, nullptr},
      {"request_throughput", nullptr, &F::request_throughput},
      {"output_throughput", nullptr, &F::output_throughput},
      {"total_token_throughput", nullptr, &F::total_token_throughput},
      {"mean_ttft_ms", nullptr, &F::mean_ttft_ms},
      {"median_ttft_ms", nullptr, &F::median_ttft_ms},
      {"p99_ttft_ms", nullptr, &F::p99_ttft_ms},
      {"mean_tpot_ms", nullptr, &F::mean_tpot_ms},
      {"median_tpot_ms", nullptr, &F::median_tpot_ms},
      {"p99_tpot_ms", nullptr, &F::p99_tpot_ms},
      {"mean_itl_ms", nullptr, &F::mean_itl_ms},
      {"median_itl_ms", nullptr, &F::median_itl_ms},
      {"p99_itl_ms", nullptr, &F::p99_itl_ms},
  };
  return *kColumns;
}

// Shortest text that reads back as the same double ("12.5", "3").
std::string ShortestNumber(double v) {
  if (!std::isfinite(v)) return v > 0 ? "inf" : (v < 0 ? "-inf" : "nan");
  char buf[64];
  auto [end, ec] = std::to_chars(buf, buf + sizeof(buf), v);
  return std::string(buf, end);
}

std::string FigureText(const PointFigures& f, const FigureColumn& c) {
  return c.integer ? absl::StrCat(f.*(c.integer)) : ShortestNumber(f.*(c.real));
}

std::string JsonReal(double v) { return std::isfinite(v) ? metrics::JsonNumber(v) : "null"; }

std::string JsonFigure(const PointFigures& f, const FigureColumn& c) {
  return c.integer ? absl::StrCat(f.*(c.integer)) : JsonReal(f.*(c.real));
}

// After the figures: the kinds of the point's extrapolation lines
// (runner::Extrapolation::kind), so that a merged table counts them too.
constexpr char kExtrapolationsColumn[] = "extrapolations";
constexpr char kKindSeparator[] = "; ";

std::string KindsText(const PointFigures& f) {
  std::vector<std::string> kinds;
  for (const runner::Extrapolation& e : f.extrapolations) kinds.push_back(e.kind);
  return absl::StrJoin(kinds, kKindSeparator);
}

// With a spread, after the extrapolations: the number of fits, then each
// figure's range (SweepTable::spread_figures).
constexpr char kSpreadFitsColumn[] = "spread_fits";
constexpr char kLowSuffix[] = "_low";
constexpr char kHighSuffix[] = "_high";

bool IsFigureColumn(const std::string& name) {
  for (const FigureColumn& c : FigureColumns()) {
    if (name == c.name) return true;
  }
  return false;
}

// A shard's last two columns (SweepTable::sweep_id).
constexpr char kSweepPointsColumn[] = "sweep_points";
constexpr char kSweepIdColumn[] = "sweep_id";

}  // namespace

const std::vector<std::string>& FixedColumns() {
  static const auto* const kColumns = [] {
    auto* c = new std::vector<std::string>{"serve_command", "bench_command", "status", "reason"};
    for (const FigureColumn& f : FigureColumns()) c->push_back(f.name);
    c->push_back(kExtrapolationsColumn);
    return c;
  }();
  return *kColumns;
}

std::string CsvField(std::string_view value) {
  const bool needs_quotes =
      value.find_first_of(",\"\r\n") != std::string_view::npos ||
      (!value.empty() && (value.front() == ' ' || value.back() == ' '));
  if (!needs_quotes) return std::string(value);
  std::string out = "\"";
  for (char c : value) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

std::string FormatSweepCsv(const SweepTable& table) {
  std::vector<std::string> header = {"index"};
  for (const std::string& a : table.axis_names) header.push_back(CsvField(a));
  for (const std::string& c : FixedColumns()) header.push_back(c);
  if (!table.spread_figures.empty()) header.push_back(kSpreadFitsColumn);
  for (const std::string& key : table.spread_figures) {
    header.push_back(absl::StrCat(key, kLowSuffix));
    header.push_back(absl::StrCat(key, kHighSuffix));
  }
  const bool shard = !table.sweep_id.empty();
  if (shard) header.insert(header.end(), {kSweepPointsColumn, kSweepIdColumn});
  std::string out = absl::StrCat(absl::StrJoin(header, ","), "\n");
  for (const PointResult& r : table.rows) {
    std::vector<std::string> f = {absl::StrCat(r.point.index)};
    for (const std::string& v : r.point.values) f.push_back(CsvField(v));
    f.push_back(CsvField(r.point.serve_command));
    f.push_back(CsvField(r.point.bench_command));
    f.emplace_back(PointStatusName(r.status));
    f.push_back(CsvField(r.reason));
    for (const FigureColumn& c : FigureColumns()) {
      f.push_back(r.status == PointStatus::kOk ? FigureText(r.figures, c) : "");
    }
    f.push_back(r.status == PointStatus::kOk ? CsvField(KindsText(r.figures)) : "");
    if (!table.spread_figures.empty()) {
      const bool has = r.status == PointStatus::kOk && r.figures.spread.fits > 0;
      f.push_back(has ? absl::StrCat(r.figures.spread.fits) : "");
      for (const std::string& key : table.spread_figures) {
        const FigureSpread* range = has ? r.figures.spread.Find(key) : nullptr;
        f.push_back(range ? ShortestNumber(range->low) : "");
        f.push_back(range ? ShortestNumber(range->high) : "");
      }
    }
    if (shard) {
      f.push_back(absl::StrCat(table.sweep_points));
      f.push_back(CsvField(table.sweep_id));
    }
    absl::StrAppend(&out, absl::StrJoin(f, ","), "\n");
  }
  return out;
}

std::string FormatSweepJson(const SweepTable& table) {
  std::string out = "{\n  \"axes\": [";
  for (size_t i = 0; i < table.axis_names.size(); ++i) {
    absl::StrAppend(&out, i ? ", " : "", metrics::JsonString(table.axis_names[i]));
  }
  absl::StrAppend(&out, "],\n  \"points\": [");
  for (size_t i = 0; i < table.rows.size(); ++i) {
    const PointResult& r = table.rows[i];
    absl::StrAppend(&out, i ? ",\n" : "\n", "    {\"index\": ", r.point.index, ", \"axes\": {");
    for (size_t k = 0; k < table.axis_names.size() && k < r.point.values.size(); ++k) {
      absl::StrAppend(&out, k ? ", " : "", metrics::JsonString(table.axis_names[k]), ": ",
                      metrics::JsonString(r.point.values[k]));
    }
    absl::StrAppend(&out, "},\n     \"serve_command\": ", metrics::JsonString(r.point.serve_command),
                    ",\n     \"bench_command\": ", metrics::JsonString(r.point.bench_command),
                    ",\n     \"status\": ", metrics::JsonString(std::string(PointStatusName(r.status))),
                    ", \"reason\": ", metrics::JsonString(r.reason), ",\n     \"metrics\": ");
    if (r.status != PointStatus::kOk) {
      absl::StrAppend(&out, "null}");
      continue;
    }
    absl::StrAppend(&out, "{");
    bool first = true;
    for (const FigureColumn& c : FigureColumns()) {
      absl::StrAppend(&out, first ? "" : ", ", "\"", c.name, "\": ", JsonFigure(r.figures, c));
      first = false;
    }
    absl::StrAppend(&out, "},\n     \"", kExtrapolationsColumn, "\": [");
    for (size_t k = 0; k < r.figures.extrapolations.size(); ++k) {
      absl::StrAppend(&out, k ? ", " : "", metrics::JsonString(r.figures.extrapolations[k].kind));
    }
    absl::StrAppend(&out, "]");
    if (!table.spread_figures.empty() && r.figures.spread.fits > 0) {
      absl::StrAppend(&out, ",\n     \"spread\": {\"fits\": ", r.figures.spread.fits);
      for (const std::string& key : table.spread_figures) {
        const FigureSpread* range = r.figures.spread.Find(key);
        if (range == nullptr) continue;
        absl::StrAppend(&out, ", ", metrics::JsonString(key), ": {\"low\": ", JsonReal(range->low),
                        ", \"high\": ", JsonReal(range->high), "}");
      }
      absl::StrAppend(&out, "}");
    }
    absl::StrAppend(&out, "}");
  }
  absl::StrAppend(&out, table.rows.empty() ? "]\n}\n" : "\n  ]\n}\n");
  return out;
}

namespace {

// The spread's columns, header[spread_at, end): kSpreadFitsColumn, then a
// KEY_low,KEY_high pair for each figure column, each once.
absl::Status ReadSpreadColumns(const std::vector<std::string>& header, size_t spread_at, size_t end,
                               const std::string& origin, SweepTable& table) {
  if ((end - spread_at) % 2 != 1 || end - spread_at < 3) {
    return absl::InvalidArgumentError(absl::StrCat(origin, ": ", kSpreadFitsColumn,
                                                   " must be followed by KEY", kLowSuffix, ",KEY",
                                                   kHighSuffix, " pairs"));
  }
  for (size_t c = spread_at + 1; c < end; c += 2) {
    const std::string& low = header[c];
    const bool named_low = absl::EndsWith(low, kLowSuffix);
    const std::string key =
        named_low ? low.substr(0, low.size() - std::strlen(kLowSuffix)) : std::string();
    if (!named_low || !IsFigureColumn(key) || header[c + 1] != absl::StrCat(key, kHighSuffix) ||
        std::find(table.spread_figures.begin(), table.spread_figures.end(), key) !=
            table.spread_figures.end()) {
      return absl::InvalidArgumentError(
          absl::StrCat(origin, ": spread columns must be KEY", kLowSuffix, ",KEY", kHighSuffix,
                       " of a figure column, each once, got ", low, ",", header[c + 1]));
    }
    table.spread_figures.push_back(key);
  }
  return absl::OkStatus();
}

absl::StatusOr<PointStatus> ParsePointStatus(const std::string& status) {
  if (status == "ok") return PointStatus::kOk;
  if (status == "refused") return PointStatus::kRefused;
  if (status == "error") return PointStatus::kError;
  return absl::InvalidArgumentError(
      absl::StrCat("status: expected ok, refused or error, got \"", status, "\""));
}

// The fields of one point from `k` on (the header's width checked): its
// index, axis values, commands, status, figures, extrapolation kinds and,
// where the table has them, its spread. Leaves `k` past them; an error says
// why, without the row.
absl::Status ParsePointFields(const std::vector<std::string>& f, size_t num_axes,
                              const std::vector<std::string>& spread_figures, size_t& k,
                              PointResult& r) {
  if (!absl::SimpleAtoi(f[0], &r.point.index) || r.point.index < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("index: expected an integer >= 0, got \"", f[0], "\""));
  }
  k = 1;
  for (size_t a = 0; a < num_axes; ++a) r.point.values.push_back(f[k++]);
  r.point.serve_command = f[k++];
  r.point.bench_command = f[k++];
  ASSIGN_OR_RETURN(r.status, ParsePointStatus(f[k++]));
  r.reason = f[k++];
  for (const FigureColumn& c : FigureColumns()) {
    const std::string& v = f[k++];
    if (r.status != PointStatus::kOk) continue;
    // A figure vllm bench serve reports is a count, a time or a rate:
    // finite and >= 0 (it averages an empty list as 0), whatever edited it.
    const bool parsed =
        c.integer ? absl::SimpleAtoi(v, &(r.figures.*(c.integer))) && r.figures.*(c.integer) >= 0
                  : absl::SimpleAtod(v, &(r.figures.*(c.real))) &&
                        std::isfinite(r.figures.*(c.real)) && r.figures.*(c.real) >= 0;
    if (!parsed) {
      return absl::InvalidArgumentError(
          absl::StrCat(c.name, ": expected a finite number >= 0, got \"", v, "\""));
    }
  }
  const std::string& kinds = f[k++];
  if (r.status == PointStatus::kOk && !kinds.empty()) {
    const std::vector<std::string>& known = runner::ExtrapolationKinds();
    for (absl::string_view kind : absl::StrSplit(kinds, kKindSeparator)) {
      if (std::find(known.begin(), known.end(), kind) == known.end()) {
        return absl::InvalidArgumentError(absl::StrCat(kExtrapolationsColumn, ": unknown kind \"",
                                                       kind, "\" (expected ",
                                                       absl::StrJoin(known, ", "), ")"));
      }
      // The line is `servesim run`'s to print; the table keeps the kind.
      r.figures.extrapolations.push_back({std::string(kind), ""});
    }
  }
  if (spread_figures.empty()) return absl::OkStatus();
  const std::string& fits = f[k++];
  const bool has = r.status == PointStatus::kOk && !fits.empty();
  if (has && (!absl::SimpleAtoi(fits, &r.figures.spread.fits) || r.figures.spread.fits < 1)) {
    return absl::InvalidArgumentError(
        absl::StrCat(kSpreadFitsColumn, ": expected an integer >= 1, got \"", fits, "\""));
  }
  for (const std::string& key : spread_figures) {
    FigureSpread range{key};
    const std::string& low = f[k++];
    const std::string& high = f[k++];
    if (!has) continue;
    if (!absl::SimpleAtod(low, &range.low) || !absl::SimpleAtod(high, &range.high) ||
        !std::isfinite(range.low) || !std::isfinite(range.high) || range.low < 0 ||
        !(range.low <= range.high)) {
      return absl::InvalidArgumentError(absl::StrCat(key, kLowSuffix, ", ", key, kHighSuffix,
                                                     ": expected numbers, low <= high, got \"", low,
                                                     "\", \"", high, "\""));
    }
    r.figures.spread.figures.push_back(std::move(range));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<SweepTable> ParseSweepCsv(const std::string& text, const std::string& origin) {
  absl::StatusOr<std::vector<std::vector<std::string>>> records = workload::ParseCsv(text);
  if (!records.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(origin, ": ", records.status().message()));
  }
  if (records->empty()) return absl::InvalidArgumentError(absl::StrCat(origin, ": empty file"));
  const std::vector<std::string>& header = records->front();
  const std::vector<std::string>& fixed = FixedColumns();
  const bool shard = header.size() >= 2 && header[header.size() - 2] == kSweepPointsColumn &&
                     header.back() == kSweepIdColumn;
  const size_t end = header.size() - (shard ? 2 : 0);  // without the shard's columns
  // A spread's columns sit between the fixed ones and the shard's.
  const size_t spread_at = static_cast<size_t>(
      std::find(header.begin(), header.begin() + static_cast<std::ptrdiff_t>(end),
                kSpreadFitsColumn) -
      header.begin());
  const size_t width = std::min(spread_at, end);  // index, axes and fixed columns
  SweepTable table;
  if (spread_at < end) RETURN_IF_ERROR(ReadSpreadColumns(header, spread_at, end, origin, table));
  if (width < 1 + fixed.size() || header[0] != "index" ||
      !std::equal(fixed.begin(), fixed.end(),
                  header.begin() + static_cast<std::ptrdiff_t>(width - fixed.size()))) {
    return absl::InvalidArgumentError(
        absl::StrCat(origin, ": not a servesim sweep table (header must be index, axes..., ",
                     absl::StrJoin(fixed, ","), "[,", kSpreadFitsColumn, ",KEY", kLowSuffix, ",KEY",
                     kHighSuffix, "...][,", kSweepPointsColumn, ",", kSweepIdColumn, "])"));
  }
  table.origin = origin;
  const size_t num_axes = width - 1 - fixed.size();
  table.axis_names.assign(header.begin() + 1,
                          header.begin() + 1 + static_cast<std::ptrdiff_t>(num_axes));
  for (size_t line = 1; line < records->size(); ++line) {
    const std::vector<std::string>& f = (*records)[line];
    auto bad = [&](const std::string& why) {
      return absl::InvalidArgumentError(absl::StrCat(origin, ": row ", line, ": ", why));
    };
    if (f.size() != header.size()) {
      return bad(absl::StrCat("expected ", header.size(), " fields, got ", f.size()));
    }
    PointResult r;
    size_t k = 0;
    if (absl::Status s = ParsePointFields(f, num_axes, table.spread_figures, k, r); !s.ok()) {
      return bad(std::string(s.message()));
    }
    if (shard) {
      int64_t points = 0;
      if (!absl::SimpleAtoi(f[k], &points) || points < 1) {
        return bad(absl::StrCat(kSweepPointsColumn, ": expected an integer >= 1, got \"", f[k],
                                "\""));
      }
      if (f[k + 1].empty()) return bad(absl::StrCat(kSweepIdColumn, ": empty"));
      if (table.sweep_id.empty()) {
        table.sweep_points = points;
        table.sweep_id = f[k + 1];
      } else if (points != table.sweep_points || f[k + 1] != table.sweep_id) {
        return bad(absl::StrCat("sweep ", f[k + 1], " of ", points, " points, row 1's is ",
                                table.sweep_id, " of ", table.sweep_points));
      }
    }
    table.rows.push_back(std::move(r));
  }
  return table;
}

absl::StatusOr<SweepTable> MergeTables(const std::vector<SweepTable>& shards) {
  SweepTable merged;
  if (shards.empty()) return absl::InvalidArgumentError("sweep merge: no shard tables");
  merged.axis_names = shards.front().axis_names;
  merged.spread_figures = shards.front().spread_figures;
  // The sweep the shards belong to: the first one's that has rows (a shard
  // of more shards than points may have none, and nothing to check).
  const SweepTable* sweep = nullptr;
  for (const SweepTable& s : shards) {
    if (s.axis_names != merged.axis_names) {
      return absl::InvalidArgumentError(absl::StrCat(
          "sweep merge: shards disagree on the axes (", absl::StrJoin(merged.axis_names, ","),
          " vs ", absl::StrJoin(s.axis_names, ","), ")"));
    }
    if (s.spread_figures != merged.spread_figures) {
      return absl::InvalidArgumentError(
          absl::StrCat("sweep merge: shards disagree on the spread columns (",
                       absl::StrJoin(merged.spread_figures, ","), " vs ",
                       absl::StrJoin(s.spread_figures, ","), ")"));
    }
    if (s.rows.empty()) continue;
    if (s.sweep_id.empty()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "sweep merge: ", s.origin, " has no sweep_id column: not written by sweep --shard "
          "(or by an older servesim; run its shard again)"));
    }
    if (sweep == nullptr) sweep = &s;
    if (s.sweep_id != sweep->sweep_id || s.sweep_points != sweep->sweep_points) {
      return absl::InvalidArgumentError(absl::StrCat(
          "sweep merge: ", s.origin, " is a shard of another sweep (", s.sweep_id, ", ",
          s.sweep_points, " points) than ", sweep->origin, " (", sweep->sweep_id, ", ",
          sweep->sweep_points, " points)"));
    }
    for (const PointResult& r : s.rows) {
      if (r.point.index >= s.sweep_points) {
        return absl::InvalidArgumentError(absl::StrCat("sweep merge: ", s.origin, ": point ",
                                                       r.point.index, " is out of range: the sweep has ",
                                                       s.sweep_points, " points"));
      }
    }
    merged.rows.insert(merged.rows.end(), s.rows.begin(), s.rows.end());
  }
  if (sweep == nullptr) return absl::InvalidArgumentError("sweep merge: the shards hold no points");
  std::stable_sort(merged.rows.begin(), merged.rows.end(),
                   [](const PointResult& a, const PointResult& b) {
                     return a.point.index < b.point.index;
                   });
  for (size_t i = 1; i < merged.rows.size(); ++i) {
    if (merged.rows[i].point.index == merged.rows[i - 1].point.index) {
      return absl::InvalidArgumentError(
          absl::StrCat("sweep merge: point ", merged.rows[i].point.index, " appears twice"));
    }
  }
  // Every index is in range and none repeats: fewer rows than points means
  // some are missing.
  if (static_cast<int64_t>(merged.rows.size()) != sweep->sweep_points) {
    int64_t missing = 0;
    while (missing < static_cast<int64_t>(merged.rows.size()) &&
           merged.rows[static_cast<size_t>(missing)].point.index == missing) {
      ++missing;
    }
    return absl::InvalidArgumentError(absl::StrCat(
        "sweep merge: the shards hold ", merged.rows.size(), " of the sweep's ",
        sweep->sweep_points, " points; point ", missing, " is in none"));
  }
  return merged;
}

std::string ShardFileName(const Shard& shard) {
  return absl::StrCat("sweep.shard-", shard.index, "-of-", shard.count, ".csv");
}

}  // namespace servesim::planning
