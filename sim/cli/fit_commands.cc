// `servesim validate` and `servesim fit`: predicted against live runs, and the
// fit of the few parameters no kernel measurement gives.
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <thread>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "base/status_macros.h"
#include "base/write_file.h"
#include "google/protobuf/text_format.h"
#include "sim/cli/commands.h"
#include "sim/fit/engine_fit.h"
#include "sim/fit/held_out_evidence.h"
#include "sim/fit/validation.h"
#include "sim/planning/parallel_for.h"
#include "sim/workload/bench_config.h"

namespace servesim::cli {
namespace {

// The runs of --runs, each measuring at least one of `figures` (validate's
// compared figures, fit's fitted ones).
absl::StatusOr<std::vector<fit::LiveRun>> RunsFromArgs(const CliArgs& args,
                                                       const std::vector<std::string>& figures) {
  // Each run's environment is its own (the CSV's env column, a .cmd's
  // exports): one given here would be ignored, so it is refused.
  if (!args.env.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat(args.command,
                     ": --env does not go with --runs: each run's environment is "
                     "its own (the CSV's env column, a .cmd file's export lines)"));
  }
  if (!args.Has("--runs")) {
    return absl::InvalidArgumentError("--runs PATH (a results CSV, a --save-result JSON or console log with its .cmd, or a directory of them) is required");
  }
  ASSIGN_OR_RETURN(std::vector<fit::LiveRun> runs, fit::ReadLiveRunsFrom(args.Get("--runs")));
  // A run with none of the compared figures (a misnamed or missing column)
  // would give a fit of its starting values and a validation of no errors.
  for (const fit::LiveRun& run : runs) {
    if (run.expected_failure) continue;
    bool compared = false;
    for (const std::string& key : figures) compared |= run.measured.count(key) > 0;
    if (!compared) {
      return absl::InvalidArgumentError(absl::StrCat(
          "--runs: ", run.source, ": case ", run.name, ": none of the figures ", args.command,
          " uses (", absl::StrJoin(figures, ", "), ") is measured: nothing to compare"));
    }
  }
  return runs;
}

// The fit's time, or SOURCE_DATE_EPOCH's (the reproducible-builds
// convention) where it is set, so that a refit can be byte-identical.
absl::StatusOr<std::string> UtcDate() {
  std::time_t now = std::time(nullptr);
  if (const char* fixed = std::getenv("SOURCE_DATE_EPOCH"); fixed != nullptr) {
    // Seconds since 1970 as digits, up to the year 9999.
    int64_t epoch = 0;
    const std::string text(fixed);
    if (text.empty() || text.find_first_not_of("0123456789") != std::string::npos ||
        !absl::SimpleAtoi(text, &epoch) || epoch > 253402300799) {
      return absl::InvalidArgumentError(absl::StrCat(
          "SOURCE_DATE_EPOCH: expected seconds since 1970 (digits, at most 253402300799), got \"",
          text, "\""));
    }
    now = static_cast<std::time_t>(epoch);
  }
  std::tm utc{};
  if (gmtime_r(&now, &utc) == nullptr) {
    return absl::InvalidArgumentError("generated_at: the time has no UTC date");
  }
  char buf[32];
  std::strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%SZ", &utc);
  return std::string(buf);
}

// A file `flag` may create or replace: its directory exists, and it is not
// a directory itself.
absl::Status CheckWritableFilePath(const std::string& flag, const std::string& path) {
  const std::filesystem::path out(path);
  std::error_code error;
  const std::filesystem::path dir = out.has_parent_path() ? out.parent_path() : ".";
  if (out.filename().empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat(flag, ": ", path, " names a directory, not a file"));
  }
  if (!std::filesystem::is_directory(dir, error)) {
    return absl::InvalidArgumentError(absl::StrCat(flag, ": cannot write ", path, ": ",
                                                   dir.string(), " is not a directory"));
  }
  if (std::filesystem::is_directory(out, error)) {
    return absl::InvalidArgumentError(absl::StrCat(flag, ": ", path, " is a directory"));
  }
  return absl::OkStatus();
}

// Text of `message` under the header every file `servesim fit` writes.
absl::StatusOr<std::string> FittedFileText(const google::protobuf::Message& message) {
  std::string text;
  if (!google::protobuf::TextFormat::PrintToString(message, &text)) {
    return absl::InternalError("fit: the parameters could not be printed");
  }
  return absl::StrCat("# Fitted by servesim fit; do not edit by hand (docs/fitting.md).\n", text);
}

const std::vector<std::pair<std::string, scenarios::EngineKind>>& Engines() {
  static const auto* kEngines = new std::vector<std::pair<std::string, scenarios::EngineKind>>{
      {"vllm", scenarios::VLLM}, {"sglang", scenarios::SGLANG}, {"trtllm", scenarios::TRTLLM}};
  return *kEngines;
}

struct EngineRuns {
  scenarios::EngineKind kind;
  std::vector<fit::LiveRun> runs;
};

struct FitResults {
  std::vector<scenarios::EngineParams> engines;  // fitted on all runs, in `engines` order
  std::vector<fit::CaseResult> held_out;         // leave-one-out, in engine and run order
  // Each engine's fit on every run, then its folds in run order (held_out's).
  scenarios::FoldFits folds;
};

// Without its lone run an engine has nothing to fit on: the row could only
// be predicted by parameters fitted on it, which is no held-out test.
absl::Status CheckEachCanBeHeldOut(const std::vector<EngineRuns>& engines) {
  for (const EngineRuns& e : engines) {
    if (e.runs.size() < 2) {
      return absl::InvalidArgumentError(absl::StrCat(
          "--leave-one-out: ", absl::AsciiStrToLower(scenarios::EngineKind_Name(e.kind)),
          " has one run (", e.runs.front().name,
          "): nothing is left to fit it on; add runs of it, or leave it out of --engines"));
    }
  }
  return absl::OkStatus();
}

// Every fit is independent: each engine's fit on all its runs and, with
// `leave_one_out`, each fold's fit without one run (the caller has checked
// CheckEachCanBeHeldOut). They share the cores: fewer fits than threads
// split the rest among their searches. Results come back in engine and run
// order, and each fit is the same, whatever the thread count.
absl::StatusOr<FitResults> FitAll(const runner::PredictionContext& context,
                                  const std::vector<EngineRuns>& engines, bool leave_one_out,
                                  const fit::EngineFitOptions& options, int threads) {
  struct FitTask {
    size_t engine;
    int held_out;  // -1: the fit on every run
  };
  std::vector<FitTask> tasks;
  for (size_t e = 0; e < engines.size(); ++e) tasks.push_back({e, -1});
  if (leave_one_out) {
    for (size_t e = 0; e < engines.size(); ++e) {
      for (size_t i = 0; i < engines[e].runs.size(); ++i) tasks.push_back({e, static_cast<int>(i)});
    }
  }
  std::vector<absl::StatusOr<scenarios::EngineParams>> fits(tasks.size(),
                                                            absl::UnknownError("not run"));
  // Threads beyond one per fit are split among the fits, the first ones
  // taking one more each where they do not divide evenly.
  const int n = static_cast<int>(tasks.size());
  auto threads_of = [&](size_t t) {
    return std::max(1, threads / n + (static_cast<int>(t) < threads % n ? 1 : 0));
  };
  planning::ParallelFor(tasks.size(), threads, [&](size_t t) {
    const EngineRuns& e = engines[tasks[t].engine];
    std::vector<fit::LiveRun> on;
    for (size_t j = 0; j < e.runs.size(); ++j) {
      if (static_cast<int>(j) != tasks[t].held_out) on.push_back(e.runs[j]);
    }
    fit::EngineFitOptions mine = options;
    mine.threads = threads_of(t);
    fits[t] = fit::FitEngine(context, on, e.kind, mine);
  });
  FitResults out;
  for (const auto& f : fits) {
    if (!f.ok()) return f.status();
  }
  for (size_t e = 0; e < engines.size(); ++e) out.engines.push_back(*fits[e]);
  if (!leave_one_out) return out;
  for (size_t e = 0; e < engines.size(); ++e) {
    *out.folds.add_folds()->mutable_params() = *fits[e];
    for (size_t i = 0; i < engines[e].runs.size(); ++i) {
      const scenarios::EngineParams* without = &*fits[e];
      for (size_t t = engines.size(); t < tasks.size(); ++t) {
        if (tasks[t].engine == e && tasks[t].held_out == static_cast<int>(i)) without = &*fits[t];
      }
      ASSIGN_OR_RETURN(
          fit::CaseResult c,
          fit::ValidateRun(runner::WithEngineParams(context, *without), engines[e].runs[i]));
      scenarios::FoldFit* fold = out.folds.add_folds();
      fold->set_held_out(engines[e].runs[i].name);
      *fold->mutable_params() = *without;
      *fold->mutable_held_out_result() = fit::HeldOutResultOf(c);
      out.held_out.push_back(std::move(c));
    }
  }
  return out;
}

// --out and --folds-out: each given where it belongs, writable, and no file
// the fit reads. A fit takes minutes: a file that cannot be written is
// refused first, and one that would be written over an input would destroy
// it. --out may rewrite --params in place (a refit of some engines keeps the
// others).
absl::Status CheckFitOutputs(const CliArgs& args, const runner::PredictionContext& context,
                             const std::vector<fit::LiveRun>& runs) {
  if (!args.Has("--out") && !args.Has("--leave-one-out")) {
    return absl::InvalidArgumentError("fit: --out PARAMS is required");
  }
  if (args.Has("--folds-out") && !args.Has("--leave-one-out")) {
    return absl::InvalidArgumentError(
        "--folds-out: the folds are the leave-one-out's fits: add --leave-one-out");
  }
  if (args.Has("--out") && args.Has("--folds-out") &&
      SameFile(args.Get("--out"), args.Get("--folds-out"))) {
    return absl::InvalidArgumentError(
        absl::StrCat("--out and --folds-out both write ", args.Get("--out")));
  }
  std::vector<NamedPath> run_files = {{"--runs", args.Get("--runs")}};
  for (const fit::LiveRun& run : runs) {
    run_files.push_back({"--runs", run.source});
    if (!absl::EndsWith(run.source, ".csv")) {
      run_files.push_back({"--runs", fit::CommandsPathOf(run.source)});
    }
    if (absl::StatusOr<workload::BenchConfig> b = workload::ParseBenchCommand(run.bench_command);
        b.ok()) {
      run_files.push_back({"--runs (a run's --dataset-path)", b->dataset_path});
    }
  }
  for (const std::string flag : {"--out", "--folds-out"}) {
    if (!args.Has(flag)) continue;
    std::vector<NamedPath> inputs = run_files;
    for (NamedPath& in : ContextInputs(context)) {
      if (flag == "--out" && in.flag == "--params") continue;
      inputs.push_back(std::move(in));
    }
    RETURN_IF_ERROR(CheckOutputIsNoInput(flag, args.Get(flag), inputs));
    // A new results file in a --runs directory would be read as runs next time.
    const std::filesystem::path out(args.Get(flag));
    std::error_code ec;
    if (std::filesystem::is_directory(args.Get("--runs"), ec) &&
        fit::ReadFromRunsDirectory(args.Get(flag)) &&
        SameFile(out.has_parent_path() ? out.parent_path().string() : ".", args.Get("--runs"))) {
      return absl::InvalidArgumentError(absl::StrCat(flag, ": ", args.Get(flag),
                                                     " would be read as a run from the --runs "
                                                     "directory ",
                                                     args.Get("--runs")));
    }
    RETURN_IF_ERROR(CheckWritableFilePath(flag, args.Get(flag)));
  }
  return absl::OkStatus();
}

// --engines: the engines to fit, each known and named once (all three when
// not given).
absl::StatusOr<std::vector<std::string>> EnginesToFit(const CliArgs& args) {
  std::vector<std::string> wanted = {"vllm", "sglang", "trtllm"};
  if (args.Has("--engines")) wanted = absl::StrSplit(args.Get("--engines"), ',');
  if (const std::string* twice = FirstRepeated(wanted)) {
    return absl::InvalidArgumentError(absl::StrCat("--engines: \"", *twice, "\" is named twice"));
  }
  for (const std::string& name : wanted) {
    if (std::none_of(Engines().begin(), Engines().end(),
                     [&](const auto& e) { return e.first == name; })) {
      return absl::InvalidArgumentError(
          absl::StrCat("--engines: unknown engine \"", name, "\" (known: vllm, sglang, trtllm)"));
    }
  }
  return wanted;
}

// A run that ran live but that servesim refuses (or does not model) would
// score the refusal's loss at every point, and the fit would return its
// start: the results file and servesim disagree, so the case is named. Its
// engine's costs do not decide a refusal; the starting file may have no
// block for the engine being fitted.
absl::Status CheckEveryRunIsModelled(const runner::PredictionContext& context,
                                     const std::vector<EngineRuns>& engines) {
  for (const EngineRuns& e : engines) {
    scenarios::EngineParams bare;
    bare.set_engine(e.kind);
    const runner::PredictionContext unfitted = runner::WithEngineParams(context, bare);
    for (const fit::LiveRun& run : e.runs) {
      ASSIGN_OR_RETURN(fit::CaseResult c, fit::ValidateRun(unfitted, run));
      if (c.refused || c.not_modelled) {
        return absl::InvalidArgumentError(absl::StrCat(
            "--runs: case ", run.name, " ran live, but servesim ",
            c.refused ? "refuses" : "does not model", " its configuration: ", c.refusal));
      }
    }
  }
  return absl::OkStatus();
}

// The leave-one-out's report on stdout: the held-out table, each fit's
// parameters and each search's reach.
absl::Status PrintLeaveOneOut(const runner::PredictionContext& context,
                              const std::vector<fit::LiveRun>& runs,
                              std::vector<fit::CaseResult> held_out,
                              const scenarios::FoldFits& folds) {
  std::fputs("leave-one-out (each case predicted by parameters fitted without it):\n", stdout);
  std::fputs(fit::FormatValidationTable(fit::Summarize(std::move(held_out)),
                                        /*completed_line=*/false)
                 .c_str(),
             stdout);
  std::fputs(
      "\nparameters of each fit (the fit on every run, then each fold without its case; "
      "a backend factor a fold does not list is at 1 in its prediction):\n",
      stdout);
  std::fputs(fit::FormatFoldParameters(folds).c_str(), stdout);
  ASSIGN_OR_RETURN(std::string reach, fit::FormatSearchReach(context, runs, folds));
  std::fputs(
      "\nthe searches' reach (each fit's objective on its own runs, at its own point and "
      "at the lowest of its engine's other fits' points):\n",
      stdout);
  std::fputs(reach.c_str(), stdout);
  return absl::OkStatus();
}

}  // namespace

int ValidateCommand(const CliArgs& args) {
  absl::StatusOr<runner::PredictionContext> context = ContextFromArgs(args);
  if (!context.ok()) return ReportError(context.status());
  absl::StatusOr<std::vector<fit::LiveRun>> runs = RunsFromArgs(args, fit::ComparedMetrics());
  if (!runs.ok()) return ReportError(runs.status());
  std::vector<fit::CaseResult> cases;
  for (const fit::LiveRun& run : *runs) {
    absl::StatusOr<fit::CaseResult> c = fit::ValidateRun(*context, run);
    if (!c.ok()) return ReportError(c.status());
    cases.push_back(std::move(*c));
  }
  const fit::ValidationReport report = fit::Summarize(std::move(cases));
  const std::string out =
      args.Has("--json") ? fit::FormatValidationJson(report) : fit::FormatValidationTable(report);
  std::fputs(out.c_str(), stdout);
  return 0;
}

int FitCommand(const CliArgs& args) {
  absl::StatusOr<runner::PredictionContext> context = ContextFromArgs(args);
  if (!context.ok()) return ReportError(context.status());
  absl::StatusOr<std::vector<fit::LiveRun>> runs = RunsFromArgs(args, fit::AllFittedMetrics());
  if (!runs.ok()) return ReportError(runs.status());
  if (absl::Status s = CheckFitOutputs(args, *context, *runs); !s.ok()) return ReportError(s);
  // Before the fits start: a run that ValidateRun would refuse surfaces only
  // when the optimiser first reaches it, after the other engines' fits.
  for (const fit::LiveRun& run : *runs) {
    if (absl::Status s = fit::CheckRunWithinContext(*context, run); !s.ok()) {
      return ReportError(s);
    }
  }
  fit::EngineFitOptions options;
  absl::StatusOr<int> max_evaluations =
      IntFlag(args, "--max-evaluations", options.max_evaluations, 1);
  if (!max_evaluations.ok()) return ReportError(max_evaluations.status());
  // The screen holds a 32nd of the budget as points before it evaluates
  // them: 2^31 would take 4 GB and never end. The committed fit takes 2400,
  // about 12 minutes on two cores; a million is weeks, past any real fit.
  constexpr int kMaxEvaluations = 1000000;
  if (*max_evaluations > kMaxEvaluations) {
    return ReportError(absl::InvalidArgumentError(absl::StrCat(
        "--max-evaluations: at most ", kMaxEvaluations, " per engine, got ", *max_evaluations)));
  }
  options.max_evaluations = *max_evaluations;
  absl::StatusOr<int> parsed_threads = ThreadsFlag(args);
  if (!parsed_threads.ok()) return ReportError(parsed_threads.status());
  const int threads = *parsed_threads;
  absl::StatusOr<std::vector<std::string>> wanted = EnginesToFit(args);
  if (!wanted.ok()) return ReportError(wanted.status());

  scenarios::FittedParams params;
  params.set_schema_version(runner::kFittedParamsSchemaVersion);
  // The command that reproduces the file: the flags that decide its values.
  params.set_generated_by(absl::StrCat(
      "servesim fit --runs ", args.Get("--runs"), " --params ",
      context->paths.params == "none" ? "none" : runner::RepoRelative(*context, context->paths.params),
      " --max-evaluations ", options.max_evaluations,
      args.Has("--engines") ? absl::StrCat(" --engines ", args.Get("--engines")) : ""));
  absl::StatusOr<std::string> date = UtcDate();
  if (!date.ok()) return ReportError(date.status());
  params.set_generated_at(*date);
  params.set_profile(runner::RepoRelative(*context, context->paths.profile));
  std::vector<EngineRuns> engines;
  for (const auto& [name, kind] : Engines()) {
    if (std::find(wanted->begin(), wanted->end(), name) == wanted->end()) continue;
    absl::StatusOr<std::vector<fit::LiveRun>> mine = fit::RunsOfEngine(*context, *runs, kind);
    if (!mine.ok()) return ReportError(mine.status());
    if (mine->empty()) continue;
    engines.push_back({kind, std::move(*mine)});
  }
  if (engines.empty()) {
    return ReportError(absl::InvalidArgumentError(
        absl::StrCat("--runs: ", args.Get("--runs"), " has no results of ",
                     absl::StrJoin(*wanted, ", "), " to fit (expected failures are not fitted)")));
  }
  // Refused before the progress lines, so that stderr holds the one error.
  if (args.Has("--leave-one-out")) {
    if (absl::Status s = CheckEachCanBeHeldOut(engines); !s.ok()) return ReportError(s);
  }
  if (absl::Status s = CheckEveryRunIsModelled(*context, engines); !s.ok()) return ReportError(s);
  // The leave-one-out's table starts with them (stdout); a plain fit's
  // stdout is the parameters file, so there they show on a terminal only.
  for (const EngineRuns& e : engines) {
    const std::string line = absl::StrFormat(
        "fitting %s on %zu run%s\n", absl::AsciiStrToLower(scenarios::EngineKind_Name(e.kind)),
        e.runs.size(), e.runs.size() == 1 ? "" : "s");
    if (args.Has("--leave-one-out")) {
      std::fputs(line.c_str(), stdout);
    } else if (isatty(STDERR_FILENO)) {
      std::fputs(line.c_str(), stderr);
    }
  }
  std::fflush(stdout);
  absl::StatusOr<FitResults> fitted =
      FitAll(*context, engines, args.Has("--leave-one-out"), options, threads);
  if (!fitted.ok()) return ReportError(fitted.status());
  for (const scenarios::EngineParams& e : fitted->engines) *params.add_engines() = e;
  // The starting file's other engines are kept: a fit of one engine leaves
  // the file whole for the rest.
  for (const scenarios::EngineParams& e : context->params.engines()) {
    if (runner::FindEngineParams(params, e.engine()) == nullptr) *params.add_engines() = e;
  }
  std::vector<fit::CaseResult> held_out = std::move(fitted->held_out);
  scenarios::FoldFits& folds = fitted->folds;
  folds.set_schema_version(runner::kFittedParamsSchemaVersion);
  folds.set_generated_by(absl::StrCat(params.generated_by(), " --leave-one-out"));
  folds.set_generated_at(params.generated_at());
  folds.set_profile(params.profile());
  const std::pair<const char*, const google::protobuf::Message*> outputs[] = {
      {"--out", &params}, {"--folds-out", &folds}};
  for (const auto& [flag, message] : outputs) {
    if (!args.Has(flag)) continue;
    absl::StatusOr<std::string> text = FittedFileText(*message);
    if (!text.ok()) return ReportError(text.status());
    if (absl::Status s = WriteStringToFile(args.Get(flag), *text); !s.ok()) {
      return ReportError(absl::InvalidArgumentError(absl::StrCat(flag, ": ", s.message())));
    }
  }
  if (args.Has("--leave-one-out")) {
    if (absl::Status s = PrintLeaveOneOut(*context, *runs, std::move(held_out), folds); !s.ok()) {
      return ReportError(s);
    }
  } else {
    std::string text;
    google::protobuf::TextFormat::PrintToString(params, &text);
    std::fputs(text.c_str(), stdout);
  }
  return 0;
}

}  // namespace servesim::cli
