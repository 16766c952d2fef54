#include "sim/planning/sweep.h"

#include <algorithm>
#include <map>
#include <mutex>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "base/status_macros.h"
#include "scenarios/serve_command.h"
#include "sim/planning/parallel_for.h"
#include "sim/runner/fit_coverage.h"
#include "sim/workload/bench_config.h"
#include "sim/workload/command_line.h"

namespace servesim::planning {
namespace {

// A word that follows a flag is its value unless it is itself a flag; "-5" is
// a value (argparse reads negative numbers as values too).
bool LooksLikeFlag(const std::string& word) {
  if (word.size() < 2 || word[0] != '-') return false;
  double unused = 0;
  return !absl::SimpleAtod(word, &unused);
}

std::string EngineLabel(const std::vector<std::string>& words) {
  // The program words name the engine: `vllm serve`, `python3 -m
  // sglang.launch_server`, `trtllm-serve`.
  const size_t n = std::min<size_t>(words.size(), 3);
  for (size_t i = 0; i < n; ++i) {
    if (words[i].find("trtllm") != std::string::npos) return "trtllm";
    if (words[i].find("sglang") != std::string::npos) return "sglang";
    if (words[i].find("vllm") != std::string::npos) return "vllm";
  }
  return "engine";
}

}  // namespace

const std::vector<std::string>& BenchAxisFlags() {
  // The flags of sim/workload/bench_config.cc that shape the workload.
  static const auto* const kFlags = new std::vector<std::string>{
      "--dataset-name",      "--dataset-path",       "--num-prompts",
      "--seed",              "--random-input-len",   "--random-output-len",
      "--random-range-ratio", "--random-prefix-len", "--sharegpt-output-len",
      "--request-rate",      "--burstiness",         "--max-concurrency",
      "--trace-time-scale",  "--top-p",              "--top-k",
      "--min-p",             "--temperature",        "--ramp-up-strategy",
      "--ramp-up-start-rps", "--ramp-up-end-rps"};
  return *kFlags;
}

namespace {

// The bench flag `flag` names, dashed as vllm bench serve reads it
// (--num_prompts is --num-prompts); empty when it names none.
std::string BenchFlag(std::string_view flag) {
  std::string dashed(flag);
  std::replace(dashed.begin(), dashed.end(), '_', '-');
  const auto& flags = BenchAxisFlags();
  return std::find(flags.begin(), flags.end(), dashed) != flags.end() ? dashed : "";
}

// Splits an axis's values at the commas outside brackets, braces and quotes,
// so that a JSON value (--speculative-config={"method":"mtp",...}) stays one.
// A quote opens only at a value's start (it's,b is two values) and a value
// wholly in matching quotes loses them; unbalanced brackets or quotes are an
// error naming the text.
absl::StatusOr<std::vector<std::string>> SplitAxisValues(std::string_view text) {
  std::vector<std::string> values(1);
  int depth = 0;
  char quote = 0;
  for (char c : text) {
    const bool at_start = absl::StripAsciiWhitespace(values.back()).empty();
    if (quote != 0) {
      if (c == quote) quote = 0;
    } else if ((c == '"' || c == '\'') && at_start && depth == 0) {
      quote = c;
    } else if (c == '{' || c == '[') {
      ++depth;
    } else if (c == '}' || c == ']') {
      if (--depth < 0) break;
    } else if (c == ',' && depth == 0) {
      values.emplace_back();
      continue;
    }
    values.back() += c;
  }
  if (depth != 0 || quote != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("unbalanced ", quote != 0 ? "quote" : "brackets", " in \"", std::string(text),
                     "\""));
  }
  for (std::string& v : values) {
    const absl::string_view trimmed = absl::StripAsciiWhitespace(v);
    if (trimmed.size() >= 2 && (trimmed.front() == '"' || trimmed.front() == '\'') &&
        trimmed.back() == trimmed.front()) {
      v = std::string(trimmed.substr(1, trimmed.size() - 2));
    }
  }
  return values;
}

}  // namespace

absl::StatusOr<Axis> ParseAxis(const std::string& spec) {
  const size_t eq = spec.find('=');
  if (eq == std::string_view::npos || eq < 2 || spec[0] != '-') {
    return absl::InvalidArgumentError(
        absl::StrCat("--axis: expected FLAG=V1,V2,... (e.g. --request-rate=1,2,4), got \"", spec,
                     "\""));
  }
  Axis axis;
  axis.name = std::string(spec.substr(0, eq));
  // A bench flag in its dashed spelling, so that it replaces the bench
  // command's own (--num_prompts edits --num-prompts).
  if (const std::string bench = BenchFlag(axis.name); !bench.empty()) {
    axis.name = bench;
    axis.target = AxisTarget::kBench;
  } else {
    axis.target = AxisTarget::kServe;
  }
  absl::StatusOr<std::vector<std::string>> values =
      SplitAxisValues(std::string_view(spec).substr(eq + 1));
  if (!values.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("--axis ", axis.name, ": ", values.status().message()));
  }
  for (const std::string& v : *values) {
    const std::string value(absl::StripAsciiWhitespace(v));
    if (value.empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat("--axis ", axis.name, ": empty value in \"", spec.substr(eq + 1), "\""));
    }
    // A repeated value would be run and tabulated twice as two points.
    if (std::find(axis.values.begin(), axis.values.end(), value) != axis.values.end()) {
      return absl::InvalidArgumentError(
          absl::StrCat("--axis ", axis.name, ": value \"", value, "\" given twice"));
    }
    axis.values.push_back(value);
  }
  return axis;
}

namespace {

// `spec` cut at each '|' that a shell would not quote: a command's own
// quoted '|' (--host 'a|b') stays in the command.
std::vector<absl::string_view> SplitAtUnquotedBars(absl::string_view spec) {
  std::vector<absl::string_view> parts;
  size_t start = 0;
  char quote = 0;
  for (size_t i = 0; i < spec.size(); ++i) {
    const char c = spec[i];
    if (quote == '\'') {
      if (c == '\'') quote = 0;
    } else if (c == '\\') {
      ++i;  // the next character is literal (outside quotes and inside "")
    } else if (quote == '"') {
      if (c == '"') quote = 0;
    } else if (c == '\'' || c == '"') {
      quote = c;
    } else if (c == '|') {
      parts.push_back(spec.substr(start, i - start));
      start = i + 1;
    }
  }
  parts.push_back(spec.substr(start));
  return parts;
}

}  // namespace

absl::StatusOr<Axis> ParseEngineAxis(const std::string& spec) {
  Axis axis;
  axis.name = "engine";
  axis.target = AxisTarget::kEngine;
  for (absl::string_view c : SplitAtUnquotedBars(spec)) {
    const std::string command(absl::StripAsciiWhitespace(c));
    if (command.empty()) {
      return absl::InvalidArgumentError("--engine-axis: empty command between '|'");
    }
    absl::StatusOr<std::vector<std::string>> words = workload::SplitShellWords(command);
    if (!words.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("--engine-axis: ", words.status().message()));
    }
    if (std::find(axis.commands.begin(), axis.commands.end(), command) != axis.commands.end()) {
      // As a repeated --axis value is: the same point twice.
      return absl::InvalidArgumentError(
          absl::StrCat("--engine-axis: '", command, "' is given twice"));
    }
    std::string label = EngineLabel(*words);
    const int64_t same = std::count_if(axis.values.begin(), axis.values.end(),
                                       [&](const std::string& v) {
                                         return v == label || v.rfind(label + "#", 0) == 0;
                                       });
    if (same > 0) absl::StrAppend(&label, "#", same + 1);
    axis.values.push_back(label);
    axis.commands.push_back(command);
  }
  return axis;
}

absl::StatusOr<std::string> SetFlag(const std::string& command, const std::string& flag,
                                    const std::string& value) {
  ASSIGN_OR_RETURN(std::vector<std::string> words, workload::SplitShellWords(command));
  bool found = false;
  const std::string inline_prefix = absl::StrCat(flag, "=");
  for (size_t i = 0; i < words.size(); ++i) {
    if (words[i].rfind(inline_prefix, 0) == 0) {
      words[i] = absl::StrCat(inline_prefix, value);
      found = true;
    } else if (words[i] == flag) {
      if (i + 1 < words.size() && !LooksLikeFlag(words[i + 1])) {
        words[i + 1] = std::string(value);
      } else {
        // Written as a bare switch: give it the value.
        words.insert(words.begin() + static_cast<std::ptrdiff_t>(i) + 1, std::string(value));
      }
      ++i;
      found = true;
    }
  }
  if (!found) {
    words.emplace_back(flag);
    words.emplace_back(value);
  }
  return workload::JoinShellWords(words);
}

namespace {

// Whether two serve axes name one flag of an engine they edit: an alias
// ("-tp", "--tensor-parallel-size") or an underscore spelling
// ("--max_num_seqs"). The engine keeps the last value given, so the first
// axis's column would lie about the point.
bool SameServeFlag(const Axis& a, const Axis& b, const std::vector<std::string>& commands) {
  if (a.target != AxisTarget::kServe || b.target != AxisTarget::kServe) return false;
  for (const std::string& c : commands) {
    if (scenarios::CanonicalServeFlag(c, a.name) == scenarios::CanonicalServeFlag(c, b.name)) {
      return true;
    }
  }
  return false;
}

}  // namespace

absl::StatusOr<std::vector<SweepPoint>> ExpandGrid(const std::string& serve_command,
                                                   const std::string& bench_command,
                                                   const std::vector<Axis>& axes) {
  // Every point would save its JSON to the same file; the sweep's table
  // (--out-dir) holds each point's results. A bench command that does not
  // parse fails at each point with the parser's reason.
  absl::StatusOr<workload::BenchConfig> bench = workload::ParseBenchCommand(bench_command);
  if (bench.ok() && bench->save_result) {
    return absl::InvalidArgumentError(
        "sweep: --save-result in --bench is not supported: each point's results are in the "
        "sweep's table (--out-dir)");
  }
  // The serve commands the axes edit: the base, or the engine axis's.
  std::vector<std::string> serve_commands;
  if (!serve_command.empty()) serve_commands.push_back(serve_command);
  for (const Axis& a : axes) {
    if (a.target == AxisTarget::kEngine) {
      serve_commands.insert(serve_commands.end(), a.commands.begin(), a.commands.end());
    }
  }
  int64_t total = 1;
  for (size_t k = 0; k < axes.size(); ++k) {
    const Axis& a = axes[k];
    for (size_t j = 0; j < k; ++j) {
      if (axes[j].name == a.name) {
        return absl::InvalidArgumentError(absl::StrCat(
            "--axis: ", a.name, " is on two axes; give all its values on one (", a.name,
            "=", absl::StrJoin(axes[j].values, ","), ",", absl::StrJoin(a.values, ","), ")"));
      }
      if (SameServeFlag(axes[j], a, serve_commands)) {
        return absl::InvalidArgumentError(
            absl::StrCat("--axis: ", axes[j].name, " and ", a.name,
                         " are one flag of the engine; give all its values on one axis"));
      }
    }
    if (a.values.empty()) {
      return absl::InvalidArgumentError(absl::StrCat("--axis ", a.name, ": no values"));
    }
    if (a.target == AxisTarget::kEngine && a.commands.size() != a.values.size()) {
      return absl::InvalidArgumentError("--engine-axis: one command per value expected");
    }
    total *= static_cast<int64_t>(a.values.size());
    if (total > 10'000'000) {
      return absl::InvalidArgumentError(
          absl::StrCat("sweep: the grid has more than 10,000,000 points; shard it or split it"));
    }
  }
  std::vector<SweepPoint> points;
  points.reserve(static_cast<size_t>(total));
  std::vector<size_t> digit(axes.size(), 0);
  for (int64_t index = 0; index < total; ++index) {
    // Mixed-radix digits of `index`, last axis least significant.
    int64_t rest = index;
    for (size_t k = axes.size(); k-- > 0;) {
      const auto n = static_cast<int64_t>(axes[k].values.size());
      digit[k] = static_cast<size_t>(rest % n);
      rest /= n;
    }
    SweepPoint p;
    p.index = index;
    p.serve_command = serve_command;
    p.bench_command = bench_command;
    // The engine axis replaces the serve command before any flag edits it.
    for (size_t k = 0; k < axes.size(); ++k) {
      if (axes[k].target == AxisTarget::kEngine) p.serve_command = axes[k].commands[digit[k]];
    }
    for (size_t k = 0; k < axes.size(); ++k) {
      const std::string& value = axes[k].values[digit[k]];
      p.values.push_back(value);
      if (axes[k].target == AxisTarget::kServe) {
        ASSIGN_OR_RETURN(p.serve_command, SetFlag(p.serve_command, axes[k].name, value));
      } else if (axes[k].target == AxisTarget::kBench) {
        ASSIGN_OR_RETURN(p.bench_command, SetFlag(p.bench_command, axes[k].name, value));
      }
    }
    points.push_back(std::move(p));
  }
  return points;
}

std::string SweepId(const std::string& serve_command, const std::string& bench_command,
                    const std::vector<Axis>& axes, const std::vector<std::string>& settings) {
  // FNV-1a over length-prefixed fields: no two definitions run together into
  // the same text, and the standard library's hash differs between builds.
  uint64_t hash = 14695981039346656037ull;
  auto add = [&](absl::string_view field) {
    for (char c : absl::StrCat(field.size(), ":", field)) {
      hash = (hash ^ static_cast<unsigned char>(c)) * 1099511628211ull;
    }
  };
  add(serve_command);
  add(bench_command);
  add(absl::StrCat(axes.size()));
  for (const Axis& a : axes) {
    add(a.name);
    add(absl::StrCat(static_cast<int>(a.target), " ", a.values.size(), " ", a.commands.size()));
    for (const std::string& v : a.values) add(v);
    for (const std::string& c : a.commands) add(c);
  }
  add(absl::StrCat(settings.size()));
  for (const std::string& s : settings) add(s);
  return absl::StrFormat("%016x", hash);
}

absl::StatusOr<Shard> ParseShard(const std::string& text) {
  const std::vector<std::string> parts = absl::StrSplit(text, '/');
  Shard s;
  if (parts.size() != 2 || !absl::SimpleAtoi(parts[0], &s.index) ||
      !absl::SimpleAtoi(parts[1], &s.count) || s.count < 1 || s.index < 0 ||
      s.index >= s.count) {
    return absl::InvalidArgumentError(
        absl::StrCat("--shard: expected i/n with 0 <= i < n (e.g. 0/4), got \"", text, "\""));
  }
  return s;
}

std::vector<SweepPoint> SelectShard(const std::vector<SweepPoint>& points, const Shard& shard) {
  std::vector<SweepPoint> mine;
  for (const SweepPoint& p : points) {
    if (p.index % shard.count == shard.index) mine.push_back(p);
  }
  return mine;
}

std::string_view PointStatusName(PointStatus status) {
  switch (status) {
    case PointStatus::kOk:
      return "ok";
    case PointStatus::kRefused:
      return "refused";
    case PointStatus::kError:
      return "error";
  }
  return "error";
}

PointStatus PointStatusOf(const absl::Status& failure) {
  return failure.code() == absl::StatusCode::kFailedPrecondition ? PointStatus::kRefused
                                                                 : PointStatus::kError;
}

PointFigures FiguresOf(const metrics::BenchMetrics& m) {
  PointFigures f;
  f.completed = m.completed;
  f.failed = m.failed;
  f.duration_s = m.duration_s;
  f.total_input_tokens = m.total_input_tokens;
  f.total_output_tokens = m.total_output_tokens;
  f.request_throughput = m.request_throughput;
  f.output_throughput = m.output_throughput;
  f.total_token_throughput = m.total_token_throughput;
  f.mean_ttft_ms = m.ttft.mean_ms;
  f.median_ttft_ms = m.ttft.median_ms;
  f.p99_ttft_ms = m.ttft.p99_ms;
  f.mean_tpot_ms = m.tpot.mean_ms;
  f.median_tpot_ms = m.tpot.median_ms;
  f.p99_tpot_ms = m.tpot.p99_ms;
  f.mean_itl_ms = m.itl.mean_ms;
  f.median_itl_ms = m.itl.median_ms;
  f.p99_itl_ms = m.itl.p99_ms;
  return f;
}

std::string ExtrapolationSummary(const std::vector<PointResult>& rows) {
  std::map<std::string, int64_t> by_kind;
  int64_t ok = 0, points = 0, unknown = 0;
  for (const PointResult& r : rows) {
    if (r.status != PointStatus::kOk) continue;
    ++ok;
    bool extrapolates = false;
    for (const runner::Extrapolation& e : r.figures.extrapolations) {
      if (e.kind == runner::kCoverageUnknown) {
        ++unknown;
        continue;
      }
      ++by_kind[e.kind];
      extrapolates = true;
    }
    points += extrapolates;
  }
  std::vector<std::string> parts;
  if (points > 0) {
    std::vector<std::string> kinds;
    for (const auto& [kind, n] : by_kind) kinds.push_back(absl::StrCat(kind, " ", n));
    parts.push_back(absl::StrCat(
        points, " of ", ok, " ok point(s) extrapolate past the live runs the parameters were "
        "fitted on (", absl::StrJoin(kinds, ", "), "): `servesim run` on a point prints why"));
  }
  if (unknown > 0) {
    parts.push_back(absl::StrCat("for ", unknown, " of ", ok,
                                 " ok point(s) the parameters record no coverage"));
  }
  return absl::StrJoin(parts, "; ");
}

std::string SpreadSummary(const std::vector<PointResult>& rows) {
  const PointResult* widest = nullptr;
  const FigureSpread* widest_range = nullptr;
  double widest_share = 0;
  for (const PointResult& r : rows) {
    if (r.status != PointStatus::kOk) continue;
    const FigureSpread* f = r.figures.spread.Find(kTotalTokenThroughput);
    if (f == nullptr || !(r.figures.total_token_throughput > 0)) continue;
    const double share = (f->high - f->low) / r.figures.total_token_throughput;
    // The first of equally wide points: grid order decides.
    if (widest == nullptr || share > widest_share) {
      widest = &r;
      widest_range = f;
      widest_share = share;
    }
  }
  if (widest == nullptr) return "";
  return absl::StrFormat(
      "spread over each point's engine's leave-one-out fits: total tok/s at most %.1f %% of its "
      "prediction wide (point %d: %.0f to %.0f tok/s); sweep.csv has each figure's range",
      100 * widest_share, widest->point.index, widest_range->low, widest_range->high);
}

PointEvaluator PredictEvaluator(const runner::PredictionContext& context,
                                const scenarios::EnvVars& env, SpreadEvaluator spread) {
  return [&context, env, spread](const SweepPoint& point) -> absl::StatusOr<PointFigures> {
    runner::RunRequest request;
    request.serve_command = point.serve_command;
    request.bench_command = point.bench_command;
    request.env = env;
    ASSIGN_OR_RETURN(runner::Prediction p, runner::Predict(context, request));
    PointFigures figures = FiguresOf(p.metrics);
    figures.extrapolations = std::move(p.extrapolations);
    if (spread) {
      ASSIGN_OR_RETURN(figures.spread, spread(request, p.engine.engine()));
    }
    return figures;
  };
}

std::vector<PointResult> RunPoints(const std::vector<SweepPoint>& points,
                                   const PointEvaluator& evaluate, int threads,
                                   const std::function<void(int64_t, int64_t)>& progress) {
  std::vector<PointResult> results(points.size());
  std::mutex progress_mutex;
  int64_t done = 0;
  const auto total = static_cast<int64_t>(points.size());
  // Each body writes only its own slot, so the output order is the input
  // order whatever the interleaving.
  ParallelFor(points.size(), threads, [&](size_t i) {
    PointResult& r = results[i];
    r.point = points[i];
    absl::StatusOr<PointFigures> f = evaluate(points[i]);
    if (f.ok()) {
      r.figures = *f;
    } else {
      r.status = PointStatusOf(f.status());
      r.reason = std::string(f.status().message());
    }
    std::lock_guard<std::mutex> lock(progress_mutex);
    ++done;
    if (progress) progress(done, total);
  });
  return results;
}

absl::Status CheckNoPointIsAnError(const std::vector<PointResult>& results) {
  const PointResult* first = nullptr;
  int64_t errors = 0;
  for (const PointResult& r : results) {
    if (r.status != PointStatus::kError) continue;
    if (first == nullptr) first = &r;
    ++errors;
  }
  if (first == nullptr) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(
      "sweep: ", errors, " of ", results.size(),
      " point(s) are errors (bad input or a feature servesim does not model, not an "
      "engine's refusal); the first (point ",
      first->point.index, "): ", first->reason));
}

std::string ProgressBar(int64_t done, int64_t total, int width) {
  const int64_t filled = total > 0 ? done * width / total : width;
  return absl::StrCat("\r[", std::string(static_cast<size_t>(filled), '#'),
                      std::string(static_cast<size_t>(width - filled), ' '), "] ", done, "/",
                      total);
}

}  // namespace servesim::planning
