#include "sim/engine/batch.h"

#include <cstdint>
#include <utility>
#include <vector>

#include "gtest/gtest.h"
#include "sim/engine/kv_cache_manager.h"
#include "sim/engine/request_table_for_test.h"

namespace servesim::engine {
namespace {

// As MakeRequests, each prompt already prefilled and its first token out:
// the state a decode step starts from.
RequestTable PrefilledRequests(const std::vector<std::pair<int64_t, int64_t>>& prompt_output) {
  RequestTable requests = MakeRequests(prompt_output);
  for (Request& r : requests) {
    r.computed_tokens = r.prompt_tokens;
    r.output_tokens = 1;
  }
  return requests;
}

ScheduledSeq Prefill(RequestId id, int64_t tokens, int64_t context_before) {
  return {id, tokens, context_before, /*is_decode=*/false};
}

ScheduledSeq Decode(RequestId id, int64_t query_tokens, int64_t context_before) {
  return {id, query_tokens, context_before, /*is_decode=*/true};
}

// A 100-token prompt in chunks of 60 and 40: the first chunk samples nothing,
// the last samples the first token, whose own KV is not yet written.
TEST(BatchTest, OnlyThePromptsLastChunkSamples) {
  RequestTable requests = MakeRequests({{100, 10}});
  StepOutcome out;
  AdvanceRequests({{Prefill(0, 60, 0)}}, {}, requests, &out);
  EXPECT_TRUE(out.emitted.empty());
  EXPECT_EQ(requests[0].computed_tokens, 60);
  EXPECT_EQ(requests[0].output_tokens, 0);

  AdvanceRequests({{Prefill(0, 40, 60)}}, {}, requests, &out);
  ASSERT_EQ(out.emitted.size(), 1u);
  EXPECT_EQ(out.emitted[0].tokens, 1);
  EXPECT_EQ(requests[0].output_tokens, 1);
  EXPECT_EQ(requests[0].computed_tokens, 100);  // known 101, the newest unwritten
  EXPECT_FALSE(requests[0].finished);
}

// One draft a step accepted at a mean of 0.7: ten decode steps give 10 + 7
// tokens, the expectation, not a random draw.
TEST(BatchTest, SpeculationAcceptsItsExpectation) {
  RequestTable requests = PrefilledRequests({{10, 1000}});
  const SpeculativeConfig spec{/*num_draft_tokens=*/1, /*mean_accepted_drafts=*/0.7};
  StepOutcome out;
  for (int step = 0; step < 10; ++step) {
    AdvanceRequests({{Decode(0, 2, requests[0].computed_tokens)}}, spec, requests, &out);
  }
  EXPECT_EQ(requests[0].output_tokens, 1 + 10 + 7);
  int64_t emitted = 0;
  for (const TokenEmission& e : out.emitted) emitted += e.tokens;
  EXPECT_EQ(emitted, 17);
}

// A decode the token budget cut to its one verified token carries no drafts
// and accepts none (vLLM trims the drafts that do not fit).
TEST(BatchTest, ADecodeWithoutItsDraftsAcceptsNone) {
  RequestTable requests = PrefilledRequests({{10, 1000}});
  const SpeculativeConfig spec{/*num_draft_tokens=*/3, /*mean_accepted_drafts=*/3.0};
  StepOutcome out;
  AdvanceRequests({{Decode(0, 1, 10)}}, spec, requests, &out);
  EXPECT_EQ(requests[0].output_tokens, 2);
  AdvanceRequests({{Decode(0, 4, 11)}}, spec, requests, &out);
  EXPECT_EQ(requests[0].output_tokens, 2 + 1 + 3);
}

// Accepted drafts never run a reply past its end: max_tokens, or EOS where
// the model stops first.
TEST(BatchTest, RepliesStopAtMaxTokensOrEos) {
  RequestTable requests = PrefilledRequests({{10, 3}, {10, 50}});
  requests[1].eos_output_tokens = 2;
  const SpeculativeConfig spec{/*num_draft_tokens=*/3, /*mean_accepted_drafts=*/3.0};
  StepOutcome out;
  AdvanceRequests({{Decode(0, 4, 10), Decode(1, 4, 10)}}, spec, requests, &out);
  EXPECT_EQ(requests[0].output_tokens, 3);
  EXPECT_EQ(requests[1].output_tokens, 2);
  ASSERT_EQ(out.finished.size(), 2u);
  EXPECT_EQ(out.finished[0], 0);
  EXPECT_EQ(out.finished[1], 1);
}

// A finished request's KV blocks go back to the pool and it leaves the
// running list; the others stay.
TEST(BatchTest, CompleteStepFreesWhatFinished) {
  RequestTable requests = MakeRequests({{64, 1}, {64, 5}});
  KvCacheManager kv(/*total_blocks=*/10, /*block_size_tokens=*/16, requests.size());
  ASSERT_TRUE(kv.GrowTo(0, 64));
  ASSERT_TRUE(kv.GrowTo(1, 64));
  EXPECT_EQ(kv.free_blocks(), 2);
  std::vector<RequestId> running = {0, 1};
  StepOutcome out;
  CompleteStep({{Prefill(0, 64, 0), Prefill(1, 64, 0)}}, {}, requests, kv, running, &out);
  EXPECT_TRUE(requests[0].finished);
  EXPECT_FALSE(requests[1].finished);
  EXPECT_EQ(running, std::vector<RequestId>{1});
  EXPECT_EQ(kv.free_blocks(), 6);
}

}  // namespace
}  // namespace servesim::engine
