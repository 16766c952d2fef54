// A request's state inside the engine: how much of it has been computed and
// generated. Schedulers hold indices into one RequestTable.
#ifndef SERVESIM_SIM_ENGINE_REQUEST_H_
#define SERVESIM_SIM_ENGINE_REQUEST_H_

#include <cstdint>
#include <vector>

#include "sim/core/sim_time.h"

namespace servesim::engine {

using RequestId = int32_t;

struct Request {
  RequestId id = 0;
  int64_t prompt_tokens = 0;
  int64_t max_output_tokens = 0;  // the client's max_completion_tokens
  sim::SimTime arrival;           // reached the engine
  int dp_rank = 0;

  // Tokens whose KV is in the cache (prompt and generated alike): vLLM's
  // num_computed_tokens. Reset to 0 by recompute preemption or retraction.
  int64_t computed_tokens = 0;
  int64_t output_tokens = 0;  // generated so far
  // Fractional accepted-token accumulator for speculative decoding.
  double spec_accept_credit = 0;
  int preemptions = 0;
  bool finished = false;
  bool rejected = false;  // refused by the engine (e.g. over its length limit)

  // Tokens the model has seen or produced: what a full recompute covers.
  int64_t known_tokens() const { return prompt_tokens + output_tokens; }
  bool prefill_done() const { return computed_tokens >= known_tokens(); }
};

using RequestTable = std::vector<Request>;

}  // namespace servesim::engine

#endif  // SERVESIM_SIM_ENGINE_REQUEST_H_
