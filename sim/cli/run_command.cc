// `servesim run`: one prediction, printed as `vllm bench serve` prints it.
#include <cmath>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <optional>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/decimal.h"
#include "base/status_macros.h"
#include "base/write_file.h"
#include "sim/cli/commands.h"
#include "sim/fit/fold_spread.h"
#include "sim/fit/held_out_evidence.h"
#include "sim/workload/bench_config.h"

namespace servesim::cli {
namespace {

// `--step-log FILE`: one CSV row per iteration and DP rank, for reading a
// prediction's timeline (batch sizes, chunking, queueing) next to its metrics.
std::string FormatStepLog(const std::vector<serving::StepRecord>& steps) {
  std::string out =
      "instance,start_s,duration_ms,rank,decode_seqs,prefill_seqs,prefill_tokens,running,"
      "waiting\n";
  for (const serving::StepRecord& s : steps) {
    for (size_t r = 0; r < s.ranks.size(); ++r) {
      const serving::StepRecord::Rank& k = s.ranks[r];
      absl::StrAppend(&out, s.instance, ",", absl::StrFormat("%.6f", s.start.seconds()), ",",
                      absl::StrFormat("%.3f", s.duration.seconds() * 1e3), ",", r, ",",
                      k.decode_seqs, ",", k.prefill_seqs, ",", k.prefill_tokens, ",", k.running,
                      ",", k.waiting, "\n");
    }
  }
  return out;
}

// --mtp-acceptance: mean accepted draft tokens per step, >= 0.
absl::StatusOr<double> MtpAcceptanceFlag(const CliArgs& args) {
  double v = 0;
  if (!ParseDecimal(args.Get("--mtp-acceptance"), &v) || !std::isfinite(v) || v < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("--mtp-acceptance: expected mean accepted draft tokens per step >= 0, got \"",
                     args.Get("--mtp-acceptance"), "\""));
  }
  return v;
}

// vllm's clock when the run starts: the time in the name of a --save-result
// file without --result-filename.
std::string LocalStartTime() {
  char started[32] = "";
  const std::time_t now = std::time(nullptr);
  std::tm local{};
  localtime_r(&now, &local);
  std::strftime(started, sizeof(started), "%Y%m%d-%H%M%S", &local);
  return started;
}

// An output that names a file the run reads, or another output, would
// destroy the input or keep only the last write. Paths are compared as files
// (./, //, .. and symbolic links resolved), not as spellings. `folds` is the
// fold file the run reads: --folds with --spread, else the repository's,
// read for the held-out line.
absl::Status CheckRunOutputs(const CliArgs& args, const runner::PredictionContext& context,
                             const workload::BenchConfig& bench,
                             const std::optional<SpreadFolds>& folds) {
  const std::pair<std::string, std::string> outputs[] = {
      {"--result-json", args.Get("--result-json")},
      {"--bench --save-result", bench.save_result_path},
      {"--step-log", args.Get("--step-log")}};
  std::vector<NamedPath> inputs = ContextInputs(context);
  inputs.push_back({"--bench --dataset-path", bench.dataset_path});
  inputs.push_back(
      {args.Has("--spread") ? "--folds" : "the held-out error line", folds ? folds->path : ""});
  for (size_t i = 0; i < std::size(outputs); ++i) {
    const auto& [flag, path] = outputs[i];
    if (path.empty()) continue;
    for (size_t j = i + 1; j < std::size(outputs); ++j) {
      if (SameFile(path, outputs[j].second)) {
        return absl::InvalidArgumentError(
            absl::StrCat(flag, " and ", outputs[j].first, " both write ", path));
      }
    }
    RETURN_IF_ERROR(CheckOutputIsNoInput(flag, path, inputs));
  }
  return absl::OkStatus();
}

// Where `vllm bench serve --save-result` writes: --result-filename, else
// vllm's own name from the result JSON's setup and the run's start time.
std::string SaveResultPath(const runner::Prediction& p, const std::string& started) {
  if (!p.bench.save_result_path.empty()) return p.bench.save_result_path;
  metrics::ResultFileNameParts name;
  // vllm's `label or args.backend`: an empty label is no label.
  name.label = p.bench.label.value_or("").empty() ? p.bench.backend : *p.bench.label;
  name.request_rate = p.bench.request_rate;
  name.max_concurrency = p.bench.max_concurrency;
  if (p.bench.ramp_up) {
    name.ramp_up_strategy = std::string(workload::RampUpShapeName(p.bench.ramp_up->shape));
    name.ramp_up_start_rps = p.bench.ramp_up->start_rps;
    name.ramp_up_end_rps = p.bench.ramp_up->end_rps;
  }
  name.model_id = p.model_id;
  name.local_time = started;
  return workload::ResultFilePath(p.bench, metrics::VllmResultFileName(name));
}

// Writes `json` as vllm does: --append-result adds it on a new line of an
// existing file, and json.dump writes no trailing newline.
absl::Status WriteSaveResult(const std::string& path, const std::string& json, bool append) {
  bool has_content = false;
  if (append) {
    std::ifstream existing(path, std::ios::binary | std::ios::ate);
    has_content = existing && existing.tellg() > 0;
  }
  const std::string text =
      absl::StrCat(has_content ? "\n" : "", absl::string_view(json).substr(0, json.size() - 1));
  if (absl::Status s = WriteStringToFile(path, text, append); !s.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("--bench: --save-result: ", s.message()));
  }
  return absl::OkStatus();
}

}  // namespace

int RunCommand(const CliArgs& args) {
  if (!args.Has("--serve") || !args.Has("--bench")) {
    return ReportError(
        absl::InvalidArgumentError("run: --serve CMD and --bench CMD are both required"));
  }
  absl::StatusOr<runner::PredictionContext> context = ContextFromArgs(args);
  if (!context.ok()) return ReportError(context.status());
  absl::StatusOr<scenarios::EnvVars> env = EnvFromArgs(args);
  if (!env.ok()) return ReportError(env.status());

  runner::RunRequest request;
  request.serve_command = args.Get("--serve");
  request.bench_command = args.Get("--bench");
  request.env = *env;
  if (args.Has("--mtp-acceptance")) {
    absl::StatusOr<double> accepted = MtpAcceptanceFlag(args);
    if (!accepted.ok()) return ReportError(accepted.status());
    request.mtp_mean_accepted_drafts = *accepted;
  }
  request.record_steps = args.Has("--step-log");
  // --threads only says how to make the spread: alone it would be ignored.
  if (args.Has("--threads") && !args.Has("--spread")) {
    return ReportError(absl::InvalidArgumentError(
        "--threads goes with --spread (the predictions over the leave-one-out's fits)"));
  }
  absl::StatusOr<std::optional<SpreadFolds>> spread_folds = SpreadFoldsFromArgs(args, *context);
  if (!spread_folds.ok()) return ReportError(spread_folds.status());
  absl::StatusOr<std::optional<SpreadFolds>> evidence_folds = HeldOutFolds(*spread_folds, *context);
  if (!evidence_folds.ok()) return ReportError(evidence_folds.status());
  absl::StatusOr<workload::BenchConfig> bench = workload::ParseBenchCommand(request.bench_command);
  if (!bench.ok()) return ReportError(bench.status());
  const std::string started = LocalStartTime();
  // vllm's os.makedirs of --result-dir, before the run rather than after it.
  if (!bench->save_result_dir.empty()) {
    std::error_code error;
    std::filesystem::create_directories(bench->save_result_dir, error);
    if (error) {
      return ReportError(absl::InvalidArgumentError(
          absl::StrCat("--bench: --result-dir: cannot create ", bench->save_result_dir, ": ",
                       error.message())));
    }
  }
  if (absl::Status s = CheckRunOutputs(args, *context, *bench, *evidence_folds); !s.ok()) {
    return ReportError(s);
  }
  // After the checks above, which name --params and --folds apart.
  if (*spread_folds) *context = SpreadCentralContext(*context, **spread_folds);
  absl::StatusOr<runner::Prediction> p = runner::Predict(*context, request);
  if (!p.ok()) return ReportError(p.status());
  std::string spread_json;  // the result JSON's servesim_spread, with --spread
  if (*spread_folds) {
    // The spread needs no per-iteration record.
    runner::RunRequest plain = request;
    plain.record_steps = false;
    const SpreadFolds& folds = **spread_folds;
    absl::StatusOr<fit::PredictionSpread> spread =
        fit::PredictSpread(*context, plain, p->engine.engine(), folds.fits, folds.threads);
    if (!spread.ok()) return ReportError(spread.status());
    for (std::string& line : fit::FormatSpread(*spread, folds.source)) {
      p->header.push_back(std::move(line));
    }
    spread_json = absl::StrCat(", \"servesim_spread\": ", fit::SpreadJson(*spread, folds.source));
  }
  std::string held_out_json;  // the result JSON's servesim_held_out, where there is one
  if (std::optional<fit::HeldOutEvidence> e = HeldOutEvidenceFor(
          *context, *evidence_folds, p->engine.engine(), p->shape.layout_family)) {
    p->header.push_back(fit::FormatHeldOutEvidence(*e, (*evidence_folds)->source));
    held_out_json = absl::StrCat(", \"servesim_held_out\": ",
                                 fit::HeldOutEvidenceJson(*e, (*evidence_folds)->source));
  }
  std::string out;
  for (const std::string& line : p->header) absl::StrAppend(&out, "# ", line, "\n");
  for (const std::string& line : p->client_lines) absl::StrAppend(&out, line, "\n");
  absl::StrAppend(&out, metrics::FormatBenchReport(p->metrics, p->report));

  // The result JSON holds every request's every ITL: format it only when
  // something writes it.
  auto format_json = [&](bool per_request_arrays) {
    metrics::ReportOptions options = p->report;
    options.per_request_arrays = per_request_arrays;
    return metrics::FormatResultJson(
        p->metrics, options,
        absl::StrCat("\"servesim_engine\": ", metrics::JsonString(p->engine.engine_version()),
                     ", \"servesim_iterations\": ", p->simulation.steps,
                     ", \"servesim_preemptions\": ", p->simulation.preempted_or_retracted,
                     spread_json, held_out_json));
  };
  // servesim's own file always carries the per-request arrays; a saved one
  // only with --save-detailed (then the same text, formatted once).
  const bool detailed_wanted =
      args.Has("--result-json") || (p->bench.save_result && p->bench.save_detailed);
  const std::string detailed = detailed_wanted ? format_json(true) : std::string();
  if (args.Has("--result-json")) {
    const std::string& json = detailed;
    if (absl::Status s = WriteStringToFile(args.Get("--result-json"), json); !s.ok()) {
      return ReportError(absl::InvalidArgumentError(absl::StrCat("--result-json: ", s.message())));
    }
  }
  if (p->bench.save_result) {
    const std::string json = p->bench.save_detailed ? detailed : format_json(false);
    if (absl::Status s = WriteSaveResult(SaveResultPath(*p, started), json, p->bench.append_result);
        !s.ok()) {
      return ReportError(s);
    }
  }
  if (args.Has("--step-log")) {
    if (absl::Status s = WriteStringToFile(args.Get("--step-log"),
                                           FormatStepLog(p->simulation.step_records));
        !s.ok()) {
      return ReportError(absl::InvalidArgumentError(absl::StrCat("--step-log: ", s.message())));
    }
  }
  // Printed once every file is written, so that a failed write is the only
  // line a failed run prints.
  std::fwrite(out.data(), 1, out.size(), stdout);
  return 0;
}

}  // namespace servesim::cli
