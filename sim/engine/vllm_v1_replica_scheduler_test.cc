#include "sim/engine/vllm_v1_replica_scheduler.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <utility>

#include "sim/engine/request_table_for_test.h"

namespace servesim::engine {
namespace {

VllmSchedulerConfig Config(int64_t budget, int64_t blocks) {
  VllmSchedulerConfig c;
  c.max_num_batched_tokens = budget;
  c.kv_blocks = blocks;
  c.block_size_tokens = 16;
  return c;
}

TEST(VllmV1ReplicaSchedulerTest, ChunksPrefillsWithinTheTokenBudget) {
  RequestTable reqs = MakeRequests({{100, 4}, {100, 4}});
  VllmV1ReplicaScheduler s(Config(150, 100), reqs.size());
  s.Enqueue(0, reqs);
  s.Enqueue(1, reqs);
  StepBatch b;
  s.Schedule(reqs, &b);
  ASSERT_EQ(b.seqs.size(), 2u);
  EXPECT_EQ(b.seqs[0].query_tokens, 100);
  EXPECT_EQ(b.seqs[1].query_tokens, 50);  // chunked to the remaining budget
  EXPECT_EQ(b.num_tokens(), 150);
  StepOutcome out;
  s.Complete(b, reqs, &out);
  ASSERT_EQ(out.emitted.size(), 1u);  // only the finished prefill samples
  EXPECT_EQ(out.emitted[0].id, 0);
}

TEST(VllmV1ReplicaSchedulerTest, RunningRequestsComeBeforeWaitingOnes) {
  RequestTable reqs = MakeRequests({{10, 5}, {10, 5}, {200, 5}});
  VllmV1ReplicaScheduler s(Config(64, 100), reqs.size());
  for (RequestId id : {0, 1}) s.Enqueue(id, reqs);
  StepBatch b;
  StepOutcome out;
  s.Schedule(reqs, &b);
  s.Complete(b, reqs, &out);
  s.Enqueue(2, reqs);
  s.Schedule(reqs, &b);
  ASSERT_EQ(b.seqs.size(), 3u);
  EXPECT_TRUE(b.seqs[0].is_decode);
  EXPECT_TRUE(b.seqs[1].is_decode);
  EXPECT_EQ(b.seqs[2].id, 2);
  EXPECT_EQ(b.seqs[2].query_tokens, 62);  // 64 budget - 2 decodes
}

TEST(VllmV1ReplicaSchedulerTest, PreemptsTheNewestRunningRequestWhenBlocksRunOut) {
  // 4 blocks of 16 tokens. Two requests of 32-token prompts fill the pool;
  // the first decode needs a third block each.
  RequestTable reqs = MakeRequests({{32, 8}, {32, 8}});
  VllmV1ReplicaScheduler s(Config(1000, 4), reqs.size());
  s.Enqueue(0, reqs);
  s.Enqueue(1, reqs);
  StepBatch b;
  StepOutcome out;
  s.Schedule(reqs, &b);
  ASSERT_EQ(b.seqs.size(), 2u);
  s.Complete(b, reqs, &out);
  s.Schedule(reqs, &b);  // request 0 grows to 33 tokens: 3 blocks
  EXPECT_EQ(s.num_preemptions(), 1);
  ASSERT_EQ(b.seqs.size(), 1u);
  EXPECT_EQ(b.seqs[0].id, 0);
  EXPECT_EQ(reqs[1].computed_tokens, 0);  // recompute preemption
  EXPECT_EQ(s.num_waiting(), 1);
  // Request 1's two blocks went back to the pool; request 0 holds three.
  EXPECT_EQ(s.kv_cache().blocks_of(0), 3);
  EXPECT_EQ(s.kv_cache().blocks_of(1), 0);
  EXPECT_EQ(s.kv_cache().used_blocks(), 3);
}

// vLLM puts a preempted request back at the head of the waiting queue
// (waiting.prepend_request): it is admitted again before a request queued
// ahead of the preemption. (Request 2 would fit the one free block at once;
// it waits behind request 1, which fits only once request 0 finishes.)
TEST(VllmV1ReplicaSchedulerTest, APreemptedRequestResumesBeforeOnesQueuedEarlier) {
  RequestTable reqs = MakeRequests({{32, 8}, {32, 8}, {16, 2}});
  VllmV1ReplicaScheduler s(Config(1000, 4), reqs.size());
  s.Enqueue(0, reqs);
  s.Enqueue(1, reqs);
  StepBatch b;
  StepOutcome out;
  s.Schedule(reqs, &b);  // both prompts: the pool is full
  s.Complete(b, reqs, &out);
  s.Enqueue(2, reqs);
  s.Schedule(reqs, &b);  // request 0's decode preempts request 1
  ASSERT_EQ(s.num_preemptions(), 1);
  s.Complete(b, reqs, &out);
  std::vector<RequestId> order;  // first scheduled after the preemption
  for (int step = 0; step < 30 && order.size() < 2; ++step) {
    s.Schedule(reqs, &b);
    for (const ScheduledSeq& q : b.seqs) {
      if (q.id != 0 && std::find(order.begin(), order.end(), q.id) == order.end()) {
        order.push_back(q.id);
      }
    }
    s.Complete(b, reqs, &out);
  }
  EXPECT_EQ(order, (std::vector<RequestId>{1, 2}));
}

// At most max_num_seqs requests run: a third waits while two decode.
TEST(VllmV1ReplicaSchedulerTest, MaxNumSeqsCapsTheRunningRequests) {
  RequestTable reqs = MakeRequests({{8, 5}, {8, 5}, {8, 5}});
  VllmSchedulerConfig c = Config(1000, 100);
  c.max_num_seqs = 2;
  VllmV1ReplicaScheduler s(c, reqs.size());
  for (RequestId id : {0, 1, 2}) s.Enqueue(id, reqs);
  StepBatch b;
  StepOutcome out;
  for (int step = 0; step < 4; ++step) {  // 1 prefill + 3 of the 4 decodes
    s.Schedule(reqs, &b);
    ASSERT_EQ(b.seqs.size(), 2u) << step;
    EXPECT_EQ(b.seqs[0].id, 0);
    EXPECT_EQ(b.seqs[1].id, 1);
    EXPECT_EQ(s.num_running(), 2);
    EXPECT_EQ(s.num_waiting(), 1);
    s.Complete(b, reqs, &out);
  }
}

// The preemption scenario above, run until request 1 is scheduled again:
// the first query chunk it gets back.
ScheduledSeq FirstStepAfterPreemption(bool prefix_caching) {
  RequestTable reqs = MakeRequests({{32, 8}, {32, 8}});
  VllmSchedulerConfig c = Config(1000, 4);
  c.prefix_caching = prefix_caching;
  VllmV1ReplicaScheduler s(c, reqs.size());
  s.Enqueue(0, reqs);
  s.Enqueue(1, reqs);
  StepBatch b;
  StepOutcome out;
  for (int step = 0; step < 20; ++step) {
    s.Schedule(reqs, &b);
    if (s.num_preemptions() == 1) {
      for (const ScheduledSeq& seq : b.seqs) {
        if (seq.id == 1) return seq;
      }
    }
    s.Complete(b, reqs, &out);
  }
  ADD_FAILURE() << "request 1 was not scheduled again";
  return {};
}

TEST(VllmV1ReplicaSchedulerTest, PrefixCachingResumesAPreemptedRequestFromItsSurvivingBlocks) {
  // Request 1 is preempted with 32 tokens computed: 2 full blocks stay cached
  // at the back of the free queue. Request 0's third block is the first one
  // taken from that queue, request 1's tail block, so one block (16 tokens)
  // survives until request 0 finishes. Request 1 then knows 33 tokens (its
  // prompt and one output) and computes 33 - 16 of them.
  const ScheduledSeq cached = FirstStepAfterPreemption(true);
  EXPECT_EQ(cached.context_before, 16);
  EXPECT_EQ(cached.query_tokens, 17);
  const ScheduledSeq recomputed = FirstStepAfterPreemption(false);
  EXPECT_EQ(recomputed.context_before, 0);
  EXPECT_EQ(recomputed.query_tokens, 33);
}

// Two prompts of 100 tokens that share their first 70, scheduled in one
// step by a scheduler configured as `c`: the step's batch, and the blocks
// used after it.
std::pair<StepBatch, int64_t> FirstStepOfTwoSharingAPrefix(const VllmSchedulerConfig& c) {
  RequestTable reqs = MakeRequestsSharingAPrefix({{100, 4}, {100, 4}}, 70);
  VllmV1ReplicaScheduler s(c, reqs.size());
  s.Enqueue(0, reqs);
  s.Enqueue(1, reqs);
  StepBatch b;
  s.Schedule(reqs, &b);
  return {b, s.kv_cache().used_blocks()};
}

// The first computes the 4 full shared blocks, and the second, scheduled
// after it in the same step, finds them cached (vLLM caches a block's hash
// when it allocates it) and computes only the rest. Without prefix caching
// both prefill in full.
TEST(VllmV1ReplicaSchedulerTest, RequestsOfAPrefixGroupReuseItsFullBlocks) {
  for (bool caching : {true, false}) {
    VllmSchedulerConfig c = Config(1000, 100);
    c.prefix_caching = caching;
    auto [b, used_blocks] = FirstStepOfTwoSharingAPrefix(c);
    ASSERT_EQ(b.seqs.size(), 2u);
    EXPECT_EQ(b.seqs[0].query_tokens, 100);
    EXPECT_EQ(b.seqs[1].query_tokens, caching ? 100 - 64 : 100);
    EXPECT_EQ(b.seqs[1].context_before, caching ? 64 : 0);
    // 7 blocks each, the 4 shared ones once.
    EXPECT_EQ(used_blocks, caching ? 7 + 3 : 14);
  }
}

// Under MTP the second prompt matches one block less (3 of the 4 shared):
// vLLM pops the last matched block so the drafter sees its hidden state.
TEST(VllmV1ReplicaSchedulerTest, MtpGivesBackTheLastMatchedBlock) {
  VllmSchedulerConfig c = Config(1000, 100);
  c.spec = {1, 0.5};
  auto [b, used_blocks] = FirstStepOfTwoSharingAPrefix(c);
  ASSERT_EQ(b.seqs.size(), 2u);
  EXPECT_EQ(b.seqs[1].context_before, 48);
  EXPECT_EQ(b.seqs[1].query_tokens, 100 - 48);
  EXPECT_EQ(used_blocks, 7 + 4);  // the given-back block is computed again in a block of its own
}

// Under MTP a running request also holds KV slots for the next step's k
// drafts (vLLM's num_lookahead_tokens): a 14-token prompt's first decode
// (1 + 1 draft, 16 tokens) fills its 16-token block, and the lookahead
// takes a second block. A prefill from the waiting queue reserves none.
TEST(VllmV1ReplicaSchedulerTest, MtpDecodeHoldsSlotsForTheNextDrafts) {
  for (int drafts : {0, 1}) {
    RequestTable reqs = MakeRequests({{14, 10}});
    VllmSchedulerConfig c = Config(100, 10);
    c.spec = {drafts, 0.5};
    VllmV1ReplicaScheduler s(c, reqs.size());
    s.Enqueue(0, reqs);
    StepBatch b;
    StepOutcome out;
    s.Schedule(reqs, &b);
    EXPECT_EQ(s.kv_cache().used_blocks(), 1) << drafts;
    s.Complete(b, reqs, &out);
    s.Schedule(reqs, &b);
    ASSERT_EQ(b.seqs.size(), 1u);
    EXPECT_EQ(b.seqs[0].query_tokens, 1 + drafts);
    EXPECT_EQ(s.kv_cache().used_blocks(), drafts == 0 ? 1 : 2) << drafts;
  }
}

// Runs request 0 alone with `spec` until it finishes; `on_step(batch, i)`
// sees each step's batch. Returns the steps taken.
int StepsOfALoneRequest(RequestTable& reqs, SpeculativeConfig spec,
                        const std::function<void(const StepBatch&, int)>& on_step = {}) {
  VllmSchedulerConfig c = Config(1000, 100);
  c.spec = spec;
  VllmV1ReplicaScheduler s(c, reqs.size());
  s.Enqueue(0, reqs);
  StepBatch b;
  StepOutcome out;
  int steps = 0;
  while (s.HasWork()) {
    s.Schedule(reqs, &b);
    if (on_step) on_step(b, steps);
    out.clear();
    s.Complete(b, reqs, &out);
    ++steps;
  }
  return steps;
}

TEST(VllmV1ReplicaSchedulerTest, SpeculativeDecodeAcceptsTheMeanNumberOfDrafts) {
  RequestTable reqs = MakeRequests({{8, 101}});
  // 1 draft, accepted half of the time.
  const int steps = StepsOfALoneRequest(reqs, {1, 0.5}, [](const StepBatch& b, int i) {
    if (i > 0) {
      EXPECT_EQ(b.seqs[0].query_tokens, 2);  // 1 + 1 draft
    }
  });
  // 1 prefill step emits 1 token; 100 more at 1.5 per decode step: 67 steps.
  EXPECT_EQ(reqs[0].output_tokens, 101);
  EXPECT_EQ(steps, 1 + 67);
}

// The accepted count is the expectation rounded: at a mean of 0.6 a
// request's first decode step accepts its draft (0.5 + 0.6 = 1.1), so a
// 3-token reply takes its prefill step and one decode step. (Floored, it
// took two decode steps, as if there were no MTP.)
TEST(VllmV1ReplicaSchedulerTest, AShortReplyGainsFromItsFirstDraft) {
  RequestTable reqs = MakeRequests({{8, 3}});
  EXPECT_EQ(StepsOfALoneRequest(reqs, {1, 0.6}), 2);
  EXPECT_EQ(reqs[0].output_tokens, 3);
}

// A decode the token budget cuts short carries no draft, so it can accept
// none: with 3 tokens of budget and every draft accepted, the first decode
// (1 + 1 draft) emits 2 tokens and the second, cut to 1 token, emits 1.
TEST(VllmV1ReplicaSchedulerTest, ADecodeCutByTheBudgetAcceptsOnlyTheDraftsItCarries) {
  RequestTable reqs = MakeRequests({{1, 50}, {1, 50}});
  VllmSchedulerConfig c = Config(3, 100);
  c.spec = {1, 1.0};
  VllmV1ReplicaScheduler s(c, reqs.size());
  s.Enqueue(0, reqs);
  s.Enqueue(1, reqs);
  StepBatch b;
  StepOutcome out;
  s.Schedule(reqs, &b);  // both 1-token prompts
  ASSERT_EQ(b.seqs.size(), 2u);
  s.Complete(b, reqs, &out);
  s.Schedule(reqs, &b);
  ASSERT_EQ(b.seqs.size(), 2u);
  EXPECT_EQ(b.seqs[0].query_tokens, 2);
  EXPECT_EQ(b.seqs[1].query_tokens, 1);
  ASSERT_TRUE(b.seqs[1].is_decode);
  out.clear();
  s.Complete(b, reqs, &out);
  EXPECT_EQ(reqs[0].output_tokens, 1 + 2);
  EXPECT_EQ(reqs[1].output_tokens, 1 + 1);
}

}  // namespace
}  // namespace servesim::engine
