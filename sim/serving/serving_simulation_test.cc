#include "sim/serving/serving_simulation.h"

#include <gtest/gtest.h>

#include "sim/engine/sglang_replica_scheduler.h"
#include "sim/engine/vllm_v1_replica_scheduler.h"

namespace servesim::serving {
namespace {

EngineTopology VllmTopology(int ranks, bool lockstep, int64_t kv_blocks) {
  EngineTopology t;
  t.num_ranks = ranks;
  t.lockstep = lockstep;
  t.make_scheduler = [kv_blocks](int, size_t n) {
    engine::VllmSchedulerConfig c;
    c.max_num_batched_tokens = 256;
    c.kv_blocks = kv_blocks;
    c.block_size_tokens = 16;
    return std::make_unique<engine::VllmV1ReplicaScheduler>(c, n);
  };
  return t;
}

SimulationInput Burst(int n) {
  SimulationInput in;
  for (int i = 0; i < n; ++i) {
    in.requests.push_back({20 + (i * 37) % 200, 1 + (i * 13) % 50, 0, sim::SimTime::Zero()});
  }
  return in;
}

cost::FakeExecutionTimePredictor Fake() {
  return cost::FakeExecutionTimePredictor(sim::Microseconds(1000), sim::Microseconds(10),
                                          sim::Microseconds(5));
}

TEST(ServingSimulationTest, EveryRequestedTokenIsProducedExactlyOnce) {
  auto predictor = Fake();
  SimulationInput in = Burst(100);
  // A small pool forces preemptions; conservation must survive them.
  auto result = RunServingSimulation(VllmTopology(1, false, 60), predictor, in);
  ASSERT_TRUE(result.ok()) << result.status();
  int64_t want = 0, got = 0;
  for (const auto& r : in.requests) want += r.output_tokens;
  for (const auto& rec : result->records) {
    EXPECT_TRUE(rec.success);
    got += rec.output_tokens;
  }
  EXPECT_EQ(got, want);
  EXPECT_GT(result->preempted_or_retracted, 0);
}

// The chat endpoint's token-less SSE messages are chunks to the client: a
// role message with the first token (the same instant: TTFT unchanged, one
// ~0 ITL) and, where the engine sends one, a finish message after the last.
// Completions streams and engines without them keep one chunk per step.
TEST(ServingSimulationTest, ChatStreamMessagesAreTimedAsChunks) {
  auto predictor = Fake();
  SimulationInput plain = Burst(5);
  EngineTopology topology = VllmTopology(1, false, 600);
  topology.chat_stream = {.role_message_first = true, .finish_message_last = true};
  auto base = RunServingSimulation(topology, predictor, plain);  // not chat: no messages
  SimulationInput chat = plain;
  chat.chat_endpoint = true;
  auto framed = RunServingSimulation(topology, predictor, chat);
  ASSERT_TRUE(base.ok() && framed.ok());
  for (size_t i = 0; i < plain.requests.size(); ++i) {
    const auto& b = base->records[i].chunk_times;
    const auto& f = framed->records[i].chunk_times;
    ASSERT_EQ(f.size(), b.size() + 2) << i;
    EXPECT_EQ(f.front(), b.front());
    EXPECT_EQ(f[1], b.front());
    EXPECT_EQ(f.back(), b.back());
    EXPECT_EQ(f[f.size() - 2], b.back());
    EXPECT_EQ(framed->records[i].output_tokens, base->records[i].output_tokens);
  }
}

// Under an overlap scheduler the batch after the running one is formed as it
// starts: a request that arrives during step 1 is first scheduled in step 3
// (its first token comes with A's third), not step 2. Steps last at least
// 1 ms, so t = 0.5 ms is inside step 1.
TEST(ServingSimulationTest, OneStepAheadSchedulesALateArrivalInTheStepAfterNext) {
  SimulationInput in;
  in.requests.push_back({20, 10, 0, sim::SimTime::Zero()});
  in.requests.push_back({20, 3, 0, sim::Microseconds(500)});
  for (bool ahead : {false, true}) {
    auto predictor = Fake();
    EngineTopology topology = VllmTopology(1, false, 600);
    topology.schedules_one_step_ahead = ahead;
    auto result = RunServingSimulation(topology, predictor, in);
    ASSERT_TRUE(result.ok()) << result.status();
    const auto& a = result->records[0].chunk_times;
    const auto& b = result->records[1].chunk_times;
    ASSERT_GE(a.size(), 3u);
    EXPECT_EQ(b.front(), a[ahead ? 2 : 1]) << "ahead " << ahead;
    EXPECT_EQ(result->records[1].output_tokens, 3);
  }
}

// Lockstep DP ranks: both late arrivals wait for step 3, and the router
// counts the one it sent but the engine has not seen: B (rank 1, idle)
// then C to rank 0 (one running, against B waiting on rank 1).
TEST(ServingSimulationTest, OneStepAheadOnLockstepRanksCountsUnseenRequests) {
  SimulationInput in;
  in.requests.push_back({20, 10, 0, sim::SimTime::Zero()});
  in.requests.push_back({20, 3, 0, sim::Microseconds(500)});
  in.requests.push_back({20, 3, 0, sim::Microseconds(600)});
  in.record_steps = true;
  auto predictor = Fake();
  EngineTopology topology = VllmTopology(2, true, 600);
  topology.schedules_one_step_ahead = true;
  auto result = RunServingSimulation(topology, predictor, in);
  ASSERT_TRUE(result.ok()) << result.status();
  const auto& a = result->records[0].chunk_times;
  ASSERT_GE(a.size(), 3u);
  EXPECT_EQ(result->records[1].chunk_times.front(), a[2]);
  EXPECT_EQ(result->records[2].chunk_times.front(), a[2]);
  ASSERT_GE(result->step_records.size(), 3u);
  const StepRecord& third = result->step_records[2];
  EXPECT_EQ(third.ranks[0].prefill_seqs, 1);  // C
  EXPECT_EQ(third.ranks[1].prefill_seqs, 1);  // B
}

// The batch formed ahead still decodes a request that finished in the
// running step (SGLang's overlap loop frees its delayed token later): A
// stops at EOS in step 1, step 2 reruns it alone (1 ms + 10 us + 5 us), and
// B, which arrived during step 1, is prefilled in step 3. Where the engine
// knows a length stop ahead (vLLM's async scheduler), a request at its
// max_tokens is not rerun; and an engine with nothing to run reads its
// queue afresh, so B goes in step 2.
TEST(ServingSimulationTest, OneStepAheadDecodesAFinishedRequestOnceMore) {
  SimulationInput in;
  in.requests.push_back({20, 1, 50, sim::SimTime::Zero()});  // EOS after 1 of 50
  in.requests.push_back({20, 2, 0, sim::Microseconds(500)});
  auto plain = Fake(), overlapped = Fake(), length_aware = Fake();
  EngineTopology topology = VllmTopology(1, false, 600);
  auto base = RunServingSimulation(topology, plain, in);
  topology.schedules_one_step_ahead = true;
  auto ahead = RunServingSimulation(topology, overlapped, in);
  ASSERT_TRUE(base.ok() && ahead.ok());
  EXPECT_EQ(ahead->steps, base->steps + 2);  // A's rerun, and B's after its last token
  EXPECT_EQ(ahead->records[0].chunk_times, base->records[0].chunk_times);
  const sim::SimTime rerun = sim::Microseconds(1000 + 10 + 5);
  EXPECT_EQ(ahead->records[1].chunk_times.front(), base->records[1].chunk_times.front() + rerun);
  EXPECT_EQ(ahead->records[0].output_tokens, 1);

  in.requests[0].max_output_tokens = 0;  // now a length stop: max_tokens 1
  topology.sees_length_stops_ahead = true;
  auto plain_again = Fake();
  auto base_length = RunServingSimulation(VllmTopology(1, false, 600), plain_again, in);
  auto known = RunServingSimulation(topology, length_aware, in);
  ASSERT_TRUE(base_length.ok() && known.ok());
  EXPECT_EQ(known->records[1].chunk_times, base_length->records[1].chunk_times);
  EXPECT_EQ(known->steps, base_length->steps);
}

// SGLang's overlap loop forms a prefill batch ahead from new requests only
// (mixed chunk off): a request that finished in the running step is decoded
// once more only when the batch formed ahead is a decode batch. A finishes
// (its second token, a length stop) in step 2; B, seen at step 2's start,
// is prefilled in step 3, alone where prefill steps hold no decodes, with
// A's thrown-away decode row otherwise (a mixed-chunk engine).
TEST(ServingSimulationTest, APrefillBatchFormedAheadHoldsNoRerunWhenPrefillsHoldNoDecodes) {
  for (bool no_decodes : {true, false}) {
    auto predictor = Fake();
    EngineTopology t = VllmTopology(1, false, 1000);
    t.schedules_one_step_ahead = true;
    t.prefill_steps_hold_no_decodes = no_decodes;
    t.make_scheduler = [](int, size_t n) {
      engine::SglangSchedulerConfig c;
      c.kv_blocks = 1000;
      c.page_size_tokens = 16;
      return std::make_unique<engine::SglangReplicaScheduler>(c, n);
    };
    SimulationInput in;
    in.record_steps = true;
    in.requests.push_back({20, 2, 0, sim::SimTime::Zero()});
    in.requests.push_back({20, 2, 0, sim::Microseconds(500)});  // during step 1
    auto result = RunServingSimulation(t, predictor, in);
    ASSERT_TRUE(result.ok()) << result.status();
    ASSERT_GE(result->step_records.size(), 3u);
    const StepRecord::Rank& third = result->step_records[2].ranks[0];
    EXPECT_EQ(third.prefill_seqs, 1) << "no_decodes " << no_decodes;
    EXPECT_EQ(third.decode_seqs, no_decodes ? 0 : 1) << "no_decodes " << no_decodes;
    // B's first token comes with step 3: 1000 + 20 x 10 us of prefill, and
    // the rerun row's 10 + 5 us where it rides along.
    const sim::SimTime step3 = result->step_records[2].duration;
    EXPECT_EQ(step3, sim::Microseconds(no_decodes ? 1200 : 1215)) << "no_decodes " << no_decodes;
    EXPECT_EQ(result->records[0].output_tokens, 2);
    EXPECT_EQ(result->records[1].output_tokens, 2);
  }
}

// A predictor that gives no time (StepPredictor's answer to a step past a
// day) is an error naming the cause, not an abort (found by fuzzing
// profiles of absurd times).
TEST(ServingSimulationTest, AStepOfNoTimeIsAnError) {
  cost::FakeExecutionTimePredictor none(sim::SimTime::Zero(), sim::SimTime::Zero(),
                                        sim::SimTime::Zero());
  auto result = RunServingSimulation(VllmTopology(1, false, 600), none, Burst(3));
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.status().message(),
            "a step's predicted time is not a positive number of at most a day: the profile or "
            "the parameters give kernel times no GPU has");
}

// The engine prefills the chat template too, but the client reports only the
// tokens it counted: the records carry the client's count.
TEST(ServingSimulationTest, RecordsKeepTheClientsPromptCount) {
  auto plain = Fake(), templated = Fake();
  SimulationInput in = Burst(30);
  SimulationInput with_template = in;
  for (ClientRequest& r : with_template.requests) {
    r.client_prompt_tokens = r.prompt_tokens;
    r.prompt_tokens += 200;  // 6000 more prefill tokens in all
  }
  auto a = RunServingSimulation(VllmTopology(1, false, 1000), plain, in);
  auto b = RunServingSimulation(VllmTopology(1, false, 1000), templated, with_template);
  ASSERT_TRUE(a.ok() && b.ok());
  for (size_t i = 0; i < in.requests.size(); ++i) {
    EXPECT_EQ(b->records[i].prompt_tokens, in.requests[i].prompt_tokens);
  }
  // 30 x 200 more prefill tokens take more steps of the 256-token budget.
  EXPECT_GT(b->steps, a->steps);
  EXPECT_GT(b->duration, a->duration);
}

TEST(ServingSimulationTest, IdenticalInputsGiveIdenticalTimelines) {
  auto p1 = Fake(), p2 = Fake();
  SimulationInput in = Burst(50);
  auto a = RunServingSimulation(VllmTopology(4, true, 1000), p1, in);
  auto b = RunServingSimulation(VllmTopology(4, true, 1000), p2, in);
  ASSERT_TRUE(a.ok() && b.ok());
  ASSERT_EQ(a->duration, b->duration);
  for (size_t i = 0; i < a->records.size(); ++i) {
    EXPECT_EQ(a->records[i].chunk_times, b->records[i].chunk_times);
  }
}

// vllm bench serve starts its clock, then sleeps through the first request's
// arrival gap: a lone request sent at 2 s lasts 2 s longer in the report.
TEST(ServingSimulationTest, DurationRunsFromTheBenchmarkStartNotTheFirstSend) {
  auto p1 = Fake(), p2 = Fake();
  SimulationInput at_zero = Burst(1);
  SimulationInput late = at_zero;
  late.requests[0].arrival = sim::Seconds(2);
  auto a = RunServingSimulation(VllmTopology(1, false, 1000), p1, at_zero);
  auto b = RunServingSimulation(VllmTopology(1, false, 1000), p2, late);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(b->duration, a->duration + sim::Seconds(2));
}

TEST(ServingSimulationTest, MaxConcurrencyCapsRequestsInFlight) {
  auto predictor = Fake();
  SimulationInput in = Burst(20);
  in.max_concurrency = 3;
  auto result = RunServingSimulation(VllmTopology(1, false, 1000), predictor, in);
  ASSERT_TRUE(result.ok());
  // Sweep the [start, end] intervals: never more than 3 at once.
  std::vector<std::pair<int64_t, int>> edges;
  for (const auto& rec : result->records) {
    edges.push_back({rec.start.ns(), +1});
    edges.push_back({rec.chunk_times.back().ns(), -1});
  }
  std::sort(edges.begin(), edges.end());  // an end at t sorts before a start at t
  int live = 0, peak = 0;
  for (auto [t, d] : edges) peak = std::max(peak, live += d);
  EXPECT_EQ(peak, 3);
}

TEST(ServingSimulationTest, RejectedRequestsFailAtOnce) {
  auto predictor = Fake();
  EngineTopology t = VllmTopology(1, false, 1000);
  t.reject_reason = [](const ClientRequest& c) {
    return c.prompt_tokens > 150 ? std::string("too long") : std::string();
  };
  SimulationInput in = Burst(30);
  auto result = RunServingSimulation(t, predictor, in);
  ASSERT_TRUE(result.ok());
  int failed = 0;
  for (size_t i = 0; i < in.requests.size(); ++i) {
    const bool too_long = in.requests[i].prompt_tokens > 150;
    EXPECT_EQ(result->records[i].success, !too_long);
    failed += too_long;
  }
  EXPECT_EQ(result->rejected, failed);
  EXPECT_GT(failed, 0);
}

// An engine that shortens max_tokens (TensorRT-LLM's _deduce_max_tokens):
// each accepted request streams min(asked, cap) tokens and is counted once;
// a rejected one is not counted, though its cap is below what it asked.
TEST(ServingSimulationTest, AnOutputCapShortensTheStream) {
  auto predictor = Fake();
  EngineTopology t = VllmTopology(1, false, 1000);
  t.output_cap = [](const ClientRequest& c) { return 300 - c.prompt_tokens; };
  t.reject_reason = [](const ClientRequest& c) {
    return c.prompt_tokens >= 300 ? std::string("no room") : std::string();
  };
  SimulationInput in;
  in.requests.push_back({100, 50, 0, sim::SimTime::Zero()});    // 50 <= 200: as asked
  in.requests.push_back({250, 80, 0, sim::SimTime::Zero()});    // 80 > 50: 50
  in.requests.push_back({200, 40, 120, sim::SimTime::Zero()});  // EOS at 40, cap 100: 40
  in.requests.push_back({290, 30, 0, sim::SimTime::Zero()});    // 30 > 10: 10
  in.requests.push_back({300, 30, 0, sim::SimTime::Zero()});    // rejected
  auto result = RunServingSimulation(t, predictor, in);
  ASSERT_TRUE(result.ok()) << result.status();
  const int64_t expected[] = {50, 50, 40, 10, 0};
  for (size_t i = 0; i < 5; ++i) EXPECT_EQ(result->records[i].output_tokens, expected[i]) << i;
  EXPECT_EQ(result->output_capped, 3);  // the second, third (120 asked) and fourth
  EXPECT_EQ(result->rejected, 1);
}

// Behind a concurrency limit of 1, a long run of requests the server rejects
// is sent one after another at the same instant as the slot frees: each
// fails, the one accepted request after them succeeds, and the run ends (it
// had recursed once per rejected request and overflowed the stack).
TEST(ServingSimulationTest, ManyRejectedRequestsQueuedBehindOneSlot) {
  auto predictor = Fake();
  EngineTopology t = VllmTopology(1, false, 1000);
  t.reject_reason = [](const ClientRequest& c) {
    return c.prompt_tokens > 150 ? std::string("too long") : std::string();
  };
  SimulationInput in;
  in.max_concurrency = 1;
  in.requests.push_back({100, 5, 0, sim::SimTime::Zero()});
  constexpr int kRejected = 300000;
  for (int i = 0; i < kRejected; ++i) in.requests.push_back({1000, 5, 0, sim::Microseconds(1)});
  in.requests.push_back({100, 5, 0, sim::Microseconds(2)});
  auto result = RunServingSimulation(t, predictor, in);
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(result->rejected, kRejected);
  EXPECT_TRUE(result->records.front().success);
  EXPECT_TRUE(result->records.back().success);
  // The last request starts when the first ends: the rejections took no time.
  EXPECT_EQ(result->records.back().start, result->records.front().chunk_times.back());
}

// vLLM's balancer weighs a waiting request as four running ones, and the
// first of equal ranks wins.
TEST(LeastLoadedRankTest, WeighsWaitingFourTimesRunning) {
  EXPECT_EQ(LeastLoadedRank({{0, 3}, {1, 0}}), 0);          // 3 < 4
  EXPECT_EQ(LeastLoadedRank({{0, 5}, {1, 0}}), 1);          // 5 > 4
  EXPECT_EQ(LeastLoadedRank({{1, 0}, {0, 4}}), 0);          // 4 = 4: the first
  EXPECT_EQ(LeastLoadedRank({{2, 0}, {0, 9}, {1, 3}}), 2);  // 8, 9, 7
  EXPECT_EQ(LeastLoadedRank({{0, 0}}), 0);
}

// Round robin sends request i to rank i % 8: each rank prefills exactly its
// own requests' prompts (the pool is large enough that nothing is preempted
// and recomputed).
TEST(ServingSimulationTest, RoundRobinSpreadsABurstEvenly) {
  auto predictor = Fake();
  EngineTopology t = VllmTopology(8, true, 1000);
  t.router = RouterPolicy::kRoundRobin;
  SimulationInput in = Burst(80);
  in.record_steps = true;
  auto result = RunServingSimulation(t, predictor, in);
  ASSERT_TRUE(result.ok());
  ASSERT_EQ(result->preempted_or_retracted, 0);
  std::vector<int64_t> want(8, 0), got(8, 0);
  for (size_t i = 0; i < in.requests.size(); ++i) want[i % 8] += in.requests[i].prompt_tokens;
  for (const StepRecord& step : result->step_records) {
    ASSERT_EQ(step.ranks.size(), 8u);
    for (int r = 0; r < 8; ++r) got[r] += step.ranks[r].prefill_tokens;
  }
  EXPECT_EQ(got, want);
}

// Counts the engine-idle calls a rank receives; schedules as vLLM.
class IdleCountingScheduler : public engine::VllmV1ReplicaScheduler {
 public:
  IdleCountingScheduler(const engine::VllmSchedulerConfig& c, size_t n, int* idles)
      : VllmV1ReplicaScheduler(c, n), idles_(idles) {}
  void OnEngineIdle() override { ++*idles_; }

 private:
  int* idles_;
};

// An engine idles when none of its ranks has work: ranks in lockstep idle
// together (an idle DP-attention rank runs dummy batches while another rank
// works), independent ranks each on their own. Rank 0's 2-token request
// ends long before rank 1's 200-token one, and a third request reaches rank
// 0 (round robin) in between.
TEST(ServingSimulationTest, RanksInLockstepIdleOnlyTogether) {
  for (bool lockstep : {true, false}) {
    auto predictor = Fake();
    std::vector<int> idles(2, 0);
    EngineTopology t = VllmTopology(2, lockstep, 1000);
    t.router = RouterPolicy::kRoundRobin;
    t.make_scheduler = [&idles](int rank, size_t n) {
      engine::VllmSchedulerConfig c;
      c.max_num_batched_tokens = 256;
      c.kv_blocks = 1000;
      c.block_size_tokens = 16;
      return std::make_unique<IdleCountingScheduler>(c, n, &idles[rank]);
    };
    SimulationInput in;
    in.requests.push_back({20, 2, 0, sim::SimTime::Zero()});
    in.requests.push_back({20, 200, 0, sim::SimTime::Zero()});
    in.requests.push_back({20, 2, 0, sim::Microseconds(50000)});  // rank 1 still decoding
    auto result = RunServingSimulation(t, predictor, in);
    ASSERT_TRUE(result.ok()) << result.status();
    // Lockstep: both ranks idle once, at the end. Independent: rank 0 also
    // idles between its two requests.
    EXPECT_EQ(idles, (std::vector<int>{lockstep ? 1 : 2, 1})) << "lockstep " << lockstep;
  }
}

// SGLang under DP attention with speculative decoding runs one phase per
// step on every rank: while rank 1 prefills its late request, rank 0 runs an
// idle batch instead of decoding its own (prepare_mlp_sync_batch); without
// the rule rank 0 decodes beside rank 1's prefill.
TEST(ServingSimulationTest, RanksThatAgreeOnPhaseIdleWhileAnotherPrefills) {
  for (bool agree : {true, false}) {
    auto predictor = Fake();
    EngineTopology t = VllmTopology(2, true, 1000);
    t.router = RouterPolicy::kRoundRobin;
    t.ranks_agree_on_phase = agree;
    t.make_scheduler = [](int, size_t n) {
      engine::SglangSchedulerConfig c;
      c.kv_blocks = 1000;
      c.page_size_tokens = 16;
      c.spec = {1, 0.5};
      return std::make_unique<engine::SglangReplicaScheduler>(c, n);
    };
    SimulationInput in;
    in.record_steps = true;
    in.requests.push_back({20, 50, 0, sim::SimTime::Zero()});
    in.requests.push_back({20, 5, 0, sim::Microseconds(5000)});  // rank 1, rank 0 decoding
    auto result = RunServingSimulation(t, predictor, in);
    ASSERT_TRUE(result.ok()) << result.status();
    int mixed = 0, prefill_steps_on_rank1 = 0;
    for (const StepRecord& step : result->step_records) {
      if (step.ranks[1].prefill_seqs == 0) continue;
      ++prefill_steps_on_rank1;
      if (step.ranks[0].decode_seqs > 0) ++mixed;
    }
    EXPECT_EQ(prefill_steps_on_rank1, 1) << "agree " << agree;
    EXPECT_EQ(mixed, agree ? 0 : 1) << "agree " << agree;
    EXPECT_EQ(result->records[0].output_tokens, 50);
  }
}

// One request alone, timed by hand: a 20-token prefill step takes
// 1000 + 20 x 10 us and gives the first token; each decode step takes
// 1000 + 10 + 5 us.
TEST(ServingSimulationTest, ALoneRequestsTokensFollowTheStepTimes) {
  auto predictor = Fake();
  SimulationInput in;
  in.requests.push_back({20, 3, 0, sim::SimTime::Zero()});
  auto result = RunServingSimulation(VllmTopology(1, false, 1000), predictor, in);
  ASSERT_TRUE(result.ok()) << result.status();
  const std::vector<sim::SimTime> want = {sim::Microseconds(1200), sim::Microseconds(2215),
                                          sim::Microseconds(3230)};
  EXPECT_EQ(result->records[0].chunk_times, want);
  EXPECT_EQ(result->duration, sim::Microseconds(3230));
}

// vllm bench serve's duration ends with the last stream. An engine that
// schedules one step ahead runs one more decode of the finished request
// (1015 us), whose token nobody reads: that step is not in the duration.
TEST(ServingSimulationTest, DurationEndsAtTheLastStreamNotAtTheStepAfterIt) {
  auto predictor = Fake();
  SimulationInput in;
  in.requests.push_back({20, 3, 0, sim::SimTime::Zero()});
  EngineTopology topology = VllmTopology(1, false, 1000);
  topology.schedules_one_step_ahead = true;
  auto result = RunServingSimulation(topology, predictor, in);
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(result->steps, 4);  // prefill, two decodes, the rerun
  EXPECT_EQ(result->records[0].chunk_times.back(), sim::Microseconds(3230));
  EXPECT_EQ(result->duration, sim::Microseconds(3230));
}

// Long and short requests alternate, one every 2 ms. Round robin over two
// nodes sends every long one to node 0; least-outstanding sees node 1 drain
// its short ones and sends it long ones too, so the run ends sooner.
SimulationInput AlternatingLongShort(int n) {
  SimulationInput in;
  for (int i = 0; i < n; ++i) {
    in.requests.push_back({64, i % 2 == 0 ? 300 : 2, 0, sim::Milliseconds(2.0 * i)});
  }
  return in;
}

TEST(ServingSimulationTest, LeastOutstandingBalancerBeatsRoundRobinOnSkewedLoad) {
  auto p1 = Fake(), p2 = Fake();
  EngineTopology rr = VllmTopology(1, false, 1000);
  rr.replicas = 2;
  EngineTopology lor = rr;
  lor.replica_balancer = ReplicaBalancer::kLeastOutstanding;
  SimulationInput in = AlternatingLongShort(40);
  auto a = RunServingSimulation(rr, p1, in);
  auto b = RunServingSimulation(lor, p2, in);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_LT(b->duration, a->duration);
  int64_t tokens_a = 0, tokens_b = 0;
  for (const auto& r : a->records) tokens_a += r.output_tokens;
  for (const auto& r : b->records) tokens_b += r.output_tokens;
  EXPECT_EQ(tokens_a, tokens_b);
}

// nginx's least_conn takes servers tied on fewest connections in turn. Three
// nodes: a long request holds node 0; two short ones at t = 0 go to 1 and 2;
// later, one at a time, short requests find nodes 1 and 2 both idle, and go
// to 1, then 2 (the lowest-numbered of the tied would take both).
TEST(ServingSimulationTest, LeastOutstandingTakesTiedNodesInTurn) {
  auto predictor = Fake();
  EngineTopology topology = VllmTopology(1, false, 1000);
  topology.replicas = 3;
  topology.replica_balancer = ReplicaBalancer::kLeastOutstanding;
  SimulationInput in;
  in.requests.push_back({64, 1000, 0, sim::SimTime::Zero()});
  in.requests.push_back({64, 2, 0, sim::SimTime::Zero()});
  in.requests.push_back({64, 2, 0, sim::SimTime::Zero()});
  in.requests.push_back({64, 2, 0, sim::Milliseconds(100)});
  in.requests.push_back({64, 2, 0, sim::Milliseconds(200)});
  in.record_steps = true;
  auto result = RunServingSimulation(topology, predictor, in);
  ASSERT_TRUE(result.ok()) << result.status();
  std::vector<int> instances_after;  // the nodes other than 0 that ran a step, per arrival
  for (sim::SimTime at : {sim::Milliseconds(100), sim::Milliseconds(200)}) {
    int instance = -1;
    for (const StepRecord& step : result->step_records) {
      if (step.instance != 0 && step.start >= at && instance < 0) instance = step.instance;
    }
    instances_after.push_back(instance);
  }
  EXPECT_EQ(instances_after, (std::vector<int>{1, 2}));
}

TEST(ServingSimulationTest, TwoNodesFinishABurstSoonerThanOne) {
  auto p1 = Fake(), p2 = Fake();
  EngineTopology one = VllmTopology(1, false, 1000);
  EngineTopology two = one;
  two.replicas = 2;
  SimulationInput in = Burst(60);
  auto a = RunServingSimulation(one, p1, in);
  auto b = RunServingSimulation(two, p2, in);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_LT(b->duration, a->duration);
}

}  // namespace
}  // namespace servesim::serving
