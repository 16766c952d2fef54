// Request records built by hand for the metrics and report tests.
#ifndef SERVESIM_SIM_METRICS_RECORDS_FOR_TEST_H_
#define SERVESIM_SIM_METRICS_RECORDS_FOR_TEST_H_

#include <cstdint>
#include <vector>

#include "sim/metrics/request_record.h"

namespace servesim::metrics {

inline RequestRecord Record(double start_s, std::vector<double> chunks_s, int64_t in, int64_t out) {
  RequestRecord r;
  r.prompt_tokens = in;
  r.output_tokens = out;
  r.success = true;
  r.start = sim::Seconds(start_s);
  for (double t : chunks_s) r.chunk_times.push_back(sim::Seconds(t));
  return r;
}

// Three requests worked out by hand (see the comments for each figure).
inline std::vector<RequestRecord> ThreeRequests() {
  return {Record(0.0, {1.0, 1.5, 2.0}, 10, 3),  // ttft 1.0, tpot 0.5, gaps .5 .5
          Record(0.0, {0.5, 1.0}, 20, 2),       // ttft 0.5, tpot 0.5, gap .5
          Record(0.2, {3.0}, 30, 1)};           // ttft 2.8, no tpot (1 token)
}

}  // namespace servesim::metrics

#endif  // SERVESIM_SIM_METRICS_RECORDS_FOR_TEST_H_
