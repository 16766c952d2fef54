// The cost model's seam: how long one engine iteration takes on the GPUs.
// It knows nothing of scheduling; it sees the batches and returns a time.
#ifndef SERVESIM_SIM_COST_EXECUTION_TIME_PREDICTOR_H_
#define SERVESIM_SIM_COST_EXECUTION_TIME_PREDICTOR_H_

#include <span>

#include "sim/core/sim_time.h"
#include "sim/engine/batch.h"

namespace servesim::cost {

class ExecutionTimePredictor {
 public:
  virtual ~ExecutionTimePredictor() = default;
  // One iteration in which DP rank r runs `rank_batches[r]` (empty batches
  // are idle ranks that still join the MoE collectives in lockstep layouts).
  // Zero means no valid time (a step past a day, or not finite: a profile or
  // parameters no GPU has), which the simulation reports as bad input; a
  // real step always takes time.
  virtual sim::SimTime PredictStep(std::span<const engine::StepBatch> rank_batches) = 0;
};

// Fixed costs for tests: a base per step, per token and per decode sequence.
class FakeExecutionTimePredictor : public ExecutionTimePredictor {
 public:
  FakeExecutionTimePredictor(sim::SimTime per_step, sim::SimTime per_token,
                             sim::SimTime per_decode)
      : per_step_(per_step), per_token_(per_token), per_decode_(per_decode) {}
  sim::SimTime PredictStep(std::span<const engine::StepBatch> rank_batches) override {
    int64_t worst = 0;
    for (const auto& b : rank_batches) {
      worst = std::max(worst, b.num_tokens() * per_token_.ns() + b.num_decodes() * per_decode_.ns());
    }
    return per_step_ + sim::Nanoseconds(worst);
  }

 private:
  sim::SimTime per_step_, per_token_, per_decode_;
};

}  // namespace servesim::cost

#endif  // SERVESIM_SIM_COST_EXECUTION_TIME_PREDICTOR_H_
