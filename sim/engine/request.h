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
  // Where the model emits EOS (<= max_output_tokens); the engine cannot know
  // it in advance. 0 = the request runs to max_output_tokens.
  int64_t eos_output_tokens = 0;
  // The prompt's shareable prefix as a chain of nodes: node i spans
  // prefix_node_tokens[i] tokens, and a key names the same tokens (after the
  // same chain) in every request that has it; the prefix cache reuses them.
  std::vector<int64_t> prefix_node_keys;
  std::vector<int64_t> prefix_node_tokens;

  // Tokens whose KV is in the cache (prompt and generated alike): vLLM's
  // num_computed_tokens. Reset to 0 by recompute preemption or retraction.
  int64_t computed_tokens = 0;
  int64_t output_tokens = 0;  // generated so far
  // Fractional accepted-token accumulator for speculative decoding. It
  // starts at one half so that the accepted count after n decode steps is
  // the expectation rounded, not floored: from 0, a request at a mean of
  // 0.6 accepted nothing on its first step, and a 3-token reply took two
  // decode steps where most take one.
  double spec_accept_credit = 0.5;
  int preemptions = 0;
  bool finished = false;

  // Tokens the model has seen or produced: what a full recompute covers.
  int64_t known_tokens() const { return prompt_tokens + output_tokens; }
  bool prefill_done() const { return computed_tokens >= known_tokens(); }
  // Tokens the request will generate in all.
  int64_t final_output_tokens() const {
    return eos_output_tokens > 0 ? eos_output_tokens : max_output_tokens;
  }
};

using RequestTable = std::vector<Request>;

}  // namespace servesim::engine

#endif  // SERVESIM_SIM_ENGINE_REQUEST_H_
