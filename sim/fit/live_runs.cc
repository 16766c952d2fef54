#include "sim/fit/live_runs.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "base/status_macros.h"

namespace servesim::fit {

absl::StatusOr<std::vector<std::vector<std::string>>> ParseCsv(const std::string& text) {
  std::vector<std::vector<std::string>> rows;
  std::vector<std::string> row;
  std::string field;
  bool quoted = false, any = false;
  int line = 1;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (quoted) {
      if (c == '"' && i + 1 < text.size() && text[i + 1] == '"') {
        field += '"';
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        if (c == '\n') ++line;
        field += c;
      }
      continue;
    }
    if (c == '"') {
      quoted = true;
      any = true;
    } else if (c == ',') {
      row.push_back(std::move(field));
      field.clear();
      any = true;
    } else if (c == '\n' || c == '\r') {
      if (c == '\r' && i + 1 < text.size() && text[i + 1] == '\n') ++i;
      if (any || !field.empty()) {
        row.push_back(std::move(field));
        rows.push_back(std::move(row));
      }
      row.clear();
      field.clear();
      any = false;
      ++line;
    } else {
      field += c;
      any = true;
    }
  }
  if (quoted) return absl::InvalidArgumentError(absl::StrCat("unterminated quote at line ", line));
  if (any || !field.empty()) {
    row.push_back(std::move(field));
    rows.push_back(std::move(row));
  }
  return rows;
}

absl::StatusOr<std::vector<LiveRun>> ReadLiveRuns(const std::string& path) {
  std::ifstream in(path);
  if (!in) return absl::InvalidArgumentError(absl::StrCat("--runs: cannot read ", path));
  std::stringstream text;
  text << in.rdbuf();
  absl::StatusOr<std::vector<std::vector<std::string>>> rows = ParseCsv(text.str());
  if (!rows.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("--runs: ", path, ": ", rows.status().message()));
  }
  if (rows->empty()) return absl::InvalidArgumentError(absl::StrCat("--runs: ", path, " is empty"));
  const std::vector<std::string>& header = rows->front();
  auto column = [&](const std::string& name) -> int {
    auto it = std::find(header.begin(), header.end(), name);
    return it == header.end() ? -1 : static_cast<int>(it - header.begin());
  };
  const int c_case = column("case"), c_env = column("env"), c_serve = column("serve_command"),
            c_bench = column("bench_command"), c_observed = column("observed");
  if (c_case < 0 || c_serve < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("--runs: ", path, ": needs columns `case` and `serve_command`"));
  }
  if (c_bench < 0 && c_observed < 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--runs: ", path, ": needs `bench_command` (results) or `observed` (failures)"));
  }
  std::vector<LiveRun> runs;
  for (size_t r = 1; r < rows->size(); ++r) {
    const std::vector<std::string>& row = (*rows)[r];
    if (row.size() != header.size()) {
      return absl::InvalidArgumentError(absl::StrCat("--runs: ", path, ": row ", r + 1, " has ",
                                                     row.size(), " fields, header has ",
                                                     header.size()));
    }
    LiveRun run;
    run.name = row[c_case];
    run.serve_command = row[c_serve];
    if (c_env >= 0) {
      for (absl::string_view kv : absl::StrSplit(row[c_env], absl::ByAnyChar("; "), absl::SkipEmpty())) {
        ASSIGN_OR_RETURN(auto pair, scenarios::ParseEnvAssignment(std::string(kv)));
        run.env.push_back(std::move(pair));
      }
    }
    if (c_observed >= 0) {
      run.expected_failure = true;
      run.observed_failure = row[c_observed];
    } else {
      run.bench_command = row[c_bench];
      for (size_t c = 0; c < header.size(); ++c) {
        double v = 0;
        if (static_cast<int>(c) == c_case || static_cast<int>(c) == c_env ||
            static_cast<int>(c) == c_serve || static_cast<int>(c) == c_bench) {
          continue;
        }
        if (absl::SimpleAtod(row[c], &v)) run.measured[header[c]] = v;
      }
    }
    runs.push_back(std::move(run));
  }
  return runs;
}

absl::StatusOr<std::vector<LiveRun>> ReadLiveRunsFrom(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::is_directory(path, ec)) return ReadLiveRuns(path);
  std::vector<std::string> files;
  for (const auto& e : std::filesystem::directory_iterator(path, ec)) {
    if (e.path().extension() == ".csv") files.push_back(e.path().string());
  }
  std::sort(files.begin(), files.end());
  if (files.empty()) {
    return absl::InvalidArgumentError(absl::StrCat("--runs: no .csv files in ", path));
  }
  std::vector<LiveRun> all;
  for (const std::string& f : files) {
    ASSIGN_OR_RETURN(std::vector<LiveRun> runs, ReadLiveRuns(f));
    for (auto& r : runs) all.push_back(std::move(r));
  }
  return all;
}

}  // namespace servesim::fit
