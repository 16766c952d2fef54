#include "sim/planning/replicas.h"

#include <gtest/gtest.h>

#include "sim/runner/repo_context_for_test.h"

namespace servesim::planning {
namespace {

const runner::PredictionContext& Context() { return runner::RepoPredictionContext(); }

constexpr char kServe[] = "vllm serve deepseek-ai/DeepSeek-V3.2 -tp 8";
constexpr char kBench[] =
    "vllm bench serve --dataset-name random --random-input-len 512 --random-output-len 32 "
    "--random-range-ratio 0.5 --num-prompts 60 --request-rate 20";

TEST(RoundRobinShareTest, RequestIGoesToReplicaIModN) {
  EXPECT_EQ(RoundRobinShare(7, 3, 1), (std::vector<size_t>{1, 4}));
  EXPECT_EQ(RoundRobinShare(7, 3, 0), (std::vector<size_t>{0, 3, 6}));
  EXPECT_TRUE(RoundRobinShare(2, 3, 2).empty());
}

metrics::RequestRecord Record(int64_t start_ms, int64_t end_ms, int64_t tokens) {
  metrics::RequestRecord r;
  r.prompt_tokens = tokens;
  r.output_tokens = 1;
  r.success = true;
  r.start = sim::Milliseconds(start_ms);
  r.chunk_times = {sim::Milliseconds(end_ms)};
  return r;
}

TEST(MergeReplicaRecordsTest, InterleavesBackIntoRequestOrderAndSpansAllReplicas) {
  serving::SimulationResult a, b;
  a.records = {Record(30, 100, 0), Record(50, 400, 2)};  // requests 0 and 2
  a.duration = sim::Milliseconds(400);                   // benchmark start .. 400
  b.records = {Record(40, 900, 1)};                      // request 1
  b.duration = sim::Milliseconds(900);                   // benchmark start .. 900
  MergedRun m = MergeReplicaRecords({a, b});
  ASSERT_EQ(m.records.size(), 3u);
  for (int64_t i = 0; i < 3; ++i) EXPECT_EQ(m.records[i].prompt_tokens, i);
  // The client's clock starts before the first send (30 ms): the benchmark
  // lasts to the last completion of any replica.
  EXPECT_EQ(m.duration, sim::Milliseconds(900));
}

TEST(SimulateReplicasTest, OneReplicaIsExactlyRunnerPredict) {
  runner::RunRequest request{kServe, kBench, {}, -1};
  absl::StatusOr<runner::Prediction> p = runner::Predict(Context(), request);
  ASSERT_TRUE(p.ok()) << p.status();
  absl::StatusOr<PreparedWorkload> w = PrepareWorkload(Context(), kBench);
  ASSERT_TRUE(w.ok()) << w.status();
  absl::StatusOr<runner::PreparedRun> run = PrepareCandidate(Context(), kServe, {}, *w);
  ASSERT_TRUE(run.ok()) << run.status();
  absl::StatusOr<metrics::BenchMetrics> m = SimulateReplicas(Context(), *run, *w, 1, 1);
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_EQ(m->duration_s, p->metrics.duration_s);
  EXPECT_EQ(m->ttft.p99_ms, p->metrics.ttft.p99_ms);
  EXPECT_EQ(m->tpot.mean_ms, p->metrics.tpot.mean_ms);
  EXPECT_EQ(m->total_output_tokens, p->metrics.total_output_tokens);
}

TEST(SimulateReplicasTest, SplittingConservesRequestsAndTokensAndLowersLatency) {
  absl::StatusOr<PreparedWorkload> w = PrepareWorkload(Context(), kBench);
  ASSERT_TRUE(w.ok());
  absl::StatusOr<runner::PreparedRun> run = PrepareCandidate(Context(), kServe, {}, *w);
  ASSERT_TRUE(run.ok());
  absl::StatusOr<metrics::BenchMetrics> one = SimulateReplicas(Context(), *run, *w, 1, 1);
  absl::StatusOr<metrics::BenchMetrics> four = SimulateReplicas(Context(), *run, *w, 4, 2);
  absl::StatusOr<metrics::BenchMetrics> four_serial = SimulateReplicas(Context(), *run, *w, 4, 1);
  ASSERT_TRUE(one.ok() && four.ok() && four_serial.ok());
  EXPECT_EQ(four->completed, 60);
  EXPECT_EQ(four->total_input_tokens, one->total_input_tokens);
  EXPECT_EQ(four->total_output_tokens, one->total_output_tokens);
  // A quarter of the batch per replica: each decode step is no slower.
  EXPECT_LT(four->tpot.mean_ms, one->tpot.mean_ms);
  // Threads change nothing.
  EXPECT_EQ(four->ttft.p99_ms, four_serial->ttft.p99_ms);
  EXPECT_EQ(four->duration_s, four_serial->duration_s);
}

TEST(SimulateReplicasTest, MoreReplicasThanRequestsLeavesTheRestIdle) {
  absl::StatusOr<PreparedWorkload> w = PrepareWorkload(
      Context(), "vllm bench serve --dataset-name random --num-prompts 3 --random-output-len 4");
  ASSERT_TRUE(w.ok());
  absl::StatusOr<runner::PreparedRun> run = PrepareCandidate(Context(), kServe, {}, *w);
  absl::StatusOr<metrics::BenchMetrics> m = SimulateReplicas(Context(), *run, *w, 8, 2);
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_EQ(m->completed, 3);
}

TEST(SimulateReplicasTest, LeastOutstandingOnOneNodeIsExactlyRunnerPredict) {
  runner::RunRequest request{kServe, kBench, {}, -1};
  absl::StatusOr<runner::Prediction> p = runner::Predict(Context(), request);
  ASSERT_TRUE(p.ok()) << p.status();
  absl::StatusOr<PreparedWorkload> w = PrepareWorkload(Context(), kBench);
  ASSERT_TRUE(w.ok()) << w.status();
  absl::StatusOr<runner::PreparedRun> run = PrepareCandidate(Context(), kServe, {}, *w);
  ASSERT_TRUE(run.ok()) << run.status();
  absl::StatusOr<metrics::BenchMetrics> one = SimulateReplicasLeastOutstanding(Context(), *run, *w, 1);
  ASSERT_TRUE(one.ok()) << one.status();
  EXPECT_EQ(one->duration_s, p->metrics.duration_s);
  EXPECT_EQ(one->tpot.mean_ms, p->metrics.tpot.mean_ms);
  absl::StatusOr<metrics::BenchMetrics> four = SimulateReplicasLeastOutstanding(Context(), *run, *w, 4);
  ASSERT_TRUE(four.ok()) << four.status();
  EXPECT_EQ(four->completed, one->completed);
  EXPECT_EQ(four->total_output_tokens, one->total_output_tokens);
  EXPECT_LT(four->tpot.mean_ms, one->tpot.mean_ms);
}

TEST(PrepareWorkloadTest, SaveResultIsRefused) {
  absl::Status s = PrepareWorkload(Context(), "vllm bench serve --dataset-name random "
                                              "--save-result --result-filename r.json")
                       .status();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("--save-result"), absl::string_view::npos);
}

// The bench's goodput SLOs would go unread: a plan judges its own.
TEST(PrepareWorkloadTest, GoodputIsRefused) {
  absl::Status s = PrepareWorkload(Context(),
                                   "vllm bench serve --dataset-name random "
                                   "--goodput ttft:100")
                       .status();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("--goodput"), absl::string_view::npos);
}

TEST(PrepareWorkloadTest, ClientConcurrencyCapIsUnimplemented) {
  absl::Status s =
      PrepareWorkload(Context(), "vllm bench serve --dataset-name random --max-concurrency 4")
          .status();
  EXPECT_EQ(s.code(), absl::StatusCode::kUnimplemented);
}

}  // namespace
}  // namespace servesim::planning
