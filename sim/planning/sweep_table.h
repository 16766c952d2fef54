// A sweep's results as files: sweep.csv (RFC 4180) and sweep.json, one row per
// point, and the CSV read back so shards written by separate processes merge.
#ifndef SERVESIM_SIM_PLANNING_SWEEP_TABLE_H_
#define SERVESIM_SIM_PLANNING_SWEEP_TABLE_H_

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
};

std::string FormatSweepCsv(const SweepTable& table);
std::string FormatSweepJson(const SweepTable& table);
// Reads FormatSweepCsv's output; `origin` names the file in errors.
absl::StatusOr<SweepTable> ParseSweepCsv(const std::string& text, const std::string& origin);

// Joins shard tables: same axes required; rows sorted by index; an index
// present twice is an error.
absl::StatusOr<SweepTable> MergeTables(const std::vector<SweepTable>& shards);

// "sweep.shard-2-of-8.csv".
std::string ShardFileName(const Shard& shard);

}  // namespace servesim::planning

#endif  // SERVESIM_SIM_PLANNING_SWEEP_TABLE_H_
