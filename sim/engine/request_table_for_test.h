// Test helper shared by the scheduler tests: a request table from
// (prompt tokens, max output tokens) pairs, ids in order.
#ifndef SERVESIM_SIM_ENGINE_REQUEST_TABLE_FOR_TEST_H_
#define SERVESIM_SIM_ENGINE_REQUEST_TABLE_FOR_TEST_H_

#include <utility>
#include <vector>

#include "sim/engine/request.h"

namespace servesim::engine {

inline RequestTable MakeRequests(const std::vector<std::pair<int64_t, int64_t>>& prompt_output) {
  RequestTable t;
  for (size_t i = 0; i < prompt_output.size(); ++i) {
    Request r;
    r.id = static_cast<RequestId>(i);
    r.prompt_tokens = prompt_output[i].first;
    r.max_output_tokens = prompt_output[i].second;
    t.push_back(r);
  }
  return t;
}

// As MakeRequests, all sharing their first `shared_tokens` (one prefix node).
inline RequestTable MakeRequestsSharingAPrefix(
    const std::vector<std::pair<int64_t, int64_t>>& prompt_output, int64_t shared_tokens) {
  RequestTable t = MakeRequests(prompt_output);
  for (Request& r : t) {
    r.prefix_node_keys = {0};
    r.prefix_node_tokens = {shared_tokens};
  }
  return t;
}

}  // namespace servesim::engine

#endif  // SERVESIM_SIM_ENGINE_REQUEST_TABLE_FOR_TEST_H_
