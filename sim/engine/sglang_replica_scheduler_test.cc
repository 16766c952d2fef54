#include "sim/engine/sglang_replica_scheduler.h"

#include <gtest/gtest.h>

#include "sim/engine/request_table_for_test.h"

namespace servesim::engine {
namespace {

SglangSchedulerConfig Config(int64_t chunk, int64_t pages) {
  SglangSchedulerConfig c;
  c.chunked_prefill_size = chunk;
  c.kv_blocks = pages;
  c.page_size_tokens = 16;
  return c;
}

void Step(SglangReplicaScheduler& s, RequestTable& reqs, StepBatch* b) {
  StepOutcome out;
  s.Schedule(reqs, b);
  s.Complete(*b, reqs, &out);
}

// Request 0 runs alone for one step; then requests 1 and 2 arrive and the
// scheduler forms its next batch in `b`.
void RunFirstThenOfferTwo(SglangReplicaScheduler& s, RequestTable& reqs, StepBatch* b) {
  s.Enqueue(0, reqs);
  Step(s, reqs, b);
  s.Enqueue(1, reqs);
  s.Enqueue(2, reqs);
  s.Schedule(reqs, b);
}

TEST(SglangSchedulerConfigTest, DpAttentionConservativenessGivesTheDocumentedRatios) {
  SglangSchedulerConfig c;
  c.SetConservativeness(0.3);  // 1.0 x 0.3 under DP attention
  EXPECT_NEAR(c.init_new_token_ratio, 0.21, 1e-12);
  EXPECT_NEAR(c.min_new_token_ratio, 0.0294, 1e-12);
  EXPECT_NEAR(c.new_token_ratio_decay, (0.21 - 0.0294) / 600, 1e-15);
}

TEST(SglangReplicaSchedulerTest, PrefillBatchesRunBeforeDecodesAndNeverMix) {
  RequestTable reqs = MakeRequests({{32, 5}, {32, 5}});
  SglangReplicaScheduler s(Config(1000, 100), reqs.size());
  s.Enqueue(0, reqs);
  StepBatch b;
  Step(s, reqs, &b);  // prefill of 0
  s.Enqueue(1, reqs);
  s.Schedule(reqs, &b);
  // Request 0 could decode, but a prefill batch can be formed: prefill only.
  ASSERT_EQ(b.seqs.size(), 1u);
  EXPECT_EQ(b.seqs[0].id, 1);
  EXPECT_FALSE(b.seqs[0].is_decode);
  StepOutcome out;
  s.Complete(b, reqs, &out);
  s.Schedule(reqs, &b);  // nothing waiting: one decode batch of both
  ASSERT_EQ(b.seqs.size(), 2u);
  EXPECT_TRUE(b.seqs[0].is_decode && b.seqs[1].is_decode);
}

TEST(SglangReplicaSchedulerTest, ChunksOneRequestAtAPageBoundaryAndContinuesItFirst) {
  RequestTable reqs = MakeRequests({{100, 4}, {75, 4}, {10, 4}});
  SglangReplicaScheduler s(Config(90, 100), reqs.size());
  for (RequestId id : {0, 1, 2}) s.Enqueue(id, reqs);
  StepBatch b;
  s.Schedule(reqs, &b);
  // 100 > 90: truncated to 80 (5 pages of 16); the chunk budget is spent.
  ASSERT_EQ(b.seqs.size(), 1u);
  EXPECT_EQ(b.seqs[0].query_tokens, 80);
  StepOutcome out;
  s.Complete(b, reqs, &out);
  EXPECT_TRUE(out.emitted.empty());
  s.Schedule(reqs, &b);
  // The chunked request's last 20 first, charged as 2 whole pages (32) of the
  // chunk budget as ceil_paged_tokens charges it; then request 1 (75, 80 in
  // pages, > 58 left) chunked to the 48 tokens of whole pages that remain.
  ASSERT_EQ(b.seqs.size(), 2u);
  EXPECT_EQ(b.seqs[0].id, 0);
  EXPECT_EQ(b.seqs[0].query_tokens, 20);
  EXPECT_EQ(b.seqs[0].context_before, 80);
  EXPECT_EQ(b.seqs[1].id, 1);
  EXPECT_EQ(b.seqs[1].query_tokens, 48);  // (90 - 32) rounded down to pages
}

TEST(SglangReplicaSchedulerTest, ChargesThePrefillBudgetsInWholePages) {
  // add_one_req charges ceil_paged_tokens(input): a 17-token prompt takes two
  // 16-token pages (32) of a 100-token chunk budget, so three fit where their
  // raw 17 tokens would let all five in.
  RequestTable reqs = MakeRequests({{17, 4}, {17, 4}, {17, 4}, {17, 4}, {17, 4}});
  SglangReplicaScheduler s(Config(100, 100), reqs.size());
  for (RequestId id : {0, 1, 2, 3, 4}) s.Enqueue(id, reqs);
  StepBatch b;
  s.Schedule(reqs, &b);
  ASSERT_EQ(b.seqs.size(), 3u);
  for (const ScheduledSeq& q : b.seqs) EXPECT_EQ(q.query_tokens, 17);

  // Whether a prompt runs whole is its raw length against what is left of
  // the chunk: 100 tokens fit a 100-token chunk whole, where their 112 paged
  // tokens would be cut to 96 [U: the choice the scheduler documents].
  RequestTable reqs3 = MakeRequests({{100, 4}});
  SglangReplicaScheduler s3(Config(100, 100), reqs3.size());
  s3.Enqueue(0, reqs3);
  s3.Schedule(reqs3, &b);
  ASSERT_EQ(b.seqs.size(), 1u);
  EXPECT_EQ(b.seqs[0].query_tokens, 100);

  // max_prefill_tokens: a later prompt is refused when its paged input reaches
  // what is left (input_tokens >= rem_input_tokens), not only when it exceeds it.
  SglangSchedulerConfig c = Config(0, 100);  // no chunking
  c.max_prefill_tokens = 64;
  RequestTable reqs2 = MakeRequests({{32, 4}, {32, 4}});
  SglangReplicaScheduler s2(c, reqs2.size());
  for (RequestId id : {0, 1}) s2.Enqueue(id, reqs2);
  s2.Schedule(reqs2, &b);
  ASSERT_EQ(b.seqs.size(), 1u);
  EXPECT_EQ(b.seqs[0].id, 0);
}

// SGLang inserts a prefill's KV into the radix tree after the forward: two
// requests sharing a 64-token prefix in one prefill batch both compute it;
// a third, admitted in a later batch, matches it (its last page short of
// its last token, as match_prefix leaves one token to compute).
TEST(SglangReplicaSchedulerTest, APrefixIsMatchedOnlyAfterTheBatchThatComputesIt) {
  RequestTable reqs = MakeRequestsSharingAPrefix({{80, 4}, {80, 4}, {80, 4}}, 64);
  SglangReplicaScheduler s(Config(1000, 100), reqs.size());
  s.Enqueue(0, reqs);
  s.Enqueue(1, reqs);
  StepBatch b;
  s.Schedule(reqs, &b);
  ASSERT_EQ(b.seqs.size(), 2u);
  EXPECT_EQ(b.seqs[0].query_tokens, 80);
  EXPECT_EQ(b.seqs[1].query_tokens, 80);  // not 16: the prefix is not in the tree yet
  StepOutcome out;
  s.Complete(b, reqs, &out);
  s.Enqueue(2, reqs);
  s.Schedule(reqs, &b);
  ASSERT_EQ(b.seqs.size(), 1u);
  EXPECT_EQ(b.seqs[0].id, 2);
  EXPECT_EQ(b.seqs[0].query_tokens, 16);
  EXPECT_EQ(b.seqs[0].context_before, 64);
}

TEST(SglangReplicaSchedulerTest, AdmissionReservesRunningOutputAtTheNewTokenRatio) {
  // 20 pages x 16 = 320 tokens. Request 0 runs with 200 outputs left; at
  // ratio 0.7 it reserves 140 of them.
  RequestTable reqs = MakeRequests({{16, 201}, {16, 100}, {16, 10}});
  SglangSchedulerConfig c = Config(1000, 20);
  SglangReplicaScheduler s(c, reqs.size());
  StepBatch b;
  RunFirstThenOfferTwo(s, reqs, &b);  // request 0: 16 prompt tokens, 1 page; 200 outputs left
  // rem_total = 19 free pages * 16 = 304 - 0.7 * 200 = 164. Request 1 needs
  // 16 + 100 = 116 < 164: admitted, leaving 48; request 2 needs 16 + 10 = 26
  // < 48: admitted too.
  EXPECT_EQ(b.seqs.size(), 2u);
  // With a tighter pool request 2 would be refused: check the boundary.
  RequestTable reqs2 = MakeRequests({{16, 201}, {16, 130}, {16, 10}});
  SglangReplicaScheduler s2(c, reqs2.size());
  RunFirstThenOfferTwo(s2, reqs2, &b);
  // 164 - (16 + 130) = 18 < 26: request 2 waits (and FCFS stops there).
  ASSERT_EQ(b.seqs.size(), 1u);
  EXPECT_EQ(b.seqs[0].id, 1);
}

TEST(SglangReplicaSchedulerTest, AdmissionPlansWithTheCapWhileGenerationStopsAtEos) {
  // The same pool as above. Request 1 asks for up to 130 tokens but will stop
  // at EOS after 3: the scheduler cannot know, so it reserves the cap and
  // request 2 still waits; request 1 then finishes after 3 tokens.
  RequestTable reqs = MakeRequests({{16, 201}, {16, 130}, {16, 10}});
  reqs[1].eos_output_tokens = 3;
  SglangReplicaScheduler s(Config(1000, 20), reqs.size());
  StepBatch b;
  RunFirstThenOfferTwo(s, reqs, &b);
  ASSERT_EQ(b.seqs.size(), 1u);
  EXPECT_EQ(b.seqs[0].id, 1);
  StepOutcome out;
  s.Complete(b, reqs, &out);  // prefill: first token
  for (int i = 0; i < 10 && !reqs[1].finished; ++i) Step(s, reqs, &b);
  EXPECT_TRUE(reqs[1].finished);
  EXPECT_EQ(reqs[1].output_tokens, 3);
  EXPECT_FALSE(reqs[0].finished);
}

// Steps until `waiting` is scheduled (at most 600 steps): the step it first
// runs and the step `finishing` finished (-1 for either that did not happen).
std::pair<int, int> StepUntilAdmitted(SglangReplicaScheduler& s, RequestTable& reqs,
                                      RequestId waiting, RequestId finishing) {
  StepBatch b;
  int admitted_at = -1, finished_at = -1;
  for (int step = 1; step < 600 && admitted_at < 0; ++step) {
    Step(s, reqs, &b);
    for (const ScheduledSeq& q : b.seqs) {
      if (q.id == waiting) admitted_at = step;
    }
    if (reqs[finishing].finished && finished_at < 0) finished_at = step;
  }
  return {admitted_at, finished_at};
}

// get_new_batch_prefill: a request refused for KV room marks the running
// batch full, and no prefill is tried again until the batch shrinks, even as
// the decaying new_token_ratio would let it in (here from about step 270).
TEST(SglangReplicaSchedulerTest, ARefusalForKvRoomWaitsForARequestToFinish) {
  RequestTable reqs = MakeRequests({{16, 1000}, {800, 200}});
  reqs[0].eos_output_tokens = 400;
  SglangSchedulerConfig c = Config(1000, 100);  // 1600 tokens
  c.SetConservativeness(1.0);
  SglangReplicaScheduler s(c, reqs.size());
  s.Enqueue(0, reqs);
  StepBatch b;
  Step(s, reqs, &b);  // request 0's prefill
  // 99 free pages (1584 tokens) less 0.7 x 999 reserved = 885 < 800 + 200.
  s.Enqueue(1, reqs);
  const auto [admitted_at, finished_at] = StepUntilAdmitted(s, reqs, 1, 0);
  ASSERT_GT(finished_at, 0);
  EXPECT_EQ(admitted_at, finished_at + 1);
}

// The same with another request still running: the finished request leaves
// the running batch, and the flag clears, only when update_running_batch
// forms the next decode step (get_next_batch_to_run tries the prefill first
// and finds the batch still full), so the refused request is admitted on
// the step after that one, not when the running batch empties. (Until
// 2026-12-06 the flag cleared as the request finished: admitted one step
// early.)
TEST(SglangReplicaSchedulerTest, AFinishClearsTheFullBatchWhileOthersRun) {
  RequestTable reqs = MakeRequests({{16, 500}, {600, 320}, {16, 500}});
  reqs[2].eos_output_tokens = 150;
  SglangSchedulerConfig c = Config(1000, 100);  // 1600 tokens
  c.SetConservativeness(1.0);
  SglangReplicaScheduler s(c, reqs.size());
  s.Enqueue(0, reqs);
  s.Enqueue(2, reqs);
  StepBatch b;
  Step(s, reqs, &b);  // both prefills
  // 96 free pages (1536 tokens) less 0.7 x (499 + 499) reserved < 600 + 320.
  s.Enqueue(1, reqs);
  const auto [admitted_at, finished_at] = StepUntilAdmitted(s, reqs, 1, 2);
  ASSERT_GT(finished_at, 0);
  EXPECT_FALSE(reqs[0].finished);
  EXPECT_EQ(admitted_at, finished_at + 2);
}

TEST(SglangReplicaSchedulerTest, RatioDecaysPerDecodeStepToItsFloor) {
  RequestTable reqs = MakeRequests({{16, 1000}});
  SglangSchedulerConfig c = Config(1000, 100);
  c.SetConservativeness(1.0);
  SglangReplicaScheduler s(c, reqs.size());
  s.Enqueue(0, reqs);
  StepBatch b;
  Step(s, reqs, &b);  // prefill: no decay
  EXPECT_DOUBLE_EQ(s.new_token_ratio(), 0.7);
  Step(s, reqs, &b);
  EXPECT_NEAR(s.new_token_ratio(), 0.7 - (0.7 - 0.098) / 600, 1e-12);
  for (int i = 0; i < 700; ++i) Step(s, reqs, &b);
  EXPECT_NEAR(s.new_token_ratio(), 0.098, 1e-12);
}

// self_check_during_idle: an engine that ran out of work starts the next
// admission at the initial ratio; one that is busy keeps its decayed ratio.
// (Whether the engine is idle is the simulation's to say: under DP attention
// only when every rank is, ServingSimulationTest.)
TEST(SglangReplicaSchedulerTest, RatioResetsWhenTheEngineGoesIdle) {
  RequestTable reqs = MakeRequests({{16, 11}, {16, 100}, {16, 100}});
  SglangSchedulerConfig c = Config(1000, 100);
  c.SetConservativeness(1.0);
  SglangReplicaScheduler s(c, reqs.size());
  s.Enqueue(0, reqs);
  StepBatch b;
  for (int i = 0; i < 11; ++i) Step(s, reqs, &b);  // prefill, then 10 decodes
  ASSERT_TRUE(reqs[0].finished);
  ASSERT_FALSE(s.HasWork());
  const double decayed = 0.7 - 10 * (0.7 - 0.098) / 600;
  EXPECT_NEAR(s.new_token_ratio(), decayed, 1e-12);
  s.Enqueue(1, reqs);  // an arrival alone resets nothing
  EXPECT_NEAR(s.new_token_ratio(), decayed, 1e-12);
  s.OnEngineIdle();
  EXPECT_DOUBLE_EQ(s.new_token_ratio(), 0.7);
  Step(s, reqs, &b);  // prefill of request 1
  Step(s, reqs, &b);  // one decode
  s.Enqueue(2, reqs);
  EXPECT_NEAR(s.new_token_ratio(), 0.7 - (0.7 - 0.098) / 600, 1e-12);
}

// match_prefix finds the pages an earlier member of the prefix group
// computed; --disable-radix-cache computes them again.
TEST(SglangReplicaSchedulerTest, RadixCacheServesAPrefixGroupsPagesToLaterMembers) {
  for (bool radix : {true, false}) {
    RequestTable reqs = MakeRequestsSharingAPrefix({{100, 4}, {100, 4}}, 70);
    SglangSchedulerConfig c = Config(1000, 100);
    c.radix_cache = radix;
    SglangReplicaScheduler s(c, reqs.size());
    s.Enqueue(0, reqs);
    StepBatch b;
    Step(s, reqs, &b);  // request 0's prefill
    s.Enqueue(1, reqs);
    s.Schedule(reqs, &b);
    ASSERT_EQ(b.seqs.size(), 1u);
    EXPECT_EQ(b.seqs[0].id, 1);
    EXPECT_EQ(b.seqs[0].query_tokens, radix ? 100 - 64 : 100);
  }
}

// 6 pages of 16, no output reserved at admission (everything is admitted),
// retraction down to one token of room per remaining request.
SglangSchedulerConfig RetractionConfig() {
  SglangSchedulerConfig c = Config(1000, 6);
  c.retract_decode_steps = 1;
  c.clip_max_new_tokens = 0;
  c.init_new_token_ratio = c.min_new_token_ratio = 0;
  c.new_token_ratio_decay = 0;
  return c;
}

// The first key of retract_decode's order: the fewest outputs. Request 0
// (the longest prompt) decodes a step alone, so at the shortage it has 2
// outputs against 1 and 2's one each; of those, the longer prompt (request
// 1) goes. By prompt length alone request 0 would.
TEST(SglangReplicaSchedulerTest, RetractsFewestOutputsBeforeLongestInput) {
  RequestTable reqs = MakeRequests({{31, 50}, {30, 50}, {20, 50}});
  SglangReplicaScheduler s(RetractionConfig(), reqs.size());
  s.Enqueue(0, reqs);
  StepBatch b;
  Step(s, reqs, &b);  // 0 prefills: 31 tokens in 2 pages, 1 output
  Step(s, reqs, &b);  // 0 decodes alone to 32 tokens: 2 outputs
  s.Enqueue(1, reqs);
  s.Enqueue(2, reqs);
  Step(s, reqs, &b);  // 1 (30 tokens) and 2 (20) prefill, 2 pages each: pool full
  ASSERT_EQ(s.kv_cache().free_blocks(), 0);
  ASSERT_EQ(s.num_retractions(), 0);
  s.Schedule(reqs, &b);  // request 0's 33rd token needs a third page
  EXPECT_EQ(s.num_retractions(), 1);
  EXPECT_EQ(reqs[1].preemptions, 1);
  EXPECT_EQ(reqs[0].preemptions, 0);
  EXPECT_EQ(reqs[2].preemptions, 0);
  // (outputs of 0 and 2 + 1 step x 2 requests) / (50 + 50 + 1).
  EXPECT_NEAR(s.new_token_ratio(), (2.0 + 1 + 2) / 101, 1e-12);
}

TEST(SglangReplicaSchedulerTest, RetractsTheRequestWithFewestOutputsLongestInputFirst) {
  // 6 pages of 16. Three requests; the pool runs out on decode.
  RequestTable reqs = MakeRequests({{30, 50}, {31, 50}, {20, 50}});
  SglangReplicaScheduler s(RetractionConfig(), reqs.size());
  s.Enqueue(0, reqs);
  StepBatch b;
  Step(s, reqs, &b);  // 0 prefills alone, emits 1 token: 31 tokens in 2 pages
  s.Enqueue(1, reqs);
  s.Enqueue(2, reqs);
  Step(s, reqs, &b);  // 1 (31 tokens, 2 pages) and 2 (20 tokens, 2 pages): pool full
  ASSERT_EQ(s.kv_cache().free_blocks(), 0);
  // First decode: 0 to 31 tokens, 1 to 32, 2 to 21: all within their pages.
  Step(s, reqs, &b);
  EXPECT_EQ(s.num_retractions(), 0);
  s.Schedule(reqs, &b);
  // Request 1 needs a third page. Every request has 2 outputs, so the tie
  // goes to the longest input: request 1 (31 tokens) is retracted, alone.
  EXPECT_EQ(s.num_retractions(), 1);
  EXPECT_EQ(reqs[1].computed_tokens, 0);
  EXPECT_EQ(reqs[1].preemptions, 1);
  EXPECT_EQ(reqs[0].preemptions, 0);
  EXPECT_EQ(s.num_waiting(), s.num_retractions());
  // retract_decode's new ratio: (outputs so far + steps x the requests left)
  // / (their max_new_tokens + 1) = (2 + 2 + 1 x 2) / (50 + 50 + 1).
  EXPECT_NEAR(s.new_token_ratio(), 6.0 / 101, 1e-12);
}

// The retraction scenario above with short outputs for requests 0 and 2, run
// until the retracted request 1 prefills again: its first chunk back.
ScheduledSeq FirstChunkAfterRetraction(bool radix_cache) {
  RequestTable reqs = MakeRequests({{30, 4}, {31, 50}, {20, 4}});
  SglangSchedulerConfig c = RetractionConfig();
  c.radix_cache = radix_cache;
  SglangReplicaScheduler s(c, reqs.size());
  s.Enqueue(0, reqs);
  StepBatch b;
  Step(s, reqs, &b);
  s.Enqueue(1, reqs);
  s.Enqueue(2, reqs);
  for (int step = 0; step < 20; ++step) {
    Step(s, reqs, &b);
    if (s.num_retractions() == 0) continue;
    for (const ScheduledSeq& seq : b.seqs) {
      if (seq.id == 1 && !seq.is_decode) return seq;
    }
  }
  ADD_FAILURE() << "request 1 did not prefill again";
  return {};
}

TEST(SglangReplicaSchedulerTest, RadixCacheKeepsARetractedRequestsPromptPages) {
  // Request 1 (31-token prompt, 2 outputs, 32 tokens computed) is retracted:
  // its prompt's one full page stays in the tree, the rest is freed. Request 0
  // takes the freed page for its last decode and finishes, so the cached page
  // survives; request 1 returns knowing 33 tokens and extends 33 - 16.
  const ScheduledSeq cached = FirstChunkAfterRetraction(true);
  EXPECT_EQ(cached.context_before, 16);
  EXPECT_EQ(cached.query_tokens, 17);
  const ScheduledSeq recomputed = FirstChunkAfterRetraction(false);
  EXPECT_EQ(recomputed.context_before, 0);
  EXPECT_EQ(recomputed.query_tokens, 33);
}

TEST(SglangReplicaSchedulerTest, CapsRunningRequests) {
  RequestTable reqs = MakeRequests({{8, 5}, {8, 5}, {8, 5}});
  SglangSchedulerConfig c = Config(1000, 100);
  c.max_running_requests = 2;
  SglangReplicaScheduler s(c, reqs.size());
  for (RequestId id : {0, 1, 2}) s.Enqueue(id, reqs);
  StepBatch b;
  s.Schedule(reqs, &b);
  EXPECT_EQ(b.seqs.size(), 2u);
  EXPECT_EQ(s.num_waiting(), 1);
}

TEST(SglangReplicaSchedulerTest, MixedChunkCarriesTheDecodesAndTakesTheirBudget) {
  RequestTable reqs = MakeRequests({{16, 5}, {200, 5}});
  SglangSchedulerConfig c = Config(96, 100);
  c.enable_mixed_chunk = true;
  SglangReplicaScheduler s(c, reqs.size());
  s.Enqueue(0, reqs);
  StepBatch b;
  Step(s, reqs, &b);
  s.Enqueue(1, reqs);
  s.Schedule(reqs, &b);
  ASSERT_EQ(b.seqs.size(), 2u);
  // (96 - 1 decode) rounded down to pages: 80 (the whole 96 without the
  // decode's share).
  EXPECT_EQ(b.seqs[0].query_tokens, 80);
  EXPECT_TRUE(b.seqs[1].is_decode);
}

}  // namespace
}  // namespace servesim::engine
