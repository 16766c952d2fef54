#include "sim/engine/batch.h"

#include <cstdint>
#include <vector>

#include "gtest/gtest.h"
#include "sim/engine/kv_cache_manager.h"

namespace servesim::engine {
namespace {

Request MakeRequest(RequestId id, int64_t prompt, int64_t max_output) {
  Request r;
  r.id = id;
  r.prompt_tokens = prompt;
  r.max_output_tokens = max_output;
  return r;
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
  RequestTable requests = {MakeRequest(0, 100, 10)};
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
  RequestTable requests = {MakeRequest(0, 10, 1000)};
  requests[0].computed_tokens = 10;
  requests[0].output_tokens = 1;
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
  RequestTable requests = {MakeRequest(0, 10, 1000)};
  requests[0].computed_tokens = 10;
  requests[0].output_tokens = 1;
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
  RequestTable requests = {MakeRequest(0, 10, 3), MakeRequest(1, 10, 50)};
  requests[1].eos_output_tokens = 2;
  for (Request& r : requests) {
    r.computed_tokens = 10;
    r.output_tokens = 1;
  }
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
  RequestTable requests = {MakeRequest(0, 64, 1), MakeRequest(1, 64, 5)};
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
