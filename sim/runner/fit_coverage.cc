#include "sim/runner/fit_coverage.h"

#include <algorithm>
#include <cstdint>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "sim/runner/engine_setup.h"

namespace servesim::runner {

std::string LayoutFamily(const models::ParallelLayout& layout, int num_speculative_tokens) {
  return absl::StrFormat("%d GPUs: attention TP%dxDP%d, MoE TP%dxEP%d%s", layout.gpus,
                         layout.attn_tp, layout.attn_dp, layout.moe_tp, layout.moe_ep,
                         num_speculative_tokens > 0 ? ", MTP" : "");
}

WorkloadShape ShapeOf(const serving::SimulationResult& simulation, double peak_concurrency,
                      std::string layout_family) {
  WorkloadShape shape;
  for (const metrics::RequestRecord& r : simulation.records) {
    shape.longest_prompt_tokens = std::max(shape.longest_prompt_tokens, r.prompt_tokens);
    shape.all_sent_at_start = shape.all_sent_at_start && r.start == sim::SimTime::Zero();
  }
  shape.peak_concurrency = peak_concurrency;
  shape.layout_family = std::move(layout_family);
  return shape;
}

std::vector<std::string> ExtrapolationNotes(const scenarios::EngineParams& params,
                                            const WorkloadShape& shape) {
  std::vector<std::string> notes;
  const scenarios::FitCoverage& c = params.coverage();
  if (c.max_prompt_tokens() <= 0) return notes;  // a file from before coverage was recorded
  const int64_t longest_prompt = shape.longest_prompt_tokens;
  const double peak_concurrency = shape.peak_concurrency;
  const std::string& layout_family = shape.layout_family;
  const bool all_at_start = shape.all_sent_at_start;
  if (longest_prompt > c.max_prompt_tokens()) {
    notes.push_back(absl::StrFormat(
        "extrapolation: prompts up to %d tokens, the fitted runs' longest %d: the prefill path "
        "factor x%.2f is applied per token beyond them, which no live run checked [U] "
        "(docs/random_workloads.md)",
        longest_prompt, c.max_prompt_tokens(), PrefillTimeScale(params)));
  }
  if (peak_concurrency < 0.5 * static_cast<double>(c.min_peak_concurrency())) {
    notes.push_back(absl::StrFormat(
        "extrapolation: at most %.0f requests in flight, the fitted runs %d or more: there "
        "per-step and per-sequence host costs are not told apart, and the fitted host cost "
        "per step (%.1f ms) weighs on low-load TPOT (README, Accuracy)",
        peak_concurrency, c.min_peak_concurrency(), params.step_cpu_us() / 1000.0));
  }
  if (!c.layouts().empty() &&
      std::find(c.layouts().begin(), c.layouts().end(), layout_family) == c.layouts().end()) {
    notes.push_back(absl::StrCat(
        "extrapolation: no fitted run had this layout (", layout_family,
        "); the fitted costs stand for work the kernels miss on theirs (",
        absl::StrJoin(c.layouts(), "; "), "), and nothing checks they carry over"));
  }
  if (c.only_bursts() && !all_at_start) {
    notes.push_back(
        "extrapolation: requests arrive over time, the fitted runs sent all theirs at t = 0: "
        "the API server's fitted cost per request was identified by bursts only "
        "(docs/fitting.md)");
  }
  return notes;
}

}  // namespace servesim::runner
