#include "sim/fit/fold_spread.h"

#include <cmath>
#include <set>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/read_file.h"
#include "base/status_macros.h"
#include "base/text_proto.h"
#include "sim/fit/validation.h"
#include "sim/metrics/report.h"
#include "sim/planning/parallel_for.h"

namespace servesim::fit {
namespace {

std::string HeldOutLabel(const std::string& held_out) {
  return held_out.empty() ? "the fit on every run" : absl::StrCat("without ", held_out);
}

}  // namespace

const std::vector<std::string>& SpreadFigures() {
  static const auto* kFigures = new std::vector<std::string>{
      "total_token_throughput", "mean_ttft_ms", "p99_ttft_ms", "mean_tpot_ms", "median_itl_ms"};
  return *kFigures;
}

absl::StatusOr<scenarios::FoldFits> LoadFoldFits(const std::string& path,
                                                 const std::string& flag) {
  const std::string origin = absl::StrCat(flag, ": ", path);
  absl::StatusOr<std::string> text = ReadFileToString(path);
  if (!text.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(flag, ": ", text.status().message()));
  }
  scenarios::FoldFits folds;
  if (absl::Status s = ParseTextProto(*text, &folds); !s.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat(origin, ": not a FoldFits text proto: ", s.message()));
  }
  if (folds.schema_version() != runner::kFittedParamsSchemaVersion) {
    return absl::InvalidArgumentError(absl::StrCat(origin, ": schema_version ",
                                                   folds.schema_version(), ", this reader wants ",
                                                   runner::kFittedParamsSchemaVersion));
  }
  if (folds.folds().empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        origin, ": no folds (servesim fit --leave-one-out --folds-out writes them)"));
  }
  std::set<std::pair<int, std::string>> seen;
  for (int i = 0; i < folds.folds_size(); ++i) {
    const scenarios::FoldFit& f = folds.folds(i);
    const std::string where = absl::StrCat(origin, ": folds[", i, "]");
    // One engine's block, checked as a parameters file's would be.
    scenarios::FittedParams one;
    one.set_schema_version(runner::kFittedParamsSchemaVersion);
    *one.add_engines() = f.params();
    RETURN_IF_ERROR(runner::ValidateFittedParams(one, where));
    for (const std::string& on : f.params().fitted_on()) {
      if (!f.held_out().empty() && on == f.held_out()) {
        return absl::InvalidArgumentError(absl::StrCat(
            where, ": held_out ", f.held_out(), " is among the runs it was fitted on"));
      }
    }
    if (f.held_out().empty() && f.has_held_out_result()) {
      return absl::InvalidArgumentError(
          absl::StrCat(where, ": a held_out_result on the fit on every run, which holds none out"));
    }
    for (const scenarios::HeldOutFigure& figure : f.held_out_result().figures()) {
      // A live figure of 0 has no relative error; fit never records one.
      if (!std::isfinite(figure.measured()) || figure.measured() <= 0 ||
          !std::isfinite(figure.predicted()) || figure.predicted() < 0) {
        return absl::InvalidArgumentError(absl::StrCat(
            where, ": held_out_result ", figure.key(), ": measured ", figure.measured(),
            ", predicted ", figure.predicted(), " (want measured > 0, predicted >= 0)"));
      }
    }
    if (!seen.insert({f.params().engine(), f.held_out()}).second) {
      return absl::InvalidArgumentError(
          absl::StrCat(where, ": a second fit of ", scenarios::EngineKind_Name(f.params().engine()),
                       " (", HeldOutLabel(f.held_out()), ")"));
    }
  }
  // A prediction beside its spread takes the engine's fit on every run.
  for (const auto& [engine, held_out] : seen) {
    if (!seen.contains({engine, ""})) {
      return absl::InvalidArgumentError(
          absl::StrCat(origin, ": no fit on every run of ",
                       scenarios::EngineKind_Name(static_cast<scenarios::EngineKind>(engine)),
                       " (servesim fit --leave-one-out --folds-out writes one before its folds)"));
    }
  }
  return folds;
}

absl::StatusOr<PredictionSpread> PredictSpread(const runner::PredictionContext& context,
                                               const runner::RunRequest& request,
                                               scenarios::EngineKind engine,
                                               const scenarios::FoldFits& folds, int threads) {
  std::vector<const scenarios::FoldFit*> mine;
  for (const scenarios::FoldFit& f : folds.folds()) {
    if (f.params().engine() == engine) mine.push_back(&f);
  }
  if (mine.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("--spread: the fold file has no fits of ",
                     scenarios::EngineKind_Name(engine)));
  }
  std::vector<absl::StatusOr<runner::Prediction>> predictions(mine.size(),
                                                              absl::UnknownError("not run"));
  planning::ParallelFor(mine.size(), threads, [&](size_t i) {
    predictions[i] = runner::Predict(runner::WithEngineParams(context, mine[i]->params()), request);
  });
  PredictionSpread spread;
  spread.engine = engine;
  spread.fits = static_cast<int>(mine.size());
  for (const std::string& key : SpreadFigures()) spread.figures.push_back({key});
  for (size_t i = 0; i < mine.size(); ++i) {
    if (!predictions[i].ok()) return predictions[i].status();
    for (FigureRange& r : spread.figures) {
      const double v = MetricValue(predictions[i]->metrics, r.key);
      // Ties keep the earlier fold: the file's order decides, not the threads.
      if (i == 0 || v < r.low) {
        r.low = v;
        r.low_held_out = mine[i]->held_out();
      }
      if (i == 0 || v > r.high) {
        r.high = v;
        r.high_held_out = mine[i]->held_out();
      }
    }
  }
  return spread;
}

std::vector<std::string> FormatSpread(const PredictionSpread& spread, const std::string& source) {
  std::vector<std::string> lines = {absl::StrCat(
      "spread over ", spread.fits, " ", absl::AsciiStrToLower(
          scenarios::EngineKind_Name(spread.engine)),
      " fit(s) of the leave-one-out (", source,
      "; each fitted without one live run, or on all): how far these figures move with "
      "parameters the live runs pin no better; a floor on the uncertainty, blind to what no "
      "live run exercised (docs/fitting.md)")};
  for (const FigureRange& r : spread.figures) {
    lines.push_back(absl::StrFormat("spread: %-13s %10.2f to %10.2f (low: %s; high: %s)",
                                    MetricLabel(r.key), r.low, r.high,
                                    HeldOutLabel(r.low_held_out), HeldOutLabel(r.high_held_out)));
  }
  return lines;
}

std::string SpreadJson(const PredictionSpread& spread, const std::string& source) {
  std::string out = absl::StrCat("{\"fits\": ", spread.fits,
                                 ", \"source\": ", metrics::JsonString(source));
  for (const FigureRange& r : spread.figures) {
    absl::StrAppend(&out, ", ", metrics::JsonString(r.key), ": {\"low\": ",
                    metrics::JsonNumber(r.low), ", \"high\": ", metrics::JsonNumber(r.high),
                    ", \"low_held_out\": ", metrics::JsonString(r.low_held_out),
                    ", \"high_held_out\": ", metrics::JsonString(r.high_held_out), "}");
  }
  return absl::StrCat(out, "}");
}

}  // namespace servesim::fit
