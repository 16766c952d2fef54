// Reads back what `vllm bench serve` prints and what its --save-result JSON
// holds, so that a live run can be compared with a prediction figure by
// figure. Both give the figures under the JSON's key names
// ("total_token_throughput", "mean_ttft_ms", ...).
#ifndef SERVESIM_SIM_METRICS_RESULT_READER_H_
#define SERVESIM_SIM_METRICS_RESULT_READER_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace servesim::metrics {

// The numeric top-level values of a --save-result JSON object. Other values
// (strings, nulls, booleans, the per-request lists, NaN and Infinity) are
// skipped, except under a figure the report prints (IsReportedFigure), where
// anything but a finite number or null is an error. Malformed JSON, or a
// result without a finite "completed" and "duration", is an error.
absl::StatusOr<std::map<std::string, double>> ReadResultJsonFigures(absl::string_view json);

// A figure `vllm bench serve` prints (its --save-result key): the counts,
// the throughputs and {mean,median,pNN}_{ttft,tpot,itl,e2el}_ms. With
// `saved_too`, also what it only saves or a results CSV spells its own way
// (std_*, failed, num_prompts, duration_s).
bool IsReportedFigure(const std::string& key, bool saved_too = false);

// The per-request lengths of a --save-result JSON, in send order:
// "input_lens" (the client's prompt counts) and "output_lens" (tokens
// generated; 0 where the request failed). A list that is absent stays empty;
// one that is not a list of whole numbers >= 0 is an error.
struct ResultLengths {
  std::vector<int64_t> input_lens;
  std::vector<int64_t> output_lens;
};
absl::StatusOr<ResultLengths> ReadResultJsonLengths(absl::string_view json);

// The figures of the "Serving Benchmark Result" block in `text` (the whole
// console output of a run may be given; lines outside the block are
// ignored, and so are lines of the block that vllm may add and servesim does
// not print). No block, a repeated block, or a block without "Successful
// requests" and "Benchmark duration" is an error.
absl::StatusOr<std::map<std::string, double>> ReadBenchReportFigures(absl::string_view text);

}  // namespace servesim::metrics

#endif  // SERVESIM_SIM_METRICS_RESULT_READER_H_
