#include "sim/runner/fit_coverage.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "sim/runner/engine_setup.h"

namespace servesim::runner {

std::string LayoutFamily(const models::ParallelLayout& layout, int num_speculative_tokens) {
  return absl::StrFormat("%d GPUs: attention TP%dxDP%d, MoE TP%dxEP%d%s", layout.gpus,
                         layout.attn_tp, layout.attn_dp, layout.moe_tp, layout.moe_ep,
                         num_speculative_tokens > 0
                             ? absl::StrCat(", MTP ", num_speculative_tokens)
                             : std::string());
}

double WorkloadShape::Running() const {
  return running_cap > 0 ? std::min(peak_concurrency, static_cast<double>(running_cap))
                         : peak_concurrency;
}

void WorkloadShape::AddRequest(int64_t prompt_tokens, sim::SimTime sent, bool accepted) {
  if (accepted) longest_prompt_tokens = std::max(longest_prompt_tokens, prompt_tokens);
  all_sent_at_start = all_sent_at_start && sent == sim::SimTime::Zero();
}

namespace {
constexpr char kAnotherModel[] = "another model";
constexpr char kLongerPrompts[] = "longer prompts";
constexpr char kLowerLoad[] = "lower load";
constexpr char kHigherLoad[] = "higher load";
constexpr char kAnotherLayout[] = "another layout";
constexpr char kSpreadArrivals[] = "spread arrivals";
}  // namespace

const std::vector<std::string>& ExtrapolationKinds() {
  static const auto* const kKinds =
      new std::vector<std::string>{kCoverageUnknown, kAnotherModel,   kLongerPrompts,
                                   kLowerLoad,       kHigherLoad,     kAnotherLayout,
                                   kSpreadArrivals};
  return *kKinds;
}

std::vector<Extrapolation> ExtrapolationNotes(const scenarios::EngineParams& params,
                                              const WorkloadShape& shape) {
  if (!params.has_coverage()) {
    return {{kCoverageUnknown,
             "extrapolation: unknown (the parameters file records no coverage: fitted before "
             "servesim recorded what its runs covered)"}};
  }
  const scenarios::FitCoverage& c = params.coverage();
  std::vector<Extrapolation> notes;
  if (shape.model != c.model()) {
    notes.push_back({kAnotherModel, absl::StrCat("extrapolation: the model is ", shape.model,
                                 ", the fitted runs served ", c.model(),
                                 ": the engine's fitted costs are applied to another model")});
  }
  // A longer replay of the fitted runs' dataset reaches a little past their
  // longest without leaving it: ShareGPT's filter caps prompts at 1024
  // tokens, 0.8 % above the live runs' 1016.
  if (static_cast<double>(shape.longest_prompt_tokens) >
      1.02 * static_cast<double>(c.max_prompt_tokens())) {
    notes.push_back({kLongerPrompts, absl::StrFormat(
        "extrapolation: prompts up to %d tokens, the fitted runs' longest %d: the prefill path "
        "factor x%.2f is applied per token beyond them, which no live run checked [U] "
        "(docs/random_workloads.md)",
        shape.longest_prompt_tokens, c.max_prompt_tokens(), PrefillTimeScale(params))});
  }
  // The engine's step sees at most its running cap, however many requests
  // the client has in flight.
  const double running = shape.Running();
  if (running < 0.5 * static_cast<double>(c.min_peak_concurrency())) {
    // A fitted call latency (vLLM's DP path) was identified by the same
    // bursts and, like the cost per step, is paid at every batch size.
    const std::string call_latency =
        shape.fitted_call_latency_us > 0
            ? absl::StrFormat(", with the fitted %.0f us a DP collective call,",
                              shape.fitted_call_latency_us)
            : "";
    notes.push_back(
        {kLowerLoad,
         absl::StrFormat(
             "extrapolation: about %.0f requests running at the peak%s, the fitted "
             "runs' fewest %d: their host cost per step and per sequence could not be told apart, "
             "and the fitted %.1f ms per step%s weighs on low-load TPOT (README, Accuracy)",
             running, running < shape.peak_concurrency ? " (the engine's running cap)" : "",
             c.min_peak_concurrency(), params.step_cpu_us() / 1000.0, call_latency)});
  }
  if (shape.peak_concurrency > 2.0 * static_cast<double>(c.max_peak_concurrency())) {
    notes.push_back({kHigherLoad, absl::StrFormat(
        "extrapolation: about %.0f requests active at the peak, the fitted "
        "runs' most %d: KV admission, preemption and the per-sequence host cost run past any "
        "live run",
        shape.peak_concurrency, c.max_peak_concurrency())});
  }
  if (std::find(c.layouts().begin(), c.layouts().end(), shape.layout_family) ==
      c.layouts().end()) {
    notes.push_back({kAnotherLayout, absl::StrCat(
        "extrapolation: no fitted run had this layout (", shape.layout_family,
        "); the parameters were fitted on ", absl::StrJoin(c.layouts(), " | "),
        ", and nothing checks they carry over")});
  }
  if (c.only_bursts() && !shape.all_sent_at_start) {
    notes.push_back({kSpreadArrivals,
                     "extrapolation: requests arrive over time, the fitted runs sent all theirs "
                     "at t = 0: the API server's fitted cost per request was identified by "
                     "bursts only (docs/fitting.md)"});
  }
  return notes;
}

}  // namespace servesim::runner
