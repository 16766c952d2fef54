#include "sim/fit/held_out_evidence.h"

#include <algorithm>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "google/protobuf/util/message_differencer.h"
#include "sim/fit/fold_spread.h"
#include "sim/metrics/report.h"

namespace servesim::fit {

scenarios::HeldOutResult HeldOutResultOf(const CaseResult& c) {
  scenarios::HeldOutResult out;
  if (c.refused || c.not_modelled) return out;
  out.set_layout(c.shape.layout_family);
  for (const std::string& key : ComparedMetrics()) {
    if (!c.HasError(key)) continue;
    scenarios::HeldOutFigure* f = out.add_figures();
    f->set_key(key);
    f->set_measured(c.measured.at(key));
    f->set_predicted(c.predicted.at(key));
  }
  return out;
}

std::optional<HeldOutEvidence> FindHeldOutEvidence(const scenarios::FoldFits& folds,
                                                   const scenarios::EngineParams& in_use,
                                                   const std::string& layout_family) {
  bool fit_in_use = false;
  std::vector<const scenarios::FoldFit*> alike;
  for (const scenarios::FoldFit& f : folds.folds()) {
    if (f.params().engine() != in_use.engine()) continue;
    if (f.held_out().empty()) {
      fit_in_use = google::protobuf::util::MessageDifferencer::Equals(f.params(), in_use);
    } else if (f.held_out_result().layout() == layout_family) {
      alike.push_back(&f);
    }
  }
  if (!fit_in_use || alike.empty()) return std::nullopt;
  HeldOutEvidence evidence;
  evidence.engine = in_use.engine();
  for (const scenarios::FoldFit* f : alike) evidence.runs.push_back(f->held_out());
  for (const std::string& key : SpreadFigures()) {
    std::vector<double> errors;
    for (const scenarios::FoldFit* f : alike) {
      for (const scenarios::HeldOutFigure& figure : f->held_out_result().figures()) {
        if (figure.key() != key || figure.measured() == 0) continue;
        errors.push_back((figure.predicted() - figure.measured()) / figure.measured() * 100);
      }
    }
    if (errors.empty()) continue;
    const auto [low, high] = std::minmax_element(errors.begin(), errors.end());
    evidence.ranges.push_back({key, *low, *high});
  }
  if (evidence.ranges.empty()) return std::nullopt;
  return evidence;
}

std::string FormatHeldOutEvidence(const HeldOutEvidence& evidence, const std::string& source) {
  std::vector<std::string> ranges;
  for (const HeldOutErrorRange& r : evidence.ranges) {
    ranges.push_back(
        r.low_pct == r.high_pct
            ? absl::StrFormat("%s %+.1f %%", MetricLabel(r.key), r.low_pct)
            : absl::StrFormat("%s %+.1f to %+.1f %%", MetricLabel(r.key), r.low_pct, r.high_pct));
  }
  return absl::StrCat("held-out error on the ", evidence.runs.size(),
                      " live run(s) of this engine and layout (",
                      absl::StrJoin(evidence.runs, ", "), "; each predicted by the ",
                      absl::AsciiStrToLower(scenarios::EngineKind_Name(evidence.engine)),
                      " fit without it, ", source, "): ", absl::StrJoin(ranges, ", "));
}

std::string HeldOutEvidenceJson(const HeldOutEvidence& evidence, const std::string& source) {
  std::vector<std::string> runs;
  for (const std::string& run : evidence.runs) runs.push_back(metrics::JsonString(run));
  std::string out = absl::StrCat("{\"source\": ", metrics::JsonString(source), ", \"runs\": [",
                                 absl::StrJoin(runs, ", "), "]");
  for (const HeldOutErrorRange& r : evidence.ranges) {
    absl::StrAppend(&out, ", ", metrics::JsonString(r.key),
                    ": {\"low_pct\": ", metrics::JsonNumber(r.low_pct),
                    ", \"high_pct\": ", metrics::JsonNumber(r.high_pct), "}");
  }
  return absl::StrCat(out, "}");
}

}  // namespace servesim::fit
