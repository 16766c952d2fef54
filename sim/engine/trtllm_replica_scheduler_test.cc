#include "sim/engine/trtllm_replica_scheduler.h"

#include <gtest/gtest.h>

#include "sim/engine/request_table_for_test.h"

namespace servesim::engine {
namespace {

TrtllmSchedulerConfig Config(int64_t max_num_tokens, int64_t blocks) {
  TrtllmSchedulerConfig c;
  c.max_num_tokens = max_num_tokens;
  c.kv_blocks = blocks;
  c.tokens_per_block = 32;
  return c;
}

TEST(TrtllmReplicaSchedulerTest, NoEvictReservesPromptPlusMaxTokensAtAdmission) {
  // 10 blocks of 32 = 320 tokens. Request 0 reserves 100 + 100 = 200 tokens
  // (7 blocks); request 1 would need 4 more blocks of the 3 left: it waits,
  // though its prompt alone (1 block) would fit.
  RequestTable reqs = MakeRequests({{100, 100}, {20, 100}});
  TrtllmReplicaScheduler s(Config(8192, 10), reqs.size());
  s.Enqueue(0, reqs);
  s.Enqueue(1, reqs);
  StepBatch b;
  s.Schedule(reqs, &b);
  ASSERT_EQ(b.seqs.size(), 1u);
  EXPECT_EQ(s.kv_cache().blocks_of(0), 7);
  EXPECT_EQ(s.num_waiting(), 1);
  // It never evicts: run to completion, then request 1 gets its turn.
  StepOutcome out;
  while (!reqs[0].finished) {
    s.Complete(b, reqs, &out);
    if (!reqs[0].finished) s.Schedule(reqs, &b);
  }
  EXPECT_EQ(reqs[0].preemptions, 0);
  s.Schedule(reqs, &b);
  ASSERT_EQ(b.seqs.size(), 1u);
  EXPECT_EQ(b.seqs[0].id, 1);
}

// The capacity scheduler is FCFS and stops at the first request whose
// reservation does not fit: a small one queued behind it waits too, though
// its own blocks would fit.
TEST(TrtllmReplicaSchedulerTest, NoEvictAdmissionStopsAtTheFirstThatDoesNotFit) {
  // 10 blocks of 32. Request 0 takes 7 (200 tokens); request 1 needs 10;
  // request 2 needs 2 (40 tokens) of the 3 left.
  RequestTable reqs = MakeRequests({{100, 100}, {200, 100}, {20, 20}});
  TrtllmReplicaScheduler s(Config(8192, 10), reqs.size());
  for (RequestId id : {0, 1, 2}) s.Enqueue(id, reqs);
  StepBatch b;
  s.Schedule(reqs, &b);
  ASSERT_EQ(b.seqs.size(), 1u);
  EXPECT_EQ(b.seqs[0].id, 0);
  EXPECT_EQ(s.num_waiting(), 2);
  EXPECT_EQ(s.kv_cache().blocks_of(2), 0);
}

// The micro-batch scheduler takes active requests in order until one does
// not fit the token budget; a shorter context behind it waits for a later
// step (no skipping ahead).
TEST(TrtllmReplicaSchedulerTest, TheTokenBudgetStopsAtTheFirstContextThatDoesNotFit) {
  RequestTable reqs = MakeRequests({{60, 4}, {60, 4}, {30, 4}});
  TrtllmReplicaScheduler s(Config(100, 100), reqs.size());
  for (RequestId id : {0, 1, 2}) s.Enqueue(id, reqs);
  StepBatch b;
  s.Schedule(reqs, &b);
  ASSERT_EQ(b.seqs.size(), 1u);  // 60 + 60 > 100, and the 30 behind waits
  EXPECT_EQ(b.seqs[0].id, 0);
  EXPECT_EQ(b.num_tokens(), 60);
}

TEST(TrtllmReplicaSchedulerTest, ContextAndGenerationShareOneStep) {
  RequestTable reqs = MakeRequests({{50, 10}, {60, 10}});
  TrtllmReplicaScheduler s(Config(8192, 100), reqs.size());
  s.Enqueue(0, reqs);
  StepBatch b;
  StepOutcome out;
  s.Schedule(reqs, &b);
  s.Complete(b, reqs, &out);
  s.Enqueue(1, reqs);
  s.Schedule(reqs, &b);
  ASSERT_EQ(b.seqs.size(), 2u);
  EXPECT_TRUE(b.seqs[0].is_decode);
  EXPECT_FALSE(b.seqs[1].is_decode);
  EXPECT_EQ(b.num_tokens(), 1 + 60);
}

TEST(TrtllmReplicaSchedulerTest, WithoutChunkingAContextRunsWholeOrWaits) {
  RequestTable reqs = MakeRequests({{60, 4}, {60, 4}});
  TrtllmReplicaScheduler s(Config(100, 100), reqs.size());
  s.Enqueue(0, reqs);
  s.Enqueue(1, reqs);
  StepBatch b;
  s.Schedule(reqs, &b);
  ASSERT_EQ(b.seqs.size(), 1u);  // 60 + 60 > 100: the second waits whole
  EXPECT_EQ(b.seqs[0].query_tokens, 60);

  TrtllmSchedulerConfig chunked = Config(100, 100);
  chunked.enable_chunked_prefill = true;
  RequestTable reqs2 = MakeRequests({{60, 4}, {60, 4}});
  TrtllmReplicaScheduler s2(chunked, reqs2.size());
  s2.Enqueue(0, reqs2);
  s2.Enqueue(1, reqs2);
  s2.Schedule(reqs2, &b);
  ASSERT_EQ(b.seqs.size(), 2u);
  EXPECT_EQ(b.seqs[1].query_tokens, 32);  // 40 left, cut to whole blocks
}

TEST(TrtllmReplicaSchedulerTest, MaxBatchSizeCapsAdmission) {
  RequestTable reqs = MakeRequests({{8, 4}, {8, 4}, {8, 4}});
  TrtllmSchedulerConfig c = Config(8192, 100);
  c.max_batch_size = 2;
  TrtllmReplicaScheduler s(c, reqs.size());
  for (RequestId id : {0, 1, 2}) s.Enqueue(id, reqs);
  StepBatch b;
  s.Schedule(reqs, &b);
  EXPECT_EQ(b.seqs.size(), 2u);
  EXPECT_EQ(s.num_waiting(), 1);
}

TEST(TrtllmReplicaSchedulerTest, MaxUtilizationAdmitsMoreAndEvictsTheNewest) {
  // 3 blocks of 32. Under MAX_UTILIZATION both 32-token prompts are admitted
  // (no reservation); the first decode needs a second block each.
  RequestTable reqs = MakeRequests({{32, 40}, {32, 40}});
  TrtllmSchedulerConfig c = Config(8192, 3);
  c.policy = TrtllmCapacityPolicy::kMaxUtilization;
  TrtllmReplicaScheduler s(c, reqs.size());
  s.Enqueue(0, reqs);
  s.Enqueue(1, reqs);
  StepBatch b;
  StepOutcome out;
  s.Schedule(reqs, &b);
  ASSERT_EQ(b.seqs.size(), 2u);
  s.Complete(b, reqs, &out);
  s.Schedule(reqs, &b);
  EXPECT_EQ(s.num_evictions(), 1);
  EXPECT_EQ(reqs[1].computed_tokens, 0);
  ASSERT_EQ(b.seqs.size(), 1u);
  EXPECT_EQ(b.seqs[0].id, 0);
}

// Found by an audit: every waiting prompt was checked against the free pool
// alone, so a burst was admitted whole into a pool that held a few prompts,
// and the newest were evicted after their prefill, step after step.
TEST(TrtllmReplicaSchedulerTest, MaxUtilizationAdmitsOnlyThePromptsWhoseBlocksFitTogether) {
  // 5 blocks of 32; 64-token prompts take 2 blocks each: two fit, not three.
  RequestTable reqs = MakeRequests({{64, 10}, {64, 10}, {64, 10}});
  TrtllmSchedulerConfig c = Config(8192, 5);
  c.policy = TrtllmCapacityPolicy::kMaxUtilization;
  TrtllmReplicaScheduler s(c, reqs.size());
  for (RequestId id = 0; id < 3; ++id) s.Enqueue(id, reqs);
  StepBatch b;
  s.Schedule(reqs, &b);
  ASSERT_EQ(b.seqs.size(), 2u);
  EXPECT_EQ(b.seqs[0].id, 0);
  EXPECT_EQ(b.seqs[1].id, 1);
  EXPECT_EQ(s.num_waiting(), 1);
  EXPECT_EQ(s.num_evictions(), 0);
}

// The tally counts a decoding request's drafts too: with 3 MTP drafts a
// decode at 30 tokens grows to 34, a second 32-token block, so a 32-token
// prompt that would fit beside a bare decode waits (a review found the
// drafts left out, which let the engine run short and evict).
TEST(TrtllmReplicaSchedulerTest, MaxUtilizationCountsTheDraftsOfADecodingRequest) {
  RequestTable reqs = MakeRequests({{29, 10}, {32, 10}});
  TrtllmSchedulerConfig c = Config(8192, 2);
  c.policy = TrtllmCapacityPolicy::kMaxUtilization;
  c.spec.num_draft_tokens = 3;
  TrtllmReplicaScheduler s(c, reqs.size());
  s.Enqueue(0, reqs);
  StepBatch b;
  StepOutcome out;
  s.Schedule(reqs, &b);  // request 0's prompt: one block
  ASSERT_EQ(b.seqs.size(), 1u);
  s.Complete(b, reqs, &out);
  s.Enqueue(1, reqs);
  s.Schedule(reqs, &b);
  ASSERT_EQ(b.seqs.size(), 1u);
  EXPECT_EQ(b.seqs[0].id, 0);
  EXPECT_EQ(s.num_waiting(), 1);
  EXPECT_EQ(s.num_evictions(), 0);
}

}  // namespace
}  // namespace servesim::engine
