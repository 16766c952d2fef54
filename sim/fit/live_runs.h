// Live benchmark results to validate and fit against: the CSV layout of
// shared/validation (one row per configuration, vllm bench's --save-result
// keys as columns) and its expected-failures list.
#ifndef SERVESIM_SIM_FIT_LIVE_RUNS_H_
#define SERVESIM_SIM_FIT_LIVE_RUNS_H_

#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "scenarios/serve_command.h"

namespace servesim::fit {

struct LiveRun {
  std::string name;  // the `case` column
  std::string serve_command;
  std::string bench_command;
  scenarios::EnvVars env;
  std::map<std::string, double> measured;  // --save-result key -> value
  // Set for an expected failure: what was observed instead of a result.
  bool expected_failure = false;
  std::string observed_failure;
};

// RFC 4180 CSV: quoted fields, doubled quotes, commas and newlines in quotes.
absl::StatusOr<std::vector<std::vector<std::string>>> ParseCsv(const std::string& text);

// Reads a results CSV (columns case, env, serve_command, bench_command and
// metric keys) or an expected-failures CSV (case, env, serve_command,
// observed). `env` holds K=V pairs separated by ';' or spaces.
absl::StatusOr<std::vector<LiveRun>> ReadLiveRuns(const std::string& path);

// Every *.csv under `path` if it is a directory, else the file.
absl::StatusOr<std::vector<LiveRun>> ReadLiveRunsFrom(const std::string& path);

}  // namespace servesim::fit

#endif  // SERVESIM_SIM_FIT_LIVE_RUNS_H_
