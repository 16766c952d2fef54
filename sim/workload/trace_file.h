// Public request traces (arrival time, input tokens, output tokens per row) read
// from the formats in shared/traces: Mooncake JSONL, Azure CSV, generic CSV.
#ifndef SERVESIM_SIM_WORKLOAD_TRACE_FILE_H_
#define SERVESIM_SIM_WORKLOAD_TRACE_FILE_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace servesim::workload {

struct TraceRow {
  // Arrival relative to the file's first row, >= 0 and non-decreasing.
  int64_t arrival_offset_ns = 0;
  int64_t input_tokens = 0;   // >= 1
  int64_t output_tokens = 0;  // >= 1
  // Mooncake's hash_ids: one id per 512-token block of the prompt, the same id
  // for the same block after the same blocks (kMooncakeHashBlockTokens).
  std::vector<int64_t> hash_ids;
};

// Tokens per hash_ids block in the Mooncake traces (their README).
inline constexpr int64_t kMooncakeHashBlockTokens = 512;

struct TraceFile {
  // "mooncake-jsonl", "azure-csv", "generic-csv" or "lengths-csv".
  std::string format;
  // False for a table of lengths only: every arrival_offset_ns is 0 and the
  // arrivals come from the client's --request-rate.
  bool has_arrivals = true;
  std::vector<TraceRow> rows;
};

// Reads a trace file. The format follows from the content:
// - JSONL, one object per line with "timestamp" (ms from trace start),
//   "input_length", "output_length" and, where present, "hash_ids"; other
//   keys are skipped;
// - CSV with header TIMESTAMP,ContextTokens,GeneratedTokens (Azure 2023;
//   stamps "YYYY-MM-DD HH:MM:SS.fffffff", read as one time zone);
// - CSV with header arrival_s,input_tokens,output_tokens (seconds), or Vidur's
//   arrived_at,num_prefill_tokens,num_decode_tokens;
// - CSV of lengths only, header num_prefill_tokens,num_decode_tokens[,...]
//   (Vidur's and Sarathi-Serve's processed traces; later columns ignored).
// Blank lines are skipped. A malformed row, a length below 1, a timestamp
// earlier than the row before, or a Mooncake hash id that follows another id
// than it did on an earlier row (or repeats within one prompt) is an error
// "<path>:<line>: <problem>".
absl::StatusOr<TraceFile> ReadTraceFile(const std::string& path);

// The same on text already in memory; `name` stands in for the path in errors.
absl::StatusOr<TraceFile> ParseTraceText(std::string_view text, std::string_view name);

// "2023-11-16 18:15:46.6805900" -> nanoseconds since 1970-01-01 00:00:00 of
// the same (unstated) zone. Exposed for tests.
absl::StatusOr<int64_t> ParseDateTimeNs(std::string_view stamp);

}  // namespace servesim::workload

#endif  // SERVESIM_SIM_WORKLOAD_TRACE_FILE_H_
