// The leave-one-out's rows beside a prediction: how far the model missed on
// the live runs of the same engine and parallel layout, each predicted by a
// fit that never saw it. Where a layout's live runs were missed by 40 %, a
// user should read a prediction for it with that in mind; the training fit,
// which saw them, would hide it.
#ifndef SERVESIM_SIM_FIT_HELD_OUT_EVIDENCE_H_
#define SERVESIM_SIM_FIT_HELD_OUT_EVIDENCE_H_

#include <optional>
#include <string>
#include <vector>

#include "scenarios/fitted_params.pb.h"
#include "sim/fit/validation.h"

namespace servesim::fit {

// A held-out case's row as a fold records it: its layout family and each
// compared figure the live run measured. A case that did not run gives no
// figures.
scenarios::HeldOutResult HeldOutResultOf(const CaseResult& c);

// The lowest and highest held-out error of one figure over the runs, in %
// of the live figure.
struct HeldOutErrorRange {
  std::string key;  // --save-result key, e.g. "total_token_throughput"
  double low_pct = 0;
  double high_pct = 0;
};

struct HeldOutEvidence {
  scenarios::EngineKind engine = scenarios::ENGINE_UNSPECIFIED;
  std::vector<std::string> runs;          // held-out runs of the layout, in the folds' order
  std::vector<HeldOutErrorRange> ranges;  // in SpreadFigures() order, those measured
};

// The folds' held-out runs of `layout_family` for the engine of `in_use`,
// and the range of each spread figure's error over them. Nothing when no
// held-out run has that layout, or when `in_use` is not the folds' fit on
// every run of its engine: their errors then belong to other parameters.
std::optional<HeldOutEvidence> FindHeldOutEvidence(const scenarios::FoldFits& folds,
                                                   const scenarios::EngineParams& in_use,
                                                   const std::string& layout_family);

// The evidence as one header line (without the "# "); `source` names the
// fold file.
std::string FormatHeldOutEvidence(const HeldOutEvidence& evidence, const std::string& source);

// The evidence as the result JSON's "servesim_held_out" member (without the
// key): {"source": FILE, "runs": [...], KEY: {"low_pct", "high_pct"}, ...}.
std::string HeldOutEvidenceJson(const HeldOutEvidence& evidence, const std::string& source);

}  // namespace servesim::fit

#endif  // SERVESIM_SIM_FIT_HELD_OUT_EVIDENCE_H_
