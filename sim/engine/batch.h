// What one DP rank runs in one iteration, and what the iteration produced.
// Shared by every engine's scheduler; the cost model reads StepBatch only.
#ifndef SERVESIM_SIM_ENGINE_BATCH_H_
#define SERVESIM_SIM_ENGINE_BATCH_H_

#include <cstdint>
#include <vector>

#include "sim/engine/request.h"

namespace servesim::engine {

struct ScheduledSeq {
  RequestId id = 0;
  int64_t query_tokens = 0;    // tokens computed this step (chunk, 1, or 1 + drafts)
  int64_t context_before = 0;  // tokens already in the KV cache before them
  bool is_decode = false;      // a generation step (else a prefill chunk)
};

struct StepBatch {
  std::vector<ScheduledSeq> seqs;
  int64_t num_tokens() const {
    int64_t n = 0;
    for (const auto& s : seqs) n += s.query_tokens;
    return n;
  }
  int64_t num_decodes() const {
    int64_t n = 0;
    for (const auto& s : seqs) n += s.is_decode ? 1 : 0;
    return n;
  }
  bool empty() const { return seqs.empty(); }
  void clear() { seqs.clear(); }
};

struct TokenEmission {
  RequestId id = 0;
  int64_t tokens = 0;  // tokens in this streamed chunk
};

struct StepOutcome {
  std::vector<TokenEmission> emitted;  // in batch order
  std::vector<RequestId> finished;     // subset of emitted, in batch order
  void clear() {
    emitted.clear();
    finished.clear();
  }
};

// Speculative decoding as the engines run it: k draft tokens per decode step
// and the mean number of them accepted.
struct SpeculativeConfig {
  int num_draft_tokens = 0;           // k; 0 disables speculation
  double mean_accepted_drafts = 0.0;  // E[accepted drafts] in [0, k]
};

// Applies a finished step to the request table, the way every engine does:
// scheduled tokens become computed; a sequence whose known tokens are all
// computed samples (a decode with drafts accepts 1 + accepted drafts);
// requests that reach max_output_tokens finish. Appends to `out`.
void AdvanceRequests(const StepBatch& batch, const SpeculativeConfig& spec,
                     RequestTable& requests, StepOutcome* out);

class KvCacheManager;

// AdvanceRequests, then what every engine does with the requests that
// finished: free their KV blocks and drop them from its running list.
void CompleteStep(const StepBatch& batch, const SpeculativeConfig& spec, RequestTable& requests,
                  KvCacheManager& kv, std::vector<RequestId>& running, StepOutcome* out);

}  // namespace servesim::engine

#endif  // SERVESIM_SIM_ENGINE_BATCH_H_
