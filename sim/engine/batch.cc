#include "sim/engine/batch.h"

#include <algorithm>
#include <cmath>

#include "base/check.h"
#include "sim/engine/kv_cache_manager.h"

namespace servesim::engine {

void AdvanceRequests(const StepBatch& batch, const SpeculativeConfig& spec,
                     RequestTable& requests, StepOutcome* out) {
  for (const ScheduledSeq& s : batch.seqs) {
    Request& r = requests[s.id];
    SERVESIM_CHECK(!r.finished, "a finished request was scheduled");
    const int64_t pending = r.known_tokens() - r.computed_tokens;
    if (!s.is_decode) {
      SERVESIM_CHECK(s.query_tokens <= pending, "prefill chunk past the prompt");
      r.computed_tokens += s.query_tokens;
      if (r.computed_tokens < r.known_tokens()) continue;  // more chunks to go
    }
    // The step sampled: one token, plus accepted drafts on a decode with
    // speculation. Acceptance accumulates its expectation deterministically,
    // so a request with mean 0.7 accepts 7 drafts in 10 steps. A decode the
    // token budget cut short verifies only the drafts it carries (vLLM trims
    // the rest), credited pro rata [U: acceptance falls along the drafts].
    int64_t tokens = 1;
    if (s.is_decode && spec.num_draft_tokens > 0) {
      const int64_t verified = std::clamp<int64_t>(s.query_tokens - 1, 0, spec.num_draft_tokens);
      const double before = r.spec_accept_credit;
      r.spec_accept_credit += spec.mean_accepted_drafts * static_cast<double>(verified) /
                              static_cast<double>(spec.num_draft_tokens);
      tokens += static_cast<int64_t>(std::floor(r.spec_accept_credit)) -
                static_cast<int64_t>(std::floor(before));
    }
    tokens = std::min(tokens, r.final_output_tokens() - r.output_tokens);
    SERVESIM_CHECK(tokens > 0, "a request sampled past its output limit");
    r.output_tokens += tokens;
    // Every token but the newest has its KV written.
    r.computed_tokens = r.known_tokens() - 1;
    out->emitted.push_back({s.id, tokens});
    if (r.output_tokens >= r.final_output_tokens()) {
      r.finished = true;
      out->finished.push_back(s.id);
    }
  }
}

void CompleteStep(const StepBatch& batch, const SpeculativeConfig& spec, RequestTable& requests,
                  KvCacheManager& kv, std::vector<RequestId>& running, StepOutcome* out) {
  const size_t first_finished = out->finished.size();
  AdvanceRequests(batch, spec, requests, out);
  for (size_t i = first_finished; i < out->finished.size(); ++i) {
    const RequestId id = out->finished[i];
    kv.Free(id);
    auto it = std::find(running.begin(), running.end(), id);
    SERVESIM_CHECK(it != running.end(), "finished request not running");
    running.erase(it);
  }
}

}  // namespace servesim::engine
