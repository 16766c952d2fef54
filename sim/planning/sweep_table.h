// A sweep's results as files: sweep.csv (RFC 4180) and sweep.json, one row per
// point, and the CSV read back so shards written by separate processes merge.
#ifndef SERVESIM_SIM_PLANNING_SWEEP_TABLE_H_
#define SERVESIM_SIM_PLANNING_SWEEP_TABLE_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "sim/planning/sweep.h"

namespace servesim::planning {

// The columns after the axis columns, in file order: serve_command,
// bench_command, status, reason, then every PointFigures field.
const std::vector<std::string>& FixedColumns();

// One CSV field: quoted (with "" for ") when it holds a comma, quote, CR or LF
// or starts/ends with a blank; otherwise as is.
std::string CsvField(std::string_view value);

// A sweep table: the axis names and the rows. Numbers are written as the
// shortest text that reads back as the same double, so a merged table is
// byte-identical to one written by a single process.
struct SweepTable {
  std::vector<std::string> axis_names;
  std::vector<PointResult> rows;
  // With `sweep --spread`: the keys of PointFigures::spread, each a figure
  // column, in order. The CSV then has spread_fits and KEY_low, KEY_high per
  // key after the extrapolations column; empty: no spread columns.
  std::vector<std::string> spread_figures;
  // A shard's only (empty sweep_id elsewhere): the SweepId of the sweep it is
  // part of and that sweep's point count, written as the CSV's last two
  // columns, sweep_points and sweep_id, on every row.
  std::string sweep_id;
  int64_t sweep_points = 0;
  // Where ParseSweepCsv read it, for MergeTables' messages.
  std::string origin;
};

std::string FormatSweepCsv(const SweepTable& table);
std::string FormatSweepJson(const SweepTable& table);
// Reads FormatSweepCsv's output; `origin` names the file in errors.
absl::StatusOr<SweepTable> ParseSweepCsv(const std::string& text, const std::string& origin);

// Joins the shard tables of one sweep into the table a single run writes
// (without sweep_id): rows sorted by index. The shards must have the same
// axes, spread columns, sweep id and point count, and hold every index of the sweep exactly
// once; a table that is no shard (no sweep id) but holds rows is refused.
absl::StatusOr<SweepTable> MergeTables(const std::vector<SweepTable>& shards);

// "sweep.shard-2-of-8.csv".
std::string ShardFileName(const Shard& shard);

}  // namespace servesim::planning

#endif  // SERVESIM_SIM_PLANNING_SWEEP_TABLE_H_
