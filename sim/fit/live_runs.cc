#include "sim/fit/live_runs.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <filesystem>
#include <map>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "base/byte_order_mark.h"
#include "base/decimal.h"
#include "base/read_file.h"
#include "base/status_macros.h"
#include "sim/metrics/result_reader.h"
#include "sim/workload/bench_config.h"
#include "sim/workload/command_line.h"
#include "sim/workload/csv.h"

namespace servesim::fit {

namespace {

absl::StatusOr<std::string> ReadText(const std::string& path) {
  // A directory where a file belongs is named as one, not read as empty.
  absl::StatusOr<std::string> text = ReadFileToString(path);
  if (!text.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("--runs: ", text.status().message()));
  }
  return text;
}

constexpr const char* kEngines[] = {"vllm", "sglang", "trtllm"};

bool StartsWith(const std::vector<std::string>& words, std::initializer_list<const char*> head,
                size_t from) {
  if (words.size() - from < head.size()) return false;
  size_t i = from;
  for (const char* h : head) {
    if (words[i++] != h) return false;
  }
  return true;
}

// A measured figure is a count, a time or a rate: a finite number >= 0.
absl::Status CheckFigure(const std::string& key, double value) {
  if (std::isfinite(value) && value >= 0) return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrCat(key, ": expected a finite number >= 0, got ", FormatDecimal(value)));
}

// Where a results CSV keeps what ReadLiveRuns reads (-1: no such column).
struct RunColumns {
  int case_name = -1;
  int env = -1;
  int serve = -1;
  int bench = -1;
  int observed = -1;  // an expected failure's observation
  int engine = -1;

  bool Named(int c) const {
    return c == case_name || c == env || c == serve || c == bench || c == engine;
  }
};

// The serve command says which engine ran; an `engine` column that names
// another of the three says the row is mixed up. Other spellings
// ("TensorRT-LLM") are a label, not a contradiction.
absl::Status CheckEngineColumn(const std::string& engine, const std::string& serve_command) {
  if (std::find(std::begin(kEngines), std::end(kEngines), engine) == std::end(kEngines)) {
    return absl::OkStatus();
  }
  // An unreadable or unknown serve command is the prediction's error.
  absl::StatusOr<std::vector<std::string>> words = workload::SplitShellWords(serve_command);
  const std::string serve_engine = words.ok() ? scenarios::ServeCommandEngine(*words, 0) : "";
  if (!serve_engine.empty() && serve_engine != engine) {
    return absl::InvalidArgumentError(
        absl::StrCat("engine: '", engine, "' but serve_command is a ", serve_engine, " command"));
  }
  return absl::OkStatus();
}

// The `env` column: KEY=VALUE assignments separated by spaces or semicolons.
absl::Status ReadEnvColumn(const std::string& cell, LiveRun& run) {
  for (absl::string_view kv : absl::StrSplit(cell, absl::ByAnyChar("; "), absl::SkipEmpty())) {
    absl::StatusOr<std::pair<std::string, std::string>> pair =
        scenarios::ParseEnvAssignment(std::string(kv));
    // The parser's own reason, named by the column rather than the flag.
    if (!pair.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("env: ", absl::StripPrefix(pair.status().message(), "--env: ")));
    }
    run.env.push_back(std::move(*pair));
  }
  return absl::OkStatus();
}

// Every other column of a result row: a figure vllm bench serve prints must
// be a finite number >= 0 (an empty cell: not measured); any other column
// (a date, a note) is the spreadsheet's business, kept where it is a number.
absl::Status ReadMeasuredFigures(const std::vector<std::string>& header,
                                 const std::vector<std::string>& row, const RunColumns& columns,
                                 LiveRun& run) {
  for (size_t c = 0; c < header.size(); ++c) {
    if (columns.Named(static_cast<int>(c)) || row[c].empty()) continue;
    double v = 0;
    const bool number = ParseDecimal(row[c], &v);
    if (!metrics::IsReportedFigure(header[c], /*saved_too=*/true)) {
      if (number && std::isfinite(v) && v >= 0) run.measured[header[c]] = v;
      continue;
    }
    if (!number) {
      return absl::InvalidArgumentError(
          absl::StrCat(header[c], ": expected a finite number >= 0, got '", row[c], "'"));
    }
    RETURN_IF_ERROR(CheckFigure(header[c], v));
    run.measured[header[c]] = v;
  }
  return absl::OkStatus();
}

// A row's commands, env and figures (or, for an expected failure, what was
// observed) into `run`; an error says why, without the case.
absl::Status ReadRunFields(const std::vector<std::string>& header,
                           const std::vector<std::string>& row, const RunColumns& columns,
                           LiveRun& run) {
  run.serve_command = row[columns.serve];
  if (columns.engine >= 0) {
    RETURN_IF_ERROR(CheckEngineColumn(row[columns.engine], run.serve_command));
  }
  if (columns.env >= 0) RETURN_IF_ERROR(ReadEnvColumn(row[columns.env], run));
  if (columns.observed >= 0) {
    run.expected_failure = true;
    run.observed_failure = row[columns.observed];
    return absl::OkStatus();
  }
  run.bench_command = row[columns.bench];
  return ReadMeasuredFigures(header, row, columns, run);
}

}  // namespace

absl::StatusOr<std::vector<LiveRun>> ReadLiveRuns(const std::string& path) {
  ASSIGN_OR_RETURN(std::string text, ReadText(path));
  // Spreadsheet programs save CSV with a byte-order mark before the header.
  absl::StatusOr<std::vector<std::vector<std::string>>> rows =
      workload::ParseCsv(std::string(WithoutByteOrderMark(absl::string_view(text))));
  if (!rows.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("--runs: ", path, ": ", rows.status().message()));
  }
  if (rows->empty()) return absl::InvalidArgumentError(absl::StrCat("--runs: ", path, " is empty"));
  if (rows->size() == 1) {
    return absl::InvalidArgumentError(absl::StrCat("--runs: ", path, " has a header but no runs"));
  }
  const std::vector<std::string>& header = rows->front();
  // Which of two `duration_s` columns was measured?
  for (size_t i = 0; i < header.size(); ++i) {
    if (std::find(header.begin() + i + 1, header.end(), header[i]) != header.end()) {
      return absl::InvalidArgumentError(
          absl::StrCat("--runs: ", path, ": column `", header[i], "` appears twice"));
    }
  }
  auto column = [&](const std::string& name) -> int {
    auto it = std::find(header.begin(), header.end(), name);
    return it == header.end() ? -1 : static_cast<int>(it - header.begin());
  };
  RunColumns columns;
  columns.case_name = column("case");
  columns.env = column("env");
  columns.serve = column("serve_command");
  columns.bench = column("bench_command");
  columns.observed = column("observed");
  columns.engine = column("engine");
  if (columns.case_name < 0 || columns.serve < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("--runs: ", path, ": needs columns `case` and `serve_command`"));
  }
  if (columns.bench < 0 && columns.observed < 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--runs: ", path, ": needs `bench_command` (results) or `observed` (failures)"));
  }
  std::vector<LiveRun> runs;
  std::map<std::string, size_t> row_of_case;
  for (size_t r = 1; r < rows->size(); ++r) {
    const std::vector<std::string>& row = (*rows)[r];
    if (row.size() != header.size()) {
      return absl::InvalidArgumentError(absl::StrCat("--runs: ", path, ": row ", r + 1, " has ",
                                                     row.size(), " fields, header has ",
                                                     header.size()));
    }
    LiveRun run;
    run.name = row[columns.case_name];
    run.source = path;
    if (absl::StripAsciiWhitespace(run.name).empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat("--runs: ", path, ": row ", r + 1, ": empty `case`"));
    }
    // Results are matched, reported and held out by case name.
    if (auto [it, fresh] = row_of_case.emplace(run.name, r + 1); !fresh) {
      return absl::InvalidArgumentError(absl::StrCat("--runs: ", path, ": case ", run.name,
                                                     " is in rows ", it->second, " and ", r + 1));
    }
    if (absl::Status read = ReadRunFields(header, row, columns, run); !read.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("--runs: ", path, ": case ", run.name, ": ", read.message()));
    }
    runs.push_back(std::move(run));
  }
  return runs;
}

namespace {

bool IsEnvAssignment(const std::string& word) {
  const size_t eq = word.find('=');
  if (eq == 0 || eq == std::string::npos) return false;
  for (size_t i = 0; i < eq; ++i) {
    const char c = word[i];
    if (!(c == '_' || std::isalnum(static_cast<unsigned char>(c))) ||
        (i == 0 && std::isdigit(static_cast<unsigned char>(c)))) {
      return false;
    }
  }
  return true;
}

// The script's lines with backslash continuations joined: (number of the
// first physical line, text).
std::vector<std::pair<int, std::string>> LogicalLines(const std::string& text) {
  std::vector<std::pair<int, std::string>> lines;
  std::string logical;
  int line_no = 0, logical_start = 1;
  for (absl::string_view raw : absl::StrSplit(text, '\n')) {
    ++line_no;
    std::string line(absl::StripTrailingAsciiWhitespace(raw));
    if (logical.empty()) logical_start = line_no;
    if (!line.empty() && line.back() == '\\') {
      line.pop_back();
      logical += line + " ";
      continue;
    }
    logical += line;
    lines.emplace_back(logical_start, std::move(logical));
    logical.clear();
  }
  if (!logical.empty()) lines.emplace_back(logical_start, std::move(logical));
  return lines;
}

}  // namespace

absl::StatusOr<RunCommands> ParseRunCommands(const std::string& text) {
  RunCommands out;
  scenarios::EnvVars exported, serve_env;
  int serve_lines = 0, bench_lines = 0;
  // A UTF-8 byte-order mark, as an editor may save the script.
  const absl::string_view body = WithoutByteOrderMark(absl::string_view(text));
  for (const auto& [number, line] : LogicalLines(std::string(body))) {
    const std::string_view kept = workload::WithoutShellComment(line);
    const absl::string_view stripped = absl::StripAsciiWhitespace({kept.data(), kept.size()});
    if (stripped.empty()) continue;
    absl::StatusOr<std::vector<std::string>> words =
        workload::SplitShellWords(std::string(stripped));
    if (!words.ok()) {
      return absl::InvalidArgumentError(absl::StrCat("line ", number, ": ", words.status().message()));
    }
    auto env_assignment = [&, number = number](const std::string& word)
        -> absl::StatusOr<std::pair<std::string, std::string>> {
      absl::StatusOr<std::pair<std::string, std::string>> kv = scenarios::ParseEnvAssignment(word);
      if (!kv.ok()) {
        return absl::InvalidArgumentError(absl::StrCat("line ", number, ": ", kv.status().message()));
      }
      return kv;
    };
    if (StartsWith(*words, {"export"}, 0)) {
      for (size_t i = 1; i < words->size(); ++i) {
        ASSIGN_OR_RETURN(auto kv, env_assignment((*words)[i]));
        exported.push_back(std::move(kv));
      }
      continue;
    }
    // `vllm serve ... &`: a script starts the server in the background
    // before it runs the client.
    if (!words->empty() && words->back() == "&") words->pop_back();
    size_t first = 0;
    while (first < words->size() && IsEnvAssignment((*words)[first])) ++first;
    const std::vector<std::string> command(words->begin() + first, words->end());
    if (StartsWith(*words, {"vllm", "bench", "serve"}, first)) {
      ++bench_lines;
      out.bench_command = workload::JoinShellWords(command);
    } else if (!scenarios::ServeCommandEngine(*words, first).empty()) {
      ++serve_lines;
      out.serve_command = workload::JoinShellWords(command);
      for (size_t i = 0; i < first; ++i) {
        ASSIGN_OR_RETURN(auto kv, env_assignment((*words)[i]));
        serve_env.push_back(std::move(kv));
      }
    } else {
      return absl::InvalidArgumentError(absl::StrCat(
          "line ", number, ": neither a serve command (vllm serve, python3 -m "
          "sglang.launch_server, trtllm-serve), `vllm bench serve` nor `export K=V`: '",
          stripped, "'"));
    }
  }
  if (serve_lines != 1 || bench_lines != 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        "needs one serve command and one `vllm bench serve` command, has ", serve_lines, " and ",
        bench_lines));
  }
  out.env = std::move(exported);
  for (auto& kv : serve_env) out.env.push_back(std::move(kv));
  return out;
}

namespace {
bool IsResultExtension(const std::string& ext) {
  return ext == ".json" || ext == ".txt" || ext == ".log";
}
}  // namespace

bool ReadFromRunsDirectory(const std::string& name) {
  const std::string ext = std::filesystem::path(name).extension().string();
  return ext == ".csv" || ext == ".cmd" || IsResultExtension(ext);
}

std::string CommandsPathOf(const std::string& result) {
  return std::filesystem::path(result).replace_extension(".cmd").string();
}

absl::StatusOr<LiveRun> ReadLiveRunResult(const std::string& result) {
  const std::filesystem::path path(result);
  const std::string commands_path = CommandsPathOf(result);
  std::error_code ec;
  if (!std::filesystem::exists(commands_path, ec)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--runs: ", result, ": no ", commands_path,
        " beside it (the serve command, its env and the vllm bench serve command)"));
  }
  ASSIGN_OR_RETURN(std::string commands_text, ReadText(commands_path));
  absl::StatusOr<RunCommands> commands = ParseRunCommands(commands_text);
  if (!commands.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("--runs: ", commands_path, ": ", commands.status().message()));
  }
  ASSIGN_OR_RETURN(std::string text, ReadText(result));
  absl::StatusOr<std::map<std::string, double>> figures =
      path.extension() == ".json" ? metrics::ReadResultJsonFigures(text)
                                  : metrics::ReadBenchReportFigures(text);
  if (!figures.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("--runs: ", result, ": ", figures.status().message()));
  }
  for (const auto& [key, value] : *figures) {
    if (absl::Status s = CheckFigure(key, value); !s.ok()) {
      return absl::InvalidArgumentError(absl::StrCat("--runs: ", result, ": ", s.message()));
    }
  }
  LiveRun run;
  run.name = path.stem().string();
  run.source = result;
  run.serve_command = std::move(commands->serve_command);
  run.bench_command = std::move(commands->bench_command);
  run.env = std::move(commands->env);
  run.measured = std::move(*figures);
  if (path.extension() == ".json") {
    absl::StatusOr<metrics::ResultLengths> lengths = metrics::ReadResultJsonLengths(text);
    if (!lengths.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("--runs: ", result, ": ", lengths.status().message()));
    }
    run.input_lens = std::move(lengths->input_lens);
    run.output_lens = std::move(lengths->output_lens);
  }
  return run;
}

namespace {

// A figure of `run`, or -1 where it was not measured.
double Measured(const LiveRun& run, const std::string& key) {
  auto it = run.measured.find(key);
  return it == run.measured.end() ? -1.0 : it->second;
}

// Bad input: `why`, with the file and case it concerns.
absl::Status BadRun(const LiveRun& run, absl::string_view why) {
  return absl::InvalidArgumentError(
      absl::StrCat("--runs: ", run.source, ": case ", run.name, ": ", why));
}

// A results CSV spells the duration duration_s; a JSON or report, duration.
const char* DurationKey(const LiveRun& run) {
  return run.measured.count("duration_s") ? "duration_s" : "duration";
}

// A result paired with another run's commands would compare unlike
// benchmarks: the request count a live result records (vllm's num_prompts,
// or completed + failed) must be the one its bench command asks for, and it
// cannot have completed more requests than that.
absl::Status CheckRequestCount(const LiveRun& run) {
  for (const char* key : {"num_prompts", "completed", "failed"}) {
    if (const double v = Measured(run, key); v >= 0 && v != std::floor(v)) {
      return BadRun(run, absl::StrCat(key, ": expected a whole number of requests, got ", v));
    }
  }
  double live_requests = Measured(run, "num_prompts");
  if (live_requests < 0 && Measured(run, "completed") >= 0 && Measured(run, "failed") >= 0) {
    live_requests = Measured(run, "completed") + Measured(run, "failed");
  }
  if (live_requests < 0 && Measured(run, "completed") < 0) return absl::OkStatus();
  absl::StatusOr<workload::BenchConfig> bench = workload::ParseBenchCommand(run.bench_command);
  if (!bench.ok()) return BadRun(run, bench.status().message());
  // A trace without --num-prompts replays every row: its count is the file's.
  if (bench->dataset_name == workload::DatasetName::kTrace && !bench->num_prompts_given) {
    return absl::OkStatus();
  }
  const auto asked = static_cast<double>(bench->num_prompts);
  if (live_requests >= 0 && live_requests != asked) {
    return BadRun(run, absl::StrCat("the live result has ", live_requests,
                                    " requests, its bench command asks for --num-prompts ",
                                    bench->num_prompts));
  }
  // Fewer is legitimate: the failed requests. But completed and failed
  // together are every request sent.
  if (Measured(run, "completed") >= 0 && Measured(run, "failed") >= 0 &&
      Measured(run, "completed") + Measured(run, "failed") != asked) {
    return BadRun(run, absl::StrCat("completed ", Measured(run, "completed"), " and failed ",
                                    Measured(run, "failed"),
                                    " requests are not its bench command's "
                                    "--num-prompts ",
                                    bench->num_prompts));
  }
  if (Measured(run, "completed") > asked) {
    return BadRun(
        run, absl::StrCat("completed: ", Measured(run, "completed"),
                          " is more than its bench command's --num-prompts ", bench->num_prompts));
  }
  return absl::OkStatus();
}

// Figures that contradict what any run can report: counts of tokens that
// are not whole, a run that completed requests (or moved tokens) in no time,
// and per-request lists that disagree with the totals vllm bench serve sums
// from them. Failed requests list their prompt in input_lens and 0 in
// output_lens; total_input_tokens counts completed requests' prompts only
// and total_output_tokens is output_lens' sum.
absl::Status CheckTokenFigures(const LiveRun& run) {
  // Token counts in full: StrCat would print 99999999999 as 1e+11.
  auto tokens = [](double v) { return absl::StrFormat("%.15g", v); };
  for (const char* key : {"total_input_tokens", "total_output_tokens"}) {
    if (const double v = Measured(run, key); v >= 0 && v != std::floor(v)) {
      return BadRun(run, absl::StrCat(key, ": expected a whole number of tokens, got ", tokens(v)));
    }
  }
  const char* duration_key = DurationKey(run);
  if (Measured(run, duration_key) == 0) {
    for (const char* key : {"completed", "total_input_tokens", "total_output_tokens",
                            "request_throughput", "output_throughput", "total_token_throughput"}) {
      if (Measured(run, key) > 0) {
        return BadRun(run,
                      absl::StrCat(duration_key, ": 0 s, but ", key, " is ", Measured(run, key)));
      }
    }
  }
  const std::vector<int64_t>& in = run.input_lens;
  const std::vector<int64_t>& out = run.output_lens;
  if (!in.empty() && !out.empty() && in.size() != out.size()) {
    return BadRun(
        run, absl::StrCat("input_lens lists ", in.size(), " requests, output_lens ", out.size()));
  }
  if (!out.empty()) {
    double sum = 0;
    int64_t generated = 0;
    for (int64_t n : out) {
      sum += static_cast<double>(n);
      if (n > 0) ++generated;
    }
    if (const double total = Measured(run, "total_output_tokens"); total >= 0 && total != sum) {
      return BadRun(run, absl::StrCat("output_lens sum to ", tokens(sum),
                                      " tokens, total_output_tokens is ", tokens(total)));
    }
    if (const double completed = Measured(run, "completed"); completed >= 0) {
      if (generated == 0 && completed > 0) {
        return BadRun(run, absl::StrCat("output_lens are all 0, but completed is ", completed));
      }
      if (static_cast<double>(generated) > completed) {
        return BadRun(run,
                      absl::StrCat("output_lens: ", generated,
                                   " requests generated tokens, but completed is ", completed));
      }
    }
  }
  if (const double total = Measured(run, "total_input_tokens"); total >= 0 && !in.empty()) {
    double listed = 0, of_completed = 0;
    for (size_t i = 0; i < in.size(); ++i) {
      listed += static_cast<double>(in[i]);
      if (!out.empty() && out[i] > 0) of_completed += static_cast<double>(in[i]);
    }
    if (total > listed) {
      return BadRun(
          run, absl::StrCat("total_input_tokens: ", tokens(total), " is more than input_lens' sum ",
                            tokens(listed), " over every request"));
    }
    if (total < of_completed) {
      return BadRun(run,
                    absl::StrCat("total_input_tokens: ", tokens(total), " is less than the ",
                                 tokens(of_completed),
                                 " tokens input_lens lists for the requests that generated some"));
    }
  }
  return absl::OkStatus();
}

// vllm bench serve derives its rates from the counts and the duration
// (request_throughput = completed / duration; output_throughput and
// total_token_throughput likewise from the token totals) and its percentiles
// from one sorted list each, so a result that breaks either was edited or
// pasted into the wrong columns. The slack covers the printed report's two
// decimals: half a unit on the rate and on the duration it was divided by.
absl::Status CheckRatesAndPercentiles(const LiveRun& run) {
  const char* duration_key = DurationKey(run);
  if (const double duration = Measured(run, duration_key); duration > 0) {
    const double input = Measured(run, "total_input_tokens"),
                 output = Measured(run, "total_output_tokens");
    const struct {
      const char* rate;
      double count;
      const char* of;
    } rates[] = {
        {"request_throughput", Measured(run, "completed"), "completed"},
        {"output_throughput", output, "total_output_tokens"},
        {"total_token_throughput", input >= 0 && output >= 0 ? input + output : -1.0,
         "(total_input_tokens + total_output_tokens)"},
    };
    for (const auto& r : rates) {
      const double rate = Measured(run, r.rate);
      if (rate < 0 || r.count < 0) continue;
      const double expected = r.count / duration;
      if (std::abs(rate - expected) > 0.005 + expected * (0.005 / duration + 1e-3)) {
        return BadRun(run, absl::StrCat(r.rate, ": ", FormatDecimal(rate), ", but ", r.of, " / ",
                                        duration_key, " is ", absl::StrFormat("%.2f", expected)));
      }
    }
  }
  // No request's latency outlasts the benchmark, which runs from the first
  // send to the last reply.
  if (const double duration = Measured(run, duration_key); duration > 0) {
    for (const auto& [key, value] : run.measured) {
      if (!metrics::IsReportedFigure(key, /*saved_too=*/true) || !absl::EndsWith(key, "_ms")) {
        continue;
      }
      if (value > duration * 1000.0 + 0.01) {
        return BadRun(run, absl::StrCat(key, ": ", FormatDecimal(value), " ms is longer than the ",
                                        duration_key, " of ", FormatDecimal(duration), " s"));
      }
    }
  }
  // The peak of requests in flight is at most the requests sent, and at least
  // one where any completed.
  if (const double peak = Measured(run, "max_concurrent_requests"); peak >= 0) {
    const double completed = Measured(run, "completed"), failed = Measured(run, "failed");
    const double sent = std::max(0.0, completed) + std::max(0.0, failed);
    if ((completed >= 0 && peak > sent) || (completed > 0 && peak < 1)) {
      return BadRun(run, absl::StrCat("max_concurrent_requests: ", FormatDecimal(peak),
                                      ", but the run sent ", FormatDecimal(sent), " requests"));
    }
  }
  // Percentile keys: median_X_ms is the 50th, pNN_X_ms the NNth.
  std::map<std::string, std::map<double, std::string>> by_metric;  // X -> percentile -> key
  for (const auto& [key, value] : run.measured) {
    if (!metrics::IsReportedFigure(key, /*saved_too=*/true)) continue;
    const std::vector<std::string> parts = absl::StrSplit(key, '_');
    if (parts.size() != 3 || parts[2] != "ms") continue;
    double percentile = 0;
    if (parts[0] == "median") {
      percentile = 50;
    } else if (parts[0].size() < 2 || parts[0][0] != 'p' ||
               !absl::SimpleAtod(parts[0].substr(1), &percentile)) {
      continue;
    }
    by_metric[parts[1]][percentile] = key;
  }
  for (const auto& [metric, keys] : by_metric) {
    const std::string* lower = nullptr;
    for (const auto& [percentile, key] : keys) {
      if (lower != nullptr && Measured(run, key) + 0.01 < Measured(run, *lower)) {
        return BadRun(run, absl::StrCat(key, ": ", FormatDecimal(Measured(run, key)), " is below ",
                                        *lower, ": ", FormatDecimal(Measured(run, *lower))));
      }
      lower = &key;
    }
    // Half the values are at least the median and none is negative: the mean
    // is at least half the median.
    const std::string mean_key = absl::StrCat("mean_", metric, "_ms");
    if (auto median = keys.find(50); median != keys.end() && run.measured.count(mean_key) > 0) {
      const double mean = Measured(run, mean_key), half = Measured(run, median->second) / 2;
      if (mean + 0.01 < half) {
        return BadRun(run, absl::StrCat(mean_key, ": ", FormatDecimal(mean), " is below half of ",
                                        median->second, ": ", FormatDecimal(2 * half)));
      }
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<LiveRun>> ReadEveryRun(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) {
    return absl::InvalidArgumentError(absl::StrCat("--runs: no such file or directory: ", path));
  }
  if (!std::filesystem::is_directory(path, ec)) {
    if (std::filesystem::path(path).extension() == ".csv") return ReadLiveRuns(path);
    ASSIGN_OR_RETURN(LiveRun run, ReadLiveRunResult(path));
    return std::vector<LiveRun>{std::move(run)};
  }
  std::vector<std::string> csvs;
  std::map<std::string, std::vector<std::string>> results;  // stem -> result files
  for (const auto& e : std::filesystem::directory_iterator(path, ec)) {
    const std::string ext = e.path().extension().string();
    if (ext == ".csv") csvs.push_back(e.path().string());
    if (IsResultExtension(ext)) {
      results[e.path().stem().string()].push_back(e.path().string());
    }
  }
  std::sort(csvs.begin(), csvs.end());
  if (csvs.empty() && results.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--runs: no results in ", path, " (*.csv, or *.json / *.txt / *.log with a *.cmd)"));
  }
  std::vector<LiveRun> all;
  // Results are matched, reported and held out by case name, across files too.
  std::map<std::string, std::string> file_of_case;
  auto add = [&](LiveRun run) -> absl::Status {
    if (auto [it, fresh] = file_of_case.emplace(run.name, run.source); !fresh) {
      return absl::InvalidArgumentError(absl::StrCat("--runs: case ", run.name, " is in both ",
                                                     it->second, " and ", run.source));
    }
    all.push_back(std::move(run));
    return absl::OkStatus();
  };
  for (const std::string& f : csvs) {
    ASSIGN_OR_RETURN(std::vector<LiveRun> runs, ReadLiveRuns(f));
    for (auto& r : runs) RETURN_IF_ERROR(add(std::move(r)));
  }
  for (auto& [stem, files] : results) {
    // The JSON when there is one: it has every figure at full precision.
    std::sort(files.begin(), files.end(), [](const std::string& a, const std::string& b) {
      const bool ja = absl::EndsWith(a, ".json"), jb = absl::EndsWith(b, ".json");
      return ja != jb ? ja : a < b;
    });
    ASSIGN_OR_RETURN(LiveRun run, ReadLiveRunResult(files.front()));
    // The others (the console log beside a --save-result JSON) are read too,
    // and must be of the same run: a file that does not parse, or counts
    // other requests or tokens, is an error rather than a file ignored.
    for (size_t k = 1; k < files.size(); ++k) {
      ASSIGN_OR_RETURN(LiveRun other, ReadLiveRunResult(files[k]));
      for (const char* key : {"completed", "failed", "total_input_tokens", "total_output_tokens"}) {
        const auto a = run.measured.find(key), b = other.measured.find(key);
        if (a != run.measured.end() && b != other.measured.end() && a->second != b->second) {
          return absl::InvalidArgumentError(
              absl::StrCat("--runs: ", files[k], " and ", files.front(), " (one run, ", stem,
                           ") disagree on ", key, ": ", b->second, " against ", a->second));
        }
      }
    }
    RETURN_IF_ERROR(add(std::move(run)));
  }
  return all;
}

}  // namespace

absl::StatusOr<std::vector<LiveRun>> ReadLiveRunsFrom(const std::string& path) {
  ASSIGN_OR_RETURN(std::vector<LiveRun> runs, ReadEveryRun(path));
  for (const LiveRun& run : runs) {
    RETURN_IF_ERROR(CheckRequestCount(run));
    RETURN_IF_ERROR(CheckTokenFigures(run));
    RETURN_IF_ERROR(CheckRatesAndPercentiles(run));
  }
  return runs;
}

}  // namespace servesim::fit
