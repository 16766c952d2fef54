#include "sim/runner/fit_coverage.h"

#include <algorithm>
#include <cstdint>

#include "absl/strings/str_format.h"
#include "sim/runner/engine_setup.h"

namespace servesim::runner {

std::vector<std::string> ExtrapolationNotes(const scenarios::EngineParams& params,
                                            const serving::SimulationResult& simulation,
                                            double peak_concurrency) {
  std::vector<std::string> notes;
  const scenarios::FitCoverage& c = params.coverage();
  if (c.max_prompt_tokens() <= 0) return notes;  // a file from before coverage was recorded
  int64_t longest_prompt = 0;
  bool all_at_start = true;
  for (const metrics::RequestRecord& r : simulation.records) {
    longest_prompt = std::max(longest_prompt, r.prompt_tokens);
    all_at_start = all_at_start && r.start == sim::SimTime::Zero();
  }
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
  if (c.only_bursts() && !all_at_start) {
    notes.push_back(
        "extrapolation: requests arrive over time, the fitted runs sent all theirs at t = 0: "
        "the API server's fitted cost per request was identified by bursts only "
        "(docs/fitting.md)");
  }
  return notes;
}

}  // namespace servesim::runner
