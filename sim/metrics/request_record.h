// What the benchmark client observes of one request: when it was sent, when
// each streamed chunk arrived, and how many tokens it carried.
#ifndef SERVESIM_SIM_METRICS_REQUEST_RECORD_H_
#define SERVESIM_SIM_METRICS_REQUEST_RECORD_H_

#include <cstdint>
#include <string>
#include <vector>

#include "sim/core/sim_time.h"

namespace servesim::metrics {

struct RequestRecord {
  int64_t prompt_tokens = 0;  // the client's dataset prompt_len
  int64_t output_tokens = 0;  // usage.completion_tokens when the stream ends
  bool success = false;       // false: the server rejected or never finished it
  std::string error;          // the server's error message when it rejected it
  sim::SimTime start;         // when the client sent it
  // Arrival time of every streamed chunk that carries tokens, in order. The
  // first is the first token (TTFT); a step that emits several tokens (MTP)
  // is one chunk, as the client sees one SSE message.
  std::vector<sim::SimTime> chunk_times;
};

}  // namespace servesim::metrics

#endif  // SERVESIM_SIM_METRICS_REQUEST_RECORD_H_
