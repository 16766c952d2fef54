// `servesim sweep`, `servesim sweep-merge` and `servesim plan`: many
// predictions around a base configuration, and the fewest nodes that meet SLOs.
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <optional>
#include <sstream>
#include <thread>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "base/decimal.h"
#include "base/read_file.h"
#include "base/status_macros.h"
#include "base/write_file.h"
#include "sim/cli/commands.h"
#include "sim/fit/fold_spread.h"
#include "sim/planning/plan.h"
#include "sim/planning/sweep.h"
#include "sim/planning/sweep_plots.h"
#include "sim/planning/sweep_table.h"
#include "sim/workload/arrivals.h"
#include "sim/workload/bench_config.h"
#include "sim/workload/trace_file.h"

namespace servesim::cli {
namespace {

// Every value of a repeatable flag (--axis, --candidate), in order; none if absent.
std::vector<std::string> Repeated(const CliArgs& args, const std::string& flag) {
  auto it = args.repeated.find(flag);
  return it == args.repeated.end() ? std::vector<std::string>() : it->second;
}

absl::StatusOr<std::string> ReadFile(const std::string& path, const std::string& what) {
  absl::StatusOr<std::string> text = ReadFileToString(path);
  if (!text.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(what, ": ", text.status().message()));
  }
  return text;
}

absl::StatusOr<std::optional<double>> PositiveFlag(const CliArgs& args, const std::string& flag) {
  if (!args.Has(flag)) return std::optional<double>();
  double v = 0;
  if (!ParseDecimal(args.Get(flag), &v) || !(v > 0) || !std::isfinite(v)) {
    return absl::InvalidArgumentError(
        absl::StrCat(flag, ": expected a number > 0, got \"", args.Get(flag), "\""));
  }
  return std::optional<double>(v);
}

// The files WriteSweepOutputs writes into its directory.
constexpr const char* kSweepOutputFiles[] = {"sweep.csv", "sweep.json", "throughput.svg",
                                             "pareto.svg"};

// sweep.csv, sweep.json and the two plots of a whole (or merged) sweep.
absl::Status WriteSweepOutputs(const std::string& dir, const planning::SweepTable& table) {
  RETURN_IF_ERROR(WriteStringToFile(dir + "/sweep.csv", planning::FormatSweepCsv(table)));
  RETURN_IF_ERROR(WriteStringToFile(dir + "/sweep.json", planning::FormatSweepJson(table)));
  RETURN_IF_ERROR(WriteStringToFile(dir + "/throughput.svg",
                                    planning::RenderSvg(planning::ThroughputFigure(table))));
  RETURN_IF_ERROR(
      WriteStringToFile(dir + "/pareto.svg", planning::RenderSvg(planning::ParetoFigure(table))));
  return absl::OkStatus();
}

// The held-out line (HeldOutEvidenceFor) of each serve command among the
// points that ran, in their order, led by the command where the sweep has
// several.
std::vector<std::string> HeldOutLines(const runner::PredictionContext& context,
                                      const scenarios::EnvVars& env,
                                      const std::optional<SpreadFolds>& folds,
                                      const std::vector<planning::PointResult>& rows) {
  std::vector<std::string> commands;
  for (const planning::PointResult& r : rows) {
    if (r.status == planning::PointStatus::kOk &&
        std::find(commands.begin(), commands.end(), r.point.serve_command) == commands.end()) {
      commands.push_back(r.point.serve_command);
    }
  }
  std::vector<std::string> lines;
  if (!folds) return lines;
  for (const std::string& serve : commands) {
    // The layout is the serve command's alone: no workload is needed.
    absl::StatusOr<runner::PreparedRun> run =
        runner::PrepareRun(context, serve, env, scenarios::ServeContext{});
    if (!run.ok() || !run->params) continue;
    std::optional<fit::HeldOutEvidence> e = HeldOutEvidenceFor(
        context, folds, run->engine.engine(), runner::EngineShape(context, *run).layout_family);
    if (!e) continue;
    const std::string line = fit::FormatHeldOutEvidence(*e, folds->source);
    lines.push_back(commands.size() > 1 ? absl::StrCat("points of `", serve, "`: ", line) : line);
  }
  return lines;
}

// Prints the counts, then `held_out` lines; returns the exit code: 2,
// naming the first, when any point is an error
// (planning::CheckNoPointIsAnError), else 0.
int PrintSummary(const planning::SweepTable& table, const std::string& wrote,
                 const std::vector<std::string>& held_out = {}) {
  std::map<planning::PointStatus, int64_t> counts;
  for (const planning::PointResult& r : table.rows) ++counts[r.status];
  std::printf("%zu point(s): %lld ok, %lld refused, %lld error; wrote %s\n", table.rows.size(),
              static_cast<long long>(counts[planning::PointStatus::kOk]),
              static_cast<long long>(counts[planning::PointStatus::kRefused]),
              static_cast<long long>(counts[planning::PointStatus::kError]), wrote.c_str());
  if (const std::string line = planning::ExtrapolationSummary(table.rows); !line.empty()) {
    std::printf("%s\n", line.c_str());
  }
  if (const std::string line = planning::SpreadSummary(table.rows); !line.empty()) {
    std::printf("%s\n", line.c_str());
  }
  for (const std::string& line : held_out) std::printf("%s\n", line.c_str());
  std::fflush(stdout);
  if (absl::Status s = planning::CheckNoPointIsAnError(table.rows); !s.ok()) return ReportError(s);
  return 0;
}

int MergeSweep(const std::string& dir) {
  // Shard files in name order, grouped by shard count.
  std::map<int, std::map<int, std::string>> by_count;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
    const std::string name = entry.path().filename().string();
    if (!absl::StartsWith(name, "sweep.shard-") || !absl::EndsWith(name, ".csv")) continue;
    int i = 0, n = 0;
    char tail[8] = {0};
    // A file named like a shard that no sweep --shard writes (an index past
    // the count, a padded number) is refused, not skipped: the merge would
    // otherwise report success without it.
    if (std::sscanf(name.c_str(), "sweep.shard-%d-of-%d.cs%1s", &i, &n, tail) != 3 ||
        std::string(tail) != "v" || n < 1 || i < 0 || i >= n ||
        name != planning::ShardFileName({i, n})) {
      return ReportError(absl::InvalidArgumentError(absl::StrCat(
          "sweep merge: ", dir, "/", name,
          " is not a shard file a sweep writes (sweep.shard-I-of-N.csv, 0 <= I < N)")));
    }
    by_count[n][i] = entry.path().string();
  }
  if (ec) {
    return ReportError(absl::InvalidArgumentError(absl::StrCat("--out-dir: cannot list ", dir)));
  }
  if (by_count.empty()) {
    return ReportError(absl::InvalidArgumentError(
        absl::StrCat("sweep merge: no sweep.shard-I-of-N.csv files in ", dir)));
  }
  if (by_count.size() > 1) {
    return ReportError(absl::InvalidArgumentError(
        absl::StrCat("sweep merge: ", dir, " holds shards of different counts (",
                     by_count.begin()->first, " and ", by_count.rbegin()->first, ")")));
  }
  const auto& [count, files] = *by_count.begin();
  std::vector<planning::SweepTable> tables;
  for (int i = 0; i < count; ++i) {
    auto it = files.find(i);
    if (it == files.end()) {
      return ReportError(absl::InvalidArgumentError(absl::StrCat(
          "sweep merge: missing shard ", i, " of ", count, ": ", dir, "/",
          planning::ShardFileName({i, count}))));
    }
    absl::StatusOr<std::string> text = ReadFile(it->second, "sweep merge");
    if (!text.ok()) return ReportError(text.status());
    absl::StatusOr<planning::SweepTable> t = planning::ParseSweepCsv(*text, it->second);
    if (!t.ok()) return ReportError(t.status());
    tables.push_back(std::move(*t));
  }
  absl::StatusOr<planning::SweepTable> merged = planning::MergeTables(tables);
  if (!merged.ok()) return ReportError(merged.status());
  absl::Status s = WriteSweepOutputs(dir, *merged);
  if (!s.ok()) return ReportError(s);
  return PrintSummary(*merged, absl::StrCat(dir, "/{sweep.csv,sweep.json,throughput.svg,pareto.svg} from ",
                                            count, " shard(s)"));
}

// A merge joins the shards in --out-dir as they were run; a sweep or setting
// named beside it would go unchecked against them. Names the first other
// flag in name order (--axis among the valued ones).
absl::Status CheckMergeTakesNoOtherFlag(const CliArgs& args) {
  std::set<std::string> given;
  for (const auto& [flag, value] : args.values) given.insert(flag);
  for (const auto& [flag, values] : args.repeated) given.insert(flag);
  given.insert(args.switches.begin(), args.switches.end());
  given.erase("--out-dir");
  given.erase("--merge");
  const std::string other = !args.env.empty() ? "--env" : given.empty() ? "" : *given.begin();
  if (other.empty()) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(
      args.command == "sweep-merge" ? "sweep-merge" : "sweep --merge", ": ", other,
      " does not go with a merge, which joins the shards in --out-dir as they were run"));
}

// The --axis axes, then the engine axis: the first --axis stays the x axis
// of the throughput plot and each engine becomes a line.
absl::StatusOr<std::vector<planning::Axis>> AxesFromArgs(const CliArgs& args) {
  std::vector<planning::Axis> axes;
  for (const std::string& spec : Repeated(args, "--axis")) {
    ASSIGN_OR_RETURN(planning::Axis a, planning::ParseAxis(spec));
    axes.push_back(std::move(a));
  }
  if (args.Has("--engine-axis")) {
    ASSIGN_OR_RETURN(planning::Axis a, planning::ParseEngineAxis(args.Get("--engine-axis")));
    axes.push_back(std::move(a));
  }
  return axes;
}

// The files the sweep writes must not be files it reads: the context's, the
// folds and each point's dataset (run refuses the same). A shard's file too:
// the merge writes the sweep's into the same folder.
absl::Status CheckSweepWritesNoInput(const std::string& dir,
                                     const runner::PredictionContext& context,
                                     const std::optional<SpreadFolds>& folds,
                                     const std::vector<planning::SweepPoint>& points,
                                     const std::optional<planning::Shard>& shard) {
  std::vector<NamedPath> inputs = ContextInputs(context);
  if (folds) inputs.push_back({"--folds", folds->path});
  for (const planning::SweepPoint& p : points) {
    absl::StatusOr<workload::BenchConfig> b = workload::ParseBenchCommand(p.bench_command);
    if (b.ok()) inputs.push_back({"--bench --dataset-path", b->dataset_path});
  }
  std::vector<std::string> written = {std::begin(kSweepOutputFiles), std::end(kSweepOutputFiles)};
  if (shard) written.push_back(planning::ShardFileName(*shard));
  for (const std::string& name : written) {
    RETURN_IF_ERROR(CheckOutputIsNoInput("--out-dir", absl::StrCat(dir, "/", name), inputs));
  }
  return absl::OkStatus();
}

// What else changes a shard's figures, so that a shard run with other
// settings does not merge either: the files' contents, not their paths (a
// refit rewrites scenarios/fitted_params.textproto in place; shards on other
// machines may keep the same files elsewhere).
std::vector<std::string> ShardSettings(const CliArgs& args,
                                       const runner::PredictionContext& context,
                                       const std::optional<SpreadFolds>& folds) {
  std::vector<std::string> settings = args.env;
  auto contents = [](const std::string& path) {
    absl::StatusOr<std::string> text = ReadFileToString(path);
    return text.ok() ? *text : absl::StrCat(path, " (not read)");
  };
  const runner::ContextPaths& paths = context.paths;
  settings.push_back(contents(paths.model_spec));
  settings.push_back(context.profile ? contents(paths.profile) : "no profile (roofline)");
  // A missing default parameters file reads "none" here too.
  settings.push_back(paths.params == "none" ? "no fitted parameters" : contents(paths.params));
  // Only with --spread, so that a sweep without it keeps its id.
  if (folds) settings.push_back(absl::StrCat("--spread ", contents(folds->path)));
  return settings;
}

// With --spread, each point predicted again with every fit of the folds.
// The points share the threads; each point's fits run on its own. `context`
// must outlive the evaluator.
planning::SpreadEvaluator SpreadEvaluatorOf(const runner::PredictionContext& context,
                                            const SpreadFolds& folds) {
  return [&context, &fits = folds.fits](
             const runner::RunRequest& request,
             scenarios::EngineKind engine) -> absl::StatusOr<planning::PointSpread> {
    ASSIGN_OR_RETURN(fit::PredictionSpread s,
                     fit::PredictSpread(context, request, engine, fits, /*threads=*/1));
    planning::PointSpread out;
    out.fits = s.fits;
    for (const fit::FigureRange& r : s.figures) out.figures.push_back({r.key, r.low, r.high});
    return out;
  };
}

// A progress bar on a terminal only: in a pipe or a log its line would
// stand before the one error line a failed sweep prints.
std::function<void(int64_t, int64_t)> ProgressBarOnTerminal() {
  if (!isatty(STDERR_FILENO)) return nullptr;
  return [](int64_t done, int64_t total) {
    std::fputs(planning::ProgressBar(done, total, 40).c_str(), stderr);
    if (done == total) std::fputc('\n', stderr);
    std::fflush(stderr);
  };
}

// plan --trace FILE: the bench command that replays the file's own clock
// (`--rate-scale` times faster), its first --num-prompts rows; `note` says
// where the default took every row.
absl::StatusOr<std::string> BenchCommandOfTrace(const CliArgs& args, std::string& note) {
  // --trace replays the file's own clock; a table of lengths has none.
  ASSIGN_OR_RETURN(workload::TraceFile trace, workload::ReadTraceFile(args.Get("--trace")));
  if (!trace.has_arrivals) {
    return absl::InvalidArgumentError(absl::StrCat(
        "plan: --trace ", args.Get("--trace"),
        ": a table of lengths without arrival times; give the workload as --bench 'vllm bench "
        "serve --dataset-name trace --dataset-path FILE --request-rate R'"));
  }
  ASSIGN_OR_RETURN(std::optional<double> scale, PositiveFlag(args, "--rate-scale"));
  // The default caps a long trace to keep a plan to seconds; a shorter one
  // is replayed whole.
  constexpr int kDefaultPrompts = 2000;
  const auto rows = static_cast<int64_t>(trace.rows.size());
  ASSIGN_OR_RETURN(int prompts, IntFlag(args, "--num-prompts", kDefaultPrompts, 1));
  if (!args.Has("--num-prompts") && rows < kDefaultPrompts) {
    prompts = static_cast<int>(rows);
    note = absl::StrCat("every row of ", args.Get("--trace"),
                        ": it has fewer than the default --num-prompts ", kDefaultPrompts);
  }
  if (prompts > rows) {
    return absl::InvalidArgumentError(absl::StrCat("--num-prompts: ", prompts, " but ",
                                                   args.Get("--trace"), " has ", rows, " rows"));
  }
  // The replayed rows' span at this rate, checked here so that the error
  // names the flag given (the bench command's --trace-time-scale is plan's).
  const double span_s = static_cast<double>(trace.rows[prompts - 1].arrival_offset_ns -
                                            trace.rows.front().arrival_offset_ns) /
                        1e9 / scale.value_or(1.0);
  RETURN_IF_ERROR(workload::CheckArrivalSpan(
      span_s, absl::StrCat("--rate-scale: ", scale.value_or(1.0), " sends the trace's ", prompts,
                           " requests")));
  return planning::TraceBenchCommand(args.Get("--trace"), scale.value_or(1.0), prompts);
}

// The SLOs: TTFT and TPOT required, the P99 ITL and output throughput
// optional, each > 0.
absl::StatusOr<planning::Slo> SloFromArgs(const CliArgs& args) {
  planning::Slo slo;
  for (const auto& [flag, required] :
       std::vector<std::pair<std::string, bool>>{{"--slo-ttft-p99-ms", true},
                                                 {"--slo-tpot-mean-ms", true},
                                                 {"--slo-itl-p99-ms", false},
                                                 {"--min-throughput", false}}) {
    ASSIGN_OR_RETURN(std::optional<double> v, PositiveFlag(args, flag));
    if (required && !v.has_value()) {
      return absl::InvalidArgumentError(absl::StrCat("plan: ", flag, " is required"));
    }
    if (flag == "--slo-ttft-p99-ms") slo.ttft_p99_ms = v.value_or(0);
    if (flag == "--slo-tpot-mean-ms") slo.tpot_mean_ms = v.value_or(0);
    if (flag == "--slo-itl-p99-ms") slo.itl_p99_ms = v;
    if (flag == "--min-throughput") slo.min_output_tok_s = v;
  }
  return slo;
}

// --candidate CMD... then the --candidates file's, each once.
absl::StatusOr<std::vector<std::string>> CandidatesFromArgs(const CliArgs& args) {
  std::vector<std::string> candidates = Repeated(args, "--candidate");
  if (args.Has("--candidates")) {
    ASSIGN_OR_RETURN(std::string text, ReadFile(args.Get("--candidates"), "--candidates"));
    ASSIGN_OR_RETURN(std::vector<std::string> more,
                     planning::ParseCandidates(text, args.Get("--candidates")));
    candidates.insert(candidates.end(), more.begin(), more.end());
  }
  // Ranked twice a candidate would be its own runner-up.
  if (const std::string* twice = FirstRepeated(candidates)) {
    return absl::InvalidArgumentError(
        absl::StrCat("plan: candidate '", *twice, "' is given twice"));
  }
  return candidates;
}

// A search can simulate dozens of node counts (times each fit with
// --spread): on a terminal each trial is shown as it ends, on stderr, so
// that a long one is seen to progress. Not in a pipe or a log.
std::function<void(size_t, const planning::NodeTrial&)> TrialProgress(size_t num_candidates) {
  if (!isatty(STDERR_FILENO)) return nullptr;
  return [num_candidates](size_t candidate, const planning::NodeTrial& t) {
    std::string verdict = t.meets ? "meets the SLOs" : "fails";
    if (!t.meets) {
      for (const planning::SloCheck& check : t.checks) {
        if (!check.ok()) {
          absl::StrAppend(&verdict, ": ", planning::DescribeCheck(check));
          break;
        }
      }
      if (t.figures.failed > 0) absl::StrAppend(&verdict, ": requests fail");
    }
    std::fprintf(stderr, "plan: candidate %zu of %zu, %d node(s): %s\n", candidate + 1,
                 num_candidates, t.nodes, verdict.c_str());
    std::fflush(stderr);
  };
}

// The search's own flags: --max-nodes, --threads, --slowdown, --balancer.
absl::StatusOr<planning::PlanOptions> SearchOptionsFromArgs(const CliArgs& args) {
  planning::PlanOptions options;
  ASSIGN_OR_RETURN(options.max_nodes, IntFlag(args, "--max-nodes", 64, 1));
  // The search doubles the node count and simulates each trial; a bound
  // past ten thousand nodes of 8 GPUs is a typo (2^31 overflowed the doubling).
  constexpr int kMaxPlanNodes = 10000;
  if (options.max_nodes > kMaxPlanNodes) {
    return absl::InvalidArgumentError(
        absl::StrCat("--max-nodes: at most ", kMaxPlanNodes, " nodes, got ", options.max_nodes));
  }
  ASSIGN_OR_RETURN(options.threads, ThreadsFlag(args));
  if (args.Has("--slowdown") && !ParseDecimal(args.Get("--slowdown"), &options.slowdown)) {
    return absl::InvalidArgumentError(
        absl::StrCat("--slowdown: expected a fraction (0.2 = every step 20 % slower), got \"",
                     args.Get("--slowdown"), "\""));
  }
  const std::string balancer = args.Get("--balancer", "round-robin");
  if (balancer == "least-outstanding") {
    options.balancer = serving::ReplicaBalancer::kLeastOutstanding;
  } else if (balancer != "round-robin") {
    return absl::InvalidArgumentError(absl::StrCat(
        "--balancer: expected round-robin or least-outstanding, got \"", balancer, "\""));
  }
  return options;
}

}  // namespace

int SweepCommand(const CliArgs& args) {
  if (!args.Has("--out-dir")) {
    return ReportError(absl::InvalidArgumentError("sweep: --out-dir DIR is required"));
  }
  const std::string dir = args.Get("--out-dir");
  if (args.command == "sweep-merge" || args.Has("--merge")) {
    if (absl::Status s = CheckMergeTakesNoOtherFlag(args); !s.ok()) return ReportError(s);
    return MergeSweep(dir);
  }
  // The engine axis's commands are the serve commands: a --serve beside them
  // would be run nowhere.
  if (args.Has("--serve") == args.Has("--engine-axis") || !args.Has("--bench")) {
    return ReportError(absl::InvalidArgumentError(
        args.Has("--serve") && args.Has("--engine-axis")
            ? "sweep: --serve does not go with --engine-axis, whose commands are the "
              "serve commands"
            : "sweep: --bench CMD and one of --serve CMD or --engine-axis 'CMD1|...' "
              "are required"));
  }
  const std::string base_serve = args.Has("--serve") ? args.Get("--serve") : "";
  absl::StatusOr<std::vector<planning::Axis>> axes = AxesFromArgs(args);
  if (!axes.ok()) return ReportError(axes.status());
  absl::StatusOr<int> threads = ThreadsFlag(args);
  if (!threads.ok()) return ReportError(threads.status());
  std::optional<planning::Shard> shard;
  if (args.Has("--shard")) {
    absl::StatusOr<planning::Shard> s = planning::ParseShard(args.Get("--shard"));
    if (!s.ok()) return ReportError(s.status());
    shard = *s;
  }
  absl::StatusOr<std::vector<planning::SweepPoint>> points =
      planning::ExpandGrid(base_serve, args.Get("--bench"), *axes);
  if (!points.ok()) return ReportError(points.status());
  planning::SweepTable table;
  for (const planning::Axis& a : *axes) table.axis_names.push_back(a.name);

  absl::StatusOr<runner::PredictionContext> context = ContextFromArgs(args);
  if (!context.ok()) return ReportError(context.status());
  absl::StatusOr<scenarios::EnvVars> env = EnvFromArgs(args);
  if (!env.ok()) return ReportError(env.status());
  absl::StatusOr<std::optional<SpreadFolds>> folds = SpreadFoldsFromArgs(args, *context);
  if (!folds.ok()) return ReportError(folds.status());
  if (absl::Status s = CheckSweepWritesNoInput(dir, *context, *folds, *points, shard); !s.ok()) {
    return ReportError(s);
  }
  absl::StatusOr<std::optional<SpreadFolds>> evidence_folds = HeldOutFolds(*folds, *context);
  if (!evidence_folds.ok()) return ReportError(evidence_folds.status());
  if (*folds) *context = SpreadCentralContext(*context, **folds);
  if (shard) {
    table.sweep_id = planning::SweepId(base_serve, args.Get("--bench"), *axes,
                                       ShardSettings(args, *context, *folds));
    table.sweep_points = static_cast<int64_t>(points->size());
    *points = planning::SelectShard(*points, *shard);
  }
  planning::SpreadEvaluator spread;
  if (*folds) {
    for (const std::string& key : fit::SpreadFigures()) table.spread_figures.push_back(key);
    spread = SpreadEvaluatorOf(*context, **folds);
  }
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) {
    return ReportError(absl::InvalidArgumentError(absl::StrCat("--out-dir: cannot create ", dir)));
  }
  table.rows = planning::RunPoints(*points, planning::PredictEvaluator(*context, *env, spread),
                                   *threads, ProgressBarOnTerminal());
  if (shard) {
    const std::string path = absl::StrCat(dir, "/", planning::ShardFileName(*shard));
    absl::Status s = WriteStringToFile(path, planning::FormatSweepCsv(table));
    if (!s.ok()) return ReportError(s);
    return PrintSummary(table, path, HeldOutLines(*context, *env, *evidence_folds, table.rows));
  }
  absl::Status s = WriteSweepOutputs(dir, table);
  if (!s.ok()) return ReportError(s);
  return PrintSummary(table, absl::StrCat(dir, "/{sweep.csv,sweep.json,throughput.svg,pareto.svg}"),
                      HeldOutLines(*context, *env, *evidence_folds, table.rows));
}

int PlanCommand(const CliArgs& args) {
  if (args.Has("--bench") == args.Has("--trace")) {
    return ReportError(
        absl::InvalidArgumentError("plan: give exactly one workload, --bench CMD or --trace FILE"));
  }
  std::string bench = args.Get("--bench");
  std::string workload_note;
  if (args.Has("--trace")) {
    absl::StatusOr<std::string> b = BenchCommandOfTrace(args, workload_note);
    if (!b.ok()) return ReportError(b.status());
    bench = *b;
  } else if (args.Has("--rate-scale") || args.Has("--num-prompts")) {
    return ReportError(absl::InvalidArgumentError(
        "plan: --rate-scale and --num-prompts go with --trace; with --bench put "
        "--request-rate and --num-prompts in the bench command"));
  }
  absl::StatusOr<planning::Slo> slo = SloFromArgs(args);
  if (!slo.ok()) return ReportError(slo.status());
  absl::StatusOr<std::vector<std::string>> candidates = CandidatesFromArgs(args);
  if (!candidates.ok()) return ReportError(candidates.status());
  absl::StatusOr<planning::PlanOptions> searched = SearchOptionsFromArgs(args);
  if (!searched.ok()) return ReportError(searched.status());
  planning::PlanOptions options = *std::move(searched);
  options.workload_note = workload_note;
  options.on_trial = TrialProgress(candidates->size());
  absl::StatusOr<scenarios::EnvVars> env = EnvFromArgs(args);
  if (!env.ok()) return ReportError(env.status());
  options.env = *env;
  absl::StatusOr<runner::PredictionContext> context = ContextFromArgs(args);
  if (!context.ok()) return ReportError(context.status());
  options.context_summary = runner::ContextSummary(*context);
  absl::StatusOr<std::optional<SpreadFolds>> spread = SpreadFoldsFromArgs(args, *context);
  if (!spread.ok()) return ReportError(spread.status());
  if (*spread) {
    // Every trial runs with each fit of the fold file (its fit on every run
    // among them), which the report names.
    options.spread_fits = &(*spread)->fits;
    options.spread_source = (*spread)->source;
    options.context_summary = runner::ContextSummary(SpreadCentralContext(*context, **spread));
  }
  absl::StatusOr<planning::PlanResult> result =
      planning::Plan(*context, bench, *candidates, *slo, options);
  if (!result.ok()) return ReportError(result.status());
  // The trials' central parameters: the fold file's fit on every run with
  // --spread, the parameters file's without.
  const runner::PredictionContext central =
      *spread ? SpreadCentralContext(*context, **spread) : *context;
  absl::StatusOr<std::optional<SpreadFolds>> evidence = HeldOutFolds(*spread, *context);
  if (!evidence.ok()) return ReportError(evidence.status());
  for (planning::CandidateResult& c : result->ranked) {
    if (c.layout_family.empty()) continue;
    if (std::optional<fit::HeldOutEvidence> e =
            HeldOutEvidenceFor(central, *evidence, c.engine, c.layout_family)) {
      c.held_out_evidence = fit::FormatHeldOutEvidence(*e, (*evidence)->source);
    }
  }
  const std::string report = planning::FormatPlanReport(*result, *slo, options);
  std::fwrite(report.data(), 1, report.size(), stdout);
  std::fflush(stdout);
  if (absl::Status s = planning::CheckCandidates(*result); !s.ok()) {
    return ReportError(s);
  }
  // An answer, but not a plan: a script sizing a fleet must not read it as one.
  if (result->ranked.empty() || result->ranked.front().nodes == 0) {
    std::fprintf(stderr,
                 "servesim: plan: no candidate meets every SLO at the node counts tried (up to "
                 "--max-nodes %d; the report lists them)\n",
                 options.max_nodes);
    return kExitNoPlan;
  }
  return 0;
}

}  // namespace servesim::cli
