// `servesim validate` and `servesim fit`: predicted against live runs, and the
// fit of the few parameters no kernel measurement gives.
#include <cstdio>
#include <ctime>
#include <fstream>
#include <thread>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "google/protobuf/text_format.h"
#include "sim/cli/commands.h"
#include "sim/fit/engine_fit.h"
#include "sim/fit/validation.h"
#include "sim/planning/parallel_for.h"

namespace servesim::cli {
namespace {

absl::StatusOr<std::vector<fit::LiveRun>> RunsFromArgs(const CliArgs& args) {
  if (!args.Has("--runs")) {
    return absl::InvalidArgumentError("--runs PATH (a results CSV, a --save-result JSON or console log with its .cmd, or a directory of them) is required");
  }
  return fit::ReadLiveRunsFrom(args.Get("--runs"));
}

std::string UtcDate() {
  const std::time_t now = std::time(nullptr);
  char buf[32];
  std::strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
  return buf;
}

const std::vector<std::pair<std::string, scenarios::EngineKind>>& Engines() {
  static const auto* kEngines = new std::vector<std::pair<std::string, scenarios::EngineKind>>{
      {"vllm", scenarios::VLLM}, {"sglang", scenarios::SGLANG}, {"trtllm", scenarios::TRTLLM}};
  return *kEngines;
}

}  // namespace

int ValidateCommand(const CliArgs& args) {
  absl::StatusOr<runner::PredictionContext> context = ContextFromArgs(args);
  if (!context.ok()) return ReportError(context.status());
  absl::StatusOr<std::vector<fit::LiveRun>> runs = RunsFromArgs(args);
  if (!runs.ok()) return ReportError(runs.status());
  std::vector<fit::CaseResult> cases;
  for (const fit::LiveRun& run : *runs) {
    absl::StatusOr<fit::CaseResult> c = fit::ValidateRun(*context, run);
    if (!c.ok()) return ReportError(c.status());
    cases.push_back(std::move(*c));
  }
  const fit::ValidationReport report = fit::Summarize(std::move(cases));
  const std::string out = args.Has("--json") ? fit::FormatValidationJson(report)
                                             : fit::FormatValidationTable(report);
  std::fputs(out.c_str(), stdout);
  return 0;
}

int FitCommand(const CliArgs& args) {
  absl::StatusOr<runner::PredictionContext> context = ContextFromArgs(args);
  if (!context.ok()) return ReportError(context.status());
  absl::StatusOr<std::vector<fit::LiveRun>> runs = RunsFromArgs(args);
  if (!runs.ok()) return ReportError(runs.status());
  if (!args.Has("--out") && !args.Has("--leave-one-out")) {
    return ReportError(absl::InvalidArgumentError("servesim fit: --out PARAMS is required"));
  }
  fit::EngineFitOptions options;
  if (args.Has("--max-evaluations") &&
      !absl::SimpleAtoi(args.Get("--max-evaluations"), &options.max_evaluations)) {
    return ReportError(absl::InvalidArgumentError("--max-evaluations: expected an integer"));
  }
  int threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  if (args.Has("--threads") && (!absl::SimpleAtoi(args.Get("--threads"), &threads) || threads < 1)) {
    return ReportError(absl::InvalidArgumentError("--threads: expected an integer >= 1"));
  }
  std::vector<std::string> wanted = {"vllm", "sglang", "trtllm"};
  if (args.Has("--engines")) wanted = absl::StrSplit(args.Get("--engines"), ',');

  scenarios::FittedParams params;
  params.set_schema_version(1);
  params.set_generated_by(absl::StrCat("servesim fit --runs ", args.Get("--runs")));
  params.set_generated_at(UtcDate());
  params.set_profile(runner::RepoRelative(*context, context->paths.profile));
  std::vector<fit::CaseResult> held_out;
  for (const auto& [name, kind] : Engines()) {
    if (std::find(wanted.begin(), wanted.end(), name) == wanted.end()) continue;
    absl::StatusOr<std::vector<fit::LiveRun>> mine = fit::RunsOfEngine(*context, *runs, kind);
    if (!mine.ok()) return ReportError(mine.status());
    if (mine->empty()) continue;
    std::fprintf(stderr, "fitting %s on %zu runs\n", name.c_str(), mine->size());
    absl::StatusOr<scenarios::EngineParams> fitted = fit::FitEngine(*context, *mine, kind, options);
    if (!fitted.ok()) return ReportError(fitted.status());
    *params.add_engines() = *fitted;
    if (!args.Has("--leave-one-out")) continue;
    // Each fold is an independent fit: run them on every core, results in
    // case order whatever the thread count.
    std::vector<absl::StatusOr<fit::CaseResult>> folds(mine->size(),
                                                       absl::UnknownError("not run"));
    planning::ParallelFor(mine->size(), threads, [&](size_t i) {
      std::vector<fit::LiveRun> rest;
      for (size_t j = 0; j < mine->size(); ++j) {
        if (j != i) rest.push_back((*mine)[j]);
      }
      absl::StatusOr<scenarios::EngineParams> without =
          rest.empty() ? fitted : fit::FitEngine(*context, rest, kind, options);
      folds[i] = without.ok()
                     ? fit::ValidateRun(fit::WithEngineParams(*context, *without), (*mine)[i])
                     : absl::StatusOr<fit::CaseResult>(without.status());
    });
    for (auto& c : folds) {
      if (!c.ok()) return ReportError(c.status());
      held_out.push_back(std::move(*c));
    }
  }
  if (args.Has("--out")) {
    std::string text;
    google::protobuf::TextFormat::PrintToString(params, &text);
    std::ofstream f(args.Get("--out"));
    f << "# Fitted by servesim fit; do not edit by hand (docs/fitting.md).\n" << text;
    if (!f) {
      return ReportError(absl::InvalidArgumentError(absl::StrCat("--out: cannot write ", args.Get("--out"))));
    }
  }
  if (args.Has("--leave-one-out")) {
    std::fputs("leave-one-out (each case predicted by parameters fitted without it):\n", stdout);
    std::fputs(fit::FormatValidationTable(fit::Summarize(std::move(held_out))).c_str(), stdout);
  } else {
    std::string text;
    google::protobuf::TextFormat::PrintToString(params, &text);
    std::fputs(text.c_str(), stdout);
  }
  return 0;
}

}  // namespace servesim::cli
