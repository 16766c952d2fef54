// The leave-one-out's rows beside a prediction: how far the model missed on
// the live runs of the same engine and parallel layout, each predicted by a
// fit that never saw it. Where a layout's live runs were missed by 40 %, a
// user should read a prediction for it with that in mind; the training fit,
// which saw them, would hide it.
#ifndef SERVESIM_SIM_FIT_HELD_OUT_EVIDENCE_H_
#define SERVESIM_SIM_FIT_HELD_OUT_EVIDENCE_H_

#include <optional>
#include <string>

#include "scenarios/fitted_params.pb.h"
#include "sim/fit/validation.h"

namespace servesim::fit {

// A held-out case's row as a fold records it: its layout family and each
// compared figure the live run measured. A case that did not run gives no
// figures.
scenarios::HeldOutResult HeldOutResultOf(const CaseResult& c);

// One header line (without the "# ") naming the live runs of `layout_family`
// held out of `folds` for the engine of `in_use`, and the range of each
// spread figure's held-out error over them. Nothing when no held-out run
// has that layout, or when `in_use` is not the folds' fit on every run of
// its engine: their errors then belong to other parameters. `source` names
// the fold file.
std::optional<std::string> FormatHeldOutEvidence(const scenarios::FoldFits& folds,
                                                 const scenarios::EngineParams& in_use,
                                                 const std::string& layout_family,
                                                 const std::string& source);

}  // namespace servesim::fit

#endif  // SERVESIM_SIM_FIT_HELD_OUT_EVIDENCE_H_
