// Live benchmark results to validate and fit against: the CSV layout of
// shared/validation (one row per configuration, vllm bench's --save-result
// keys as columns) and its expected-failures list, or one run's own files as
// a confirmation run leaves them: its --save-result JSON or its printed
// report, with the commands that made it beside them.
#ifndef SERVESIM_SIM_FIT_LIVE_RUNS_H_
#define SERVESIM_SIM_FIT_LIVE_RUNS_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "scenarios/serve_command.h"

namespace servesim::fit {

struct LiveRun {
  std::string name;    // the `case` column
  std::string source;  // the file it was read from, for messages
  std::string serve_command;
  std::string bench_command;
  scenarios::EnvVars env;
  std::map<std::string, double> measured;  // --save-result key -> value
  // A --save-result JSON's per-request lengths in send order (input_lens,
  // output_lens); empty for a CSV row or a console log.
  std::vector<int64_t> input_lens;
  std::vector<int64_t> output_lens;
  // Set for an expected failure: what was observed instead of a result.
  bool expected_failure = false;
  std::string observed_failure;
};

// Reads a results CSV (columns case, env, serve_command, bench_command and
// metric keys) or an expected-failures CSV (case, env, serve_command,
// observed). `env` holds K=V pairs separated by ';' or spaces; an optional
// `engine` column (vllm, sglang, trtllm) must name the serve command's
// engine. A column holding a figure vllm bench serve prints or saves
// (metrics::IsReportedFigure) is a finite number >= 0, or empty where it was
// not measured; other columns (a date, a note) are not checked, and a
// numeric one is kept in `measured` unchecked. A file without
// runs, or
// an empty or repeated case name, is an error; a leading UTF-8 BOM is
// skipped.
absl::StatusOr<std::vector<LiveRun>> ReadLiveRuns(const std::string& path);

// The commands of one live run, as a shell script would hold them (the
// `NAME.cmd` beside a NAME.json or NAME.txt result):
//   export VLLM_USE_DEEP_GEMM=0              # env of the engine
//   vllm serve deepseek-ai/DeepSeek-V3.2 -tp 8  # the serve command (leading K=V: env)
//   vllm bench serve --dataset-name random ...  # the bench command
// A line ending in a backslash continues on the next. Exactly one serve
// command (`vllm serve`, `python3 -m sglang.launch_server`,
// `trtllm-serve`) and one `vllm bench serve`; `#` comments and blank lines
// are skipped (a '#' starting a word outside quotes ends its line:
// WithoutShellComment); any other line is an
// error naming it.
struct RunCommands {
  std::string serve_command;
  std::string bench_command;
  scenarios::EnvVars env;
};
absl::StatusOr<RunCommands> ParseRunCommands(const std::string& text);

// The commands file a result file is read with: its stem + ".cmd".
std::string CommandsPathOf(const std::string& result);

// Whether ReadLiveRunsFrom, given a directory, reads a file of this name: a
// CSV, a result (.json, .txt, .log) or a result's commands (.cmd).
bool ReadFromRunsDirectory(const std::string& name);

// One run from `result` (a --save-result .json, or any other file holding
// the printed report, e.g. the console log) and `result`'s stem + ".cmd".
// Every figure it reads must be a finite number >= 0.
absl::StatusOr<LiveRun> ReadLiveRunResult(const std::string& result);

// A directory: every *.csv in it, and every run's *.json or *.txt / *.log
// (the JSON when a run has both) with its *.cmd. A file: a CSV, else one
// run's result as ReadLiveRunResult reads it. A run whose result records a
// request count (num_prompts, or completed + failed) other than its bench
// command's --num-prompts, or more completed requests than that, is refused:
// result and commands do not belong together. So is a case name that two
// runs share, a token count that is not a whole number, a duration of 0 beside
// completed requests or a throughput, and per-request lists that contradict
// the totals (input_lens and output_lens of unequal length, output_lens not
// summing to total_output_tokens or all 0 with requests completed,
// total_input_tokens outside the prompts input_lens lists for the completed
// requests and for all of them), a rate that is not its count over the
// duration (request_throughput = completed / duration; output_throughput and
// total_token_throughput from the token totals; within the printed report's
// rounding) and a percentile below a lower one of the same metric (a median
// TTFT above its p99).
absl::StatusOr<std::vector<LiveRun>> ReadLiveRunsFrom(const std::string& path);

}  // namespace servesim::fit

#endif  // SERVESIM_SIM_FIT_LIVE_RUNS_H_
