// The lengths a live run actually had, laid over the workload its bench
// command samples, so that `validate` and `fit` compare engine speed with
// engine speed: a live run without --ignore-eos stops replies at EOS, which
// a random dataset's fixed lengths do not, and a ShareGPT run's prompts are
// the JSON's, which servesim's stand-in table only resembles.
#ifndef SERVESIM_SIM_WORKLOAD_LIVE_LENGTHS_H_
#define SERVESIM_SIM_WORKLOAD_LIVE_LENGTHS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "sim/workload/bench_config.h"
#include "sim/workload/dataset.h"

namespace servesim::workload {

struct LiveLengths {
  // Per request in send order, as a --save-result JSON lists them
  // (input_lens: the client's prompt counts; output_lens: tokens generated,
  // 0 for a request that failed). Empty: not known.
  std::vector<int64_t> input_lens;
  std::vector<int64_t> output_lens;
  // Only totals (a results CSV): requests that succeeded and the tokens they
  // generated. < 0: not known.
  int64_t completed = -1;
  int64_t total_output_tokens = -1;
};

// Lays `live` over `requests` (sampled from `bench`):
// - per-request lengths, when the JSON has one per request: each request
//   takes its live prompt and its live reply (a failed one keeps the
//   sampled reply); the client still asks for the sampled
//   max_completion_tokens, or for the live reply where that is longer.
// - a total only, for fixed-length datasets (random, --sharegpt-output-len)
//   without --ignore-eos, when the live requests generated fewer tokens than
//   they asked for: each reply is cut at a geometric EOS length (memoryless),
//   whose mean makes the sampled replies add up to the live total per
//   completed request. Draws come from `bench.seed`, so the cut is
//   deterministic.
// Otherwise `requests` is left as it is. `notice` (if set) gets a sentence
// saying what was taken from the live run. Errors, where the live lengths
// cannot come from this bench command: per-request lengths whose count
// differs from the requests', negative ones, a reply longer than a fixed
// length asks for; a total below one token per completed request, or above
// what fixed lengths allow.
absl::Status ApplyLiveLengths(const LiveLengths& live, const BenchConfig& bench,
                              std::vector<BenchRequest>& requests, std::string* notice);

}  // namespace servesim::workload

#endif  // SERVESIM_SIM_WORKLOAD_LIVE_LENGTHS_H_
