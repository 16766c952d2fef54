#include "sim/cost/step_predictor.h"

#include <gtest/gtest.h>

#include "models/model_spec.h"

namespace servesim::cost {
namespace {

// `gpus`: what the replica may span (8 per node).
StepPredictorConfig Config(int tp, int dp, bool ep, int gpus = 8) {
  StepPredictorConfig c;
  auto spec = models::LoadModelSpec(std::string(SERVESIM_SOURCE_DIR) +
                                    "/models/deepseek_v32.textproto");
  EXPECT_TRUE(spec.ok()) << spec.status();
  c.spec = *spec;
  auto layout = models::VllmLayout(c.spec, tp, dp, ep, gpus);
  EXPECT_TRUE(layout.ok()) << layout.status();
  c.layout = *layout;
  c.pad_moe_tokens_to_max_rank = true;
  return c;
}

std::vector<engine::StepBatch> Decodes(int ranks, int seqs, int64_t context) {
  engine::StepBatch b;
  for (int i = 0; i < seqs; ++i) b.seqs.push_back({i, 1, context, true});
  return std::vector<engine::StepBatch>(ranks, b);
}

// 64 decodes at context 1000 on one rank (enough to read every weight:
// WeightReadingRows), and the same with a fresh 4096-token prefill chunk
// beside them.
struct DecodesAndChunk {
  std::vector<models::RankBatch> decodes, mixed;
};
DecodesAndChunk DecodesWithAndWithoutAChunk() {
  models::RankBatch decodes;
  for (int i = 0; i < 64; ++i) decodes.seqs.push_back({1, 1000});
  models::RankBatch mixed = decodes;
  mixed.seqs.push_back({4096, 0});
  return {{decodes}, {mixed}};
}

// The attention and indexer kinds and the sampler priced at zero: what is
// left is a step's token-linear work, and its LM head's (HeadUs).
// The LM head and its logits gather of one rank's batch on the roofline: run
// per sequence, outside what the prefill factor stretches.
double HeadUs(const StepPredictorConfig& c, const models::RankBatch& batch) {
  RooflineOpCost roofline{GpuRates{}};
  double us = 0;
  for (const models::Op& op :
       models::BuildRankIterationOps(c.spec, c.layout, batch, batch.Tokens(), c.graph)) {
    if (op.name == "lm_head" || op.name == "logits_all_gather") us += op.repeat * roofline.OpUs(op);
  }
  return us;
}

StepPredictorConfig LinearOnly(StepPredictorConfig c) {
  c.prefill_time_scale = 1.0;
  c.kind_time_scale = {{"dense_mha_prefill", 0}, {"dense_mla_decode", 0}, {"indexer_decode", 0},
                       {"indexer_prefill", 0},   {"sparse_mla_decode", 0}, {"sparse_mla_prefill", 0},
                       {"topk", 0},              {"indexer_logits_clean", 0},
                       {"sampling", 0},          {"sampling_top_p", 0}};
  return c;
}

TEST(StepPredictorTest, HostOverheadAddsUnlessOverlapped) {
  StepPredictorConfig c = Config(8, 1, false);
  c.overheads.step_cpu_us = 1000;
  c.overheads.per_seq_cpu_us = 10;
  StepPredictor serial(c, std::make_unique<RooflineOpCost>(GpuRates{}));
  const auto batch = Decodes(1, 16, 1000);
  models::RankBatch rb;
  for (int i = 0; i < 16; ++i) rb.seqs.push_back({1, 1000});
  const double gpu_us = serial.GpuStepUs(std::vector<models::RankBatch>{rb});
  EXPECT_NEAR(serial.PredictStep(batch).ns() / 1e3, gpu_us + 1000 + 160, 1e-3);
  c.overheads.overlap_cpu = true;
  StepPredictor overlapped(c, std::make_unique<RooflineOpCost>(GpuRates{}));
  EXPECT_NEAR(overlapped.PredictStep(batch).ns() / 1e3, std::max(gpu_us, 1160.0), 1e-3);
}

// Under an overlap scheduler the host's scheduling work runs beside the GPU,
// but an eager step's kernels are launched by that same host: launches and
// scheduling add up (16 decodes, 20 us per launch, 1000 + 16 x 10 us of
// scheduling). A step replayed from a CUDA graph leaves the host free.
TEST(StepPredictorTest, OverlappedSchedulingAddsToAnEagerStepsLaunches) {
  StepPredictorConfig c = Config(8, 1, false);
  c.overheads.step_cpu_us = 1000;
  c.overheads.per_seq_cpu_us = 10;
  c.overheads.overlap_cpu = true;
  c.overheads.scheduler_launches_kernels = true;
  c.overheads.eager_launch_us = 20;
  StepPredictor eager(c, std::make_unique<RooflineOpCost>(GpuRates{}));
  models::RankBatch rb;
  for (int i = 0; i < 16; ++i) rb.seqs.push_back({1, 1000});
  const StepPredictor::GpuStep parts = eager.GpuStepParts(std::vector<models::RankBatch>{rb});
  ASSERT_GT(parts.launch_us + 1160, parts.device_us);
  ASSERT_GT(parts.launch_us, 1160);
  EXPECT_NEAR(eager.PredictStep(Decodes(1, 16, 1000)).ns() / 1e3, parts.launch_us + 1160, 1e-3);

  c.cuda_graph_sizes = {8, 16};
  StepPredictor graphed(c, std::make_unique<RooflineOpCost>(GpuRates{}));
  const StepPredictor::GpuStep replay = graphed.GpuStepParts(std::vector<models::RankBatch>{rb});
  EXPECT_EQ(replay.launch_us, 0);
  EXPECT_NEAR(graphed.PredictStep(Decodes(1, 16, 1000)).ns() / 1e3,
              std::max(replay.device_us, 1160.0), 1e-3);

  // Workers that launch in processes of their own (vLLM tensor parallelism)
  // launch beside the scheduler: the larger of the two, not the sum.
  c.cuda_graph_sizes.clear();
  c.overheads.scheduler_launches_kernels = false;
  StepPredictor workers(c, std::make_unique<RooflineOpCost>(GpuRates{}));
  EXPECT_NEAR(workers.PredictStep(Decodes(1, 16, 1000)).ns() / 1e3,
              std::max({parts.device_us, parts.launch_us, 1160.0}), 1e-3);
}

// The planning margin stretches the whole step, host work included.
TEST(StepPredictorTest, StepTimeScaleStretchesGpuAndHostAlike) {
  StepPredictorConfig c = Config(8, 1, false);
  c.overheads.step_cpu_us = 1000;
  c.overheads.per_seq_cpu_us = 10;
  StepPredictor plain(c, std::make_unique<RooflineOpCost>(GpuRates{}));
  c.step_time_scale = 1.25;
  StepPredictor slower(c, std::make_unique<RooflineOpCost>(GpuRates{}));
  const auto batch = Decodes(1, 16, 1000);
  models::RankBatch rb;
  for (int i = 0; i < 16; ++i) rb.seqs.push_back({1, 1000});
  const double gpu_us = plain.GpuStepUs(std::vector<models::RankBatch>{rb});
  EXPECT_NEAR(slower.PredictStep(batch).ns() / 1e3, 1.25 * (gpu_us + 1000 + 160), 1e-3);
}

TEST(StepPredictorTest, PrefillTimeScaleStretchesOnlyTheChunksLinearWork) {
  StepPredictorConfig c = Config(8, 1, false);
  StepPredictor as_measured(c, std::make_unique<RooflineOpCost>(GpuRates{}));
  c.prefill_time_scale = 3.0;
  StepPredictor slow_prefill(c, std::make_unique<RooflineOpCost>(GpuRates{}));
  const auto [d, m] = DecodesWithAndWithoutAChunk();
  const double decode_us = as_measured.GpuStepUs(d);
  const double mixed_us = as_measured.GpuStepUs(m);
  ASSERT_GT(mixed_us, decode_us);
  // Decode-only steps are untouched.
  EXPECT_DOUBLE_EQ(slow_prefill.GpuStepUs(d), decode_us);
  // The same step with attention and the indexer priced at zero gives the
  // linear work; what the chunk adds to it, against the decodes reading the
  // experts the whole step reads, is tripled, nothing else.
  StepPredictor linear_only(LinearOnly(c), std::make_unique<RooflineOpCost>(GpuRates{}));
  StepPredictorConfig routed = LinearOnly(c);
  routed.graph.moe_routing_tokens = 64 + 4096;
  StepPredictor decodes_routed_as_mixed(routed, std::make_unique<RooflineOpCost>(GpuRates{}));
  const double linear_added = linear_only.GpuStepUs(m) - decodes_routed_as_mixed.GpuStepUs(d) -
                              (HeadUs(c, m[0]) - HeadUs(c, d[0]));
  ASSERT_GT(linear_added, 0);
  EXPECT_NEAR(slow_prefill.GpuStepUs(m), mixed_us + 2.0 * linear_added, 1e-6);
  // Attention-heavy work is not stretched: the scaled step stays below
  // 3x the measured one.
  EXPECT_LT(slow_prefill.GpuStepUs(m), decode_us + 3.0 * (mixed_us - decode_us));
}

// The roofline, for the collectives only: a step then takes just their time.
class CollectivesOnly : public OpCost {
 public:
  double OpUs(const models::Op& op) override {
    return op.phase == models::OpPhase::kCommunication ? roofline_.OpUs(op) : 0.0;
  }

 private:
  RooflineOpCost roofline_{GpuRates{}};
};

// vLLM -dp 16 over two nodes: its MoE all-gather and reduce-scatter cross
// InfiniBand, where neither a fitted path factor nor the prefill factor
// (both fitted on one node's NVLink runs) applies; on one node (-dp 8) both do.
// (This op cost prices no NVLink equivalent, so the floor below is out of play.)
TEST(StepPredictorTest, FittedFactorsLeaveCollectivesAcrossNodesAlone) {
  for (const int dp : {8, 16}) {
    StepPredictorConfig c = Config(1, dp, true, dp);
    models::RankBatch mixed;
    for (int i = 0; i < 64; ++i) mixed.seqs.push_back({1, 1000});
    mixed.seqs.push_back({2048, 0});
    const std::vector<models::RankBatch> ranks(dp, mixed);
    StepPredictor measured(c, std::make_unique<CollectivesOnly>());
    StepPredictorConfig path = c;
    path.kind_time_scale = {{"all_gather", 4.0}, {"reduce_scatter", 4.0}};
    StepPredictor path_factor(path, std::make_unique<CollectivesOnly>());
    StepPredictorConfig prefill = c;
    prefill.prefill_time_scale = 3.0;
    StepPredictor prefill_factor(prefill, std::make_unique<CollectivesOnly>());
    const double us = measured.GpuStepUs(ranks);
    ASSERT_GT(us, 0) << dp;
    if (dp == 16) {
      EXPECT_DOUBLE_EQ(path_factor.GpuStepUs(ranks), us);
      EXPECT_DOUBLE_EQ(prefill_factor.GpuStepUs(ranks), us);
    } else {
      EXPECT_DOUBLE_EQ(path_factor.GpuStepUs(ranks), 4.0 * us);
      EXPECT_GT(prefill_factor.GpuStepUs(ranks), 1.5 * us);
    }
  }
}

// vLLM's DP path is fitted as a per-call latency: at 17x the roofline's 10 us
// every all-gather and reduce-scatter costs 160 us more, whatever it moves,
// and the prefill factor does not stretch it (a step and its baseline make
// the same calls). DeepSeek-V3.2's 58 MoE layers make 58 of each a step:
// 116 x 160 = 18,560 us more, on a decode step and on a prefill step alike.
TEST(StepPredictorTest, CallLatencyFactorAddsTheSameToEveryCallWhateverItMoves) {
  models::RankBatch decode;
  for (int i = 0; i < 4; ++i) decode.seqs.push_back({1, 1000});
  models::RankBatch mixed;
  for (int i = 0; i < 64; ++i) mixed.seqs.push_back({1, 1000});
  mixed.seqs.push_back({8192, 0});
  for (const double prefill_scale : {1.0, 3.0}) {
    StepPredictorConfig c = Config(1, 8, true);
    c.prefill_time_scale = prefill_scale;
    StepPredictor roofline(c, std::make_unique<CollectivesOnly>());
    c.kind_call_latency_scale = {{"all_gather", 17.0}, {"reduce_scatter", 17.0}};
    StepPredictor latency(c, std::make_unique<CollectivesOnly>());
    for (const models::RankBatch& rank : {decode, mixed}) {
      const std::vector<models::RankBatch> ranks(8, rank);
      EXPECT_NEAR(latency.GpuStepUs(ranks) - roofline.GpuStepUs(ranks), 116 * 160.0, 1e-6)
          << rank.seqs.size() << " rows, prefill x" << prefill_scale;
    }
  }
}

// Across nodes a collective keeps InfiniBand's roofline but never comes out
// cheaper than on NVLink at the kind's fitted factor. A decode all-gather of
// 57,344 B shards over 8 GPUs moves 7 x 57,344 = 401,408 B per GPU: 10 us +
// 401,408 / 370 GB/s = 11.08 us on NVLink, x 2.87 = 31.8 us, above
// InfiniBand's 20 us + 401,408 / 45 GB/s = 28.9 us. A 16 MiB shard stays at
// InfiniBand's 2630 us (NVLink's 327 us x 2.87 = 940 us).
TEST(StepPredictorTest, ACollectiveAcrossNodesIsNeverCheaperThanWithinOne) {
  StepPredictorConfig c = Config(1, 8, true);
  c.kind_time_scale = {{"all_gather", 2.87}};
  StepPredictor predictor(c, std::make_unique<RooflineOpCost>(GpuRates{}));
  RooflineOpCost roofline(GpuRates{});
  models::Op op;
  op.kind = "all_gather";
  op.x = 57344;
  op.comm_group_gpus = 8;
  op.comm_spans_nodes = true;
  const double ib = roofline.OpUs(op);
  EXPECT_NEAR(ib, 20 + 401408 / 45e3, 1e-9);
  EXPECT_NEAR(roofline.NvlinkCollectiveUs(op), 10 + 401408 / 370e3, 1e-9);
  EXPECT_NEAR(predictor.ChargedUs(op, ib), 2.87 * (10 + 401408 / 370e3), 1e-9);
  op.x = 16 << 20;
  EXPECT_DOUBLE_EQ(predictor.ChargedUs(op, roofline.OpUs(op)), roofline.OpUs(op));
  // Within a node the factor applies as it is.
  op.comm_spans_nodes = false;
  EXPECT_DOUBLE_EQ(predictor.ChargedUs(op, roofline.OpUs(op)), 2.87 * roofline.OpUs(op));
}

// vLLM -dp 8 with its fitted path (x2.87) and prefill (x3.08) factors, on
// one node and over two (--data-parallel-size-local 4): the step over two
// nodes is never the cheaper one, decoding or prefilling. (A prefill step
// had come out ~3 % cheaper over two nodes when the prefill factor
// stretched only one node's collectives.)
TEST(StepPredictorTest, AStepAcrossNodesIsNeverCheaperThanOnOne) {
  auto step_us = [](int node_gpus, const std::vector<models::RankBatch>& ranks) {
    StepPredictorConfig c = Config(1, 8, true);
    c.layout.node_gpus = node_gpus;
    c.kind_time_scale = {{"all_gather", 2.87}, {"reduce_scatter", 2.87}};
    c.prefill_time_scale = 3.08;
    StepPredictor p(c, std::make_unique<RooflineOpCost>(GpuRates{}));
    return p.GpuStepUs(ranks);
  };
  models::RankBatch decodes;
  for (int i = 0; i < 64; ++i) decodes.seqs.push_back({1, 4096});
  models::RankBatch prefill;
  for (int i = 0; i < 8; ++i) prefill.seqs.push_back({1024, 0});
  for (const models::RankBatch& batch : {decodes, prefill}) {
    const std::vector<models::RankBatch> ranks(8, batch);
    const double one_node = step_us(8, ranks);
    const double two_nodes = step_us(4, ranks);
    ASSERT_GT(one_node, 0);
    EXPECT_GE(two_nodes, one_node) << batch.seqs.size() << " sequences per rank";
  }
}

// vLLM's decode-logits clean is decode work, priced with attention: what the
// prefill factor adds to a step with 8 decodes beside a chunk is the same
// with and without it. (Were it token-linear, the baseline's 56 filler rows
// of context 0, each cleaned almost whole, would shrink what the chunk adds.)
TEST(StepPredictorTest, PrefillFactorLeavesTheDecodeLogitsCleanAlone) {
  auto added_by_factor = [](int64_t width) {
    StepPredictorConfig c = Config(8, 1, false);
    c.graph.decode_logits_width = width;
    StepPredictor as_measured(c, std::make_unique<RooflineOpCost>(GpuRates{}));
    c.prefill_time_scale = 3.0;
    StepPredictor slow_prefill(c, std::make_unique<RooflineOpCost>(GpuRates{}));
    models::RankBatch mixed;
    for (int i = 0; i < 8; ++i) mixed.seqs.push_back({1, 1000});
    mixed.seqs.push_back({4096, 0});
    const std::vector<models::RankBatch> m = {mixed};
    return slow_prefill.GpuStepUs(m) - as_measured.GpuStepUs(m);
  };
  const double without = added_by_factor(0);
  ASSERT_GT(without, 0);
  EXPECT_NEAR(added_by_factor(163840), without, 1e-6 * without);
}

// SGLang's flashmla_kv on a BF16 cache quantizes the whole pool before each
// decode pass. A prefill-only step runs no such pass, so its time cannot
// depend on the pool's size; its baseline's filler rows, were they priced
// with the pass, would shrink what the factor stretches (by 11 % of an
// 8192-token SGLang DP8 prefill step at a 223k-token pool).
TEST(StepPredictorTest, PrefillFactorLeavesTheDecodePoolQuantizeAlone) {
  auto prefill_step = [](int64_t pool_tokens) {
    StepPredictorConfig c = Config(8, 1, false);
    c.graph.decode_quantizes_kv_pool_tokens = pool_tokens;
    c.prefill_time_scale = 3.0;
    StepPredictor p(c, std::make_unique<RooflineOpCost>(GpuRates{}));
    return p.GpuStepUs(std::vector<models::RankBatch>{models::RankBatch{{{8192, 0}}}});
  };
  const double without = prefill_step(0);
  ASSERT_GT(without, 0);
  EXPECT_DOUBLE_EQ(prefill_step(223360), without);
}

// An idle DP rank joins the MoE collectives with a dummy token; that is no
// decode pass, so it does not quantize its pool: a step where one rank
// prefills and the other idles takes the same with and without the pass.
TEST(StepPredictorTest, AnIdleRankRunsNoDecodePoolQuantize) {
  auto prefill_beside_idle = [](int64_t pool_tokens) {
    StepPredictorConfig c = Config(4, 2, true);
    c.graph.decode_quantizes_kv_pool_tokens = pool_tokens;
    StepPredictor p(c, std::make_unique<RooflineOpCost>(GpuRates{}));
    return p.GpuStepUs(
        std::vector<models::RankBatch>{models::RankBatch{{{512, 0}}}, models::RankBatch{}});
  };
  EXPECT_DOUBLE_EQ(prefill_beside_idle(223360), prefill_beside_idle(0));
}

// A step reads its weights once, however many tokens it carries: the factor
// stretches a chunk's compute. 64 weight-reading rows reach ~86 % of the
// experts and 128 tokens ~98 %; the other 12 % of the expert weights had been
// stretched as chunk work, so a chunk's stretch grew faster per token just
// past 64 tokens than at a thousand.
TEST(StepPredictorTest, ExpertWeightsAChunkReadsAreNotChunkWork) {
  StepPredictorConfig c = Config(8, 1, false);
  StepPredictor as_measured(c, std::make_unique<RooflineOpCost>(GpuRates{}));
  c.prefill_time_scale = 3.0;
  StepPredictor slow_prefill(c, std::make_unique<RooflineOpCost>(GpuRates{}));
  auto stretch = [&](int64_t tokens) {
    const std::vector<models::RankBatch> chunk{models::RankBatch{{{tokens, 0}}}};
    return slow_prefill.GpuStepUs(chunk) - as_measured.GpuStepUs(chunk);
  };
  const double per_token_early = (stretch(128) - stretch(64)) / 64;
  const double per_token_late = (stretch(2048) - stretch(1024)) / 1024;
  ASSERT_GT(per_token_late, 0);
  EXPECT_LT(per_token_early, per_token_late);
}

// The sampler runs once per sequence, in prefill as in decode: a costlier one
// (say, 50x) leaves what the factor adds to a prefill-only step unchanged.
// (When the baseline's 64 weight-reading rows sampled, to the prompt's one,
// it had made a prefill step cheaper.)
TEST(StepPredictorTest, PrefillFactorLeavesTheSamplerAlone) {
  auto added_by_factor = [](double sampler_scale) {
    StepPredictorConfig c = Config(8, 1, false);
    c.kind_time_scale = {{"sampling", sampler_scale}};
    StepPredictor as_measured(c, std::make_unique<RooflineOpCost>(GpuRates{}));
    c.prefill_time_scale = 3.0;
    StepPredictor slow_prefill(c, std::make_unique<RooflineOpCost>(GpuRates{}));
    const std::vector<models::RankBatch> chunk{models::RankBatch{{{2000, 0}}}};
    return slow_prefill.GpuStepUs(chunk) - as_measured.GpuStepUs(chunk);
  };
  EXPECT_NEAR(added_by_factor(50.0), added_by_factor(1.0), 1e-6);
}

// A prefill-only step has no decoding rows, so no MTP draft passes beyond the
// first (over its tokens): its time is the same at 2 and 3 draft tokens. The
// baseline's weight-reading rows had run the extra passes, and a step with
// more drafts came out cheaper.
TEST(StepPredictorTest, WeightReadingRowsRunNoDraftPasses) {
  auto prefill_step = [](int k) {
    StepPredictorConfig c = Config(8, 1, false);
    c.graph.num_speculative_tokens = k;
    c.prefill_time_scale = 3.0;
    StepPredictor p(c, std::make_unique<RooflineOpCost>(GpuRates{}));
    return p.GpuStepUs(std::vector<models::RankBatch>{models::RankBatch{{{128, 0}}}});
  };
  EXPECT_DOUBLE_EQ(prefill_step(3), prefill_step(2));
}

// 2 x 256 experts / top-8: 64 one-token rows route to ~86 % of the experts.
TEST(StepPredictorTest, WeightReadingRowsForDeepSeekV32) {
  EXPECT_EQ(WeightReadingRows(Config(8, 1, false).spec), 64);
}

// With no decodes beside it, a chunk's stretched work is what it adds to as
// many weight-reading rows (token-linear work only, up to 64) routed to the
// experts the chunk reads, which read the same weights: a 32-token chunk
// adds little (MLA's absorbed BMMs), a 4096-token chunk its compute. The
// launch floor of an eager step is host time and is never stretched.
TEST(StepPredictorTest, PrefillFactorLeavesWeightReadsAndTheLaunchFloorAlone) {
  StepPredictorConfig c = Config(8, 1, false);
  StepPredictor as_measured(c, std::make_unique<RooflineOpCost>(GpuRates{}));
  c.prefill_time_scale = 3.0;
  StepPredictor slow_prefill(c, std::make_unique<RooflineOpCost>(GpuRates{}));
  StepPredictor linear_only(LinearOnly(c), std::make_unique<RooflineOpCost>(GpuRates{}));
  StepPredictorConfig routed = LinearOnly(c);
  routed.graph.moe_routing_tokens = 4096;
  StepPredictor routed_like_chunk(routed, std::make_unique<RooflineOpCost>(GpuRates{}));
  const std::vector<models::RankBatch> small{models::RankBatch{{{32, 0}}}};
  models::RankBatch small_rows;
  for (int i = 0; i < 32; ++i) small_rows.seqs.push_back({1, 0, models::RowKind::kWeightReading});
  const double small_added = linear_only.GpuStepUs(small) -
                             linear_only.GpuStepUs(std::vector<models::RankBatch>{small_rows}) -
                             HeadUs(c, small[0]);
  EXPECT_NEAR(slow_prefill.GpuStepUs(small), as_measured.GpuStepUs(small) + 2.0 * small_added,
              1e-6);

  const std::vector<models::RankBatch> chunk{models::RankBatch{{{4096, 0}}}};
  models::RankBatch weight_rows;
  for (int i = 0; i < 64; ++i) weight_rows.seqs.push_back({1, 0, models::RowKind::kWeightReading});
  const double added = linear_only.GpuStepUs(chunk) -
                       routed_like_chunk.GpuStepUs(std::vector<models::RankBatch>{weight_rows}) -
                       HeadUs(c, chunk[0]);
  ASSERT_GT(added, 0);
  EXPECT_NEAR(slow_prefill.GpuStepUs(chunk), as_measured.GpuStepUs(chunk) + 2.0 * added, 1e-6);

  // An eager step bound by its launches (1 ms each): the factor stretches
  // the chunk's GPU work, which runs under the launch floor; the floor itself
  // stays as it is.
  c.overheads.eager_launch_us = 1000;
  StepPredictor floor_measured(c, std::make_unique<RooflineOpCost>(GpuRates{}));
  c.prefill_time_scale = 1.0;
  StepPredictor floor_unscaled(c, std::make_unique<RooflineOpCost>(GpuRates{}));
  const StepPredictor::GpuStep stretched = floor_measured.GpuStepParts(small);
  const StepPredictor::GpuStep unscaled = floor_unscaled.GpuStepParts(small);
  EXPECT_DOUBLE_EQ(stretched.launch_us, unscaled.launch_us);
  EXPECT_NEAR(stretched.device_us - unscaled.device_us, 2.0 * small_added, 1e-6);
  ASSERT_GT(stretched.launch_us, stretched.device_us);
  EXPECT_DOUBLE_EQ(floor_measured.GpuStepUs(small), stretched.launch_us);
}

TEST(StepPredictorTest, PrefillOnlyKindFactorStretchesOnlyWhatTheChunkAddsToThatKind) {
  StepPredictorConfig c = Config(8, 1, false);
  StepPredictor as_measured(c, std::make_unique<RooflineOpCost>(GpuRates{}));
  c.prefill_time_scale = 2.0;
  StepPredictor slow_prefill(c, std::make_unique<RooflineOpCost>(GpuRates{}));
  c.prefill_kind_time_scale = {{"grouped_gemm_fp8", 5.0}};
  StepPredictor slow_moe(c, std::make_unique<RooflineOpCost>(GpuRates{}));
  const auto [d, m] = DecodesWithAndWithoutAChunk();
  // A decode step's MoE is untouched.
  EXPECT_DOUBLE_EQ(slow_moe.GpuStepUs(d), as_measured.GpuStepUs(d));
  // The grouped GEMMs' share of the step, from a predictor that prices
  // every other kind at zero (the GEMMs run on every rank at once: no
  // other phase hides them).
  StepPredictorConfig moe_only_config = Config(8, 1, false);
  for (const char* kind :
       {"dense_mha_prefill", "dense_mla_decode", "indexer_decode", "indexer_prefill",
        "sparse_mla_decode", "sparse_mla_prefill", "topk", "gemm_fp8", "gemm_bf16",
        "batched_gemm_bf16", "rmsnorm", "rope", "silu_mul", "all_reduce", "all_gather",
        "copy_d2d", "router_topk", "sampling", "sampling_top_p", "reduce_scatter", "all_to_all",
        "grouped_gemm_bf16", "act_quant_fp8", "moe_topk_reduce", "kv_cache_quantize",
        "indexer_logits_clean"}) {
    moe_only_config.kind_time_scale.emplace_back(kind, 0.0);
  }
  StepPredictor moe_only(moe_only_config, std::make_unique<RooflineOpCost>(GpuRates{}));
  // The decodes' step read as the mixed step routes: the experts its 64 + 4096
  // tokens touch.
  moe_only_config.graph.moe_routing_tokens = 64 + 4096;
  StepPredictor moe_only_routed(moe_only_config, std::make_unique<RooflineOpCost>(GpuRates{}));
  const double moe_added = moe_only.GpuStepUs(m) - moe_only_routed.GpuStepUs(d);
  ASSERT_GT(moe_added, 0);
  // On top of the prefill path's 2x, the chunk's grouped-GEMM work is 5x:
  // 2 x (5 - 1) x what the chunk adds to it.
  EXPECT_NEAR(slow_moe.GpuStepUs(m), slow_prefill.GpuStepUs(m) + 2.0 * 4.0 * moe_added, 1e-6);
}

TEST(StepPredictorTest, MtpDraftAlsoRunsOverAPrefillChunk) {
  // The MTP module fills its own KV over every prefilled token: one decoder
  // layer (attention, indexer, MoE) beside the main model's 61, so a prefill
  // step with MTP costs a little more, by less than a twentieth.
  StepPredictorConfig c = Config(8, 1, false);
  StepPredictor plain(c, std::make_unique<RooflineOpCost>(GpuRates{}));
  c.graph.num_speculative_tokens = 1;
  StepPredictor mtp(c, std::make_unique<RooflineOpCost>(GpuRates{}));
  models::RankBatch prefill;
  prefill.seqs.push_back({4096, 0});
  const std::vector<models::RankBatch> p{prefill};
  const double plain_us = plain.GpuStepUs(p);
  const double mtp_us = mtp.GpuStepUs(p);
  EXPECT_GT(mtp_us, plain_us * 1.005);
  EXPECT_LT(mtp_us, plain_us * 1.05);
}

TEST(StepPredictorTest, LongerContextsNeverDecodeFaster) {
  StepPredictor p(Config(8, 1, false), std::make_unique<RooflineOpCost>(GpuRates{}));
  sim::SimTime last = sim::SimTime::Zero();
  for (int64_t ctx : {512, 2048, 8192, 32768}) {
    const sim::SimTime t = p.PredictStep(Decodes(1, 64, ctx));
    EXPECT_GE(t, last) << ctx;
    last = t;
  }
}

TEST(StepPredictorTest, LockstepStepIsGatedByTheBusiestRank) {
  StepPredictor p(Config(1, 8, true), std::make_unique<RooflineOpCost>(GpuRates{}));
  auto even = Decodes(8, 32, 4096);
  auto skewed = even;
  for (int i = 32; i < 128; ++i) skewed[3].seqs.push_back({i, 1, 4096, true});
  EXPECT_GT(p.PredictStep(skewed), p.PredictStep(even));
  // Phase by phase the slowest rank sets the time, and the MoE pads every
  // rank to the busiest one's tokens: one rank of 128 costs as much as all
  // eight at 128 (a sum or a mean over ranks would not).
  EXPECT_EQ(p.PredictStep(skewed), p.PredictStep(Decodes(8, 128, 4096)));
  // An idle rank still joins the MoE: the step is not free.
  std::vector<engine::StepBatch> one_busy(8);
  one_busy[0] = even[0];
  EXPECT_GT(p.PredictStep(one_busy).ns(), 0);
}

// A step past a day comes back as no time, which the simulation refuses,
// before its nanoseconds could leave int64.
TEST(StepPredictorTest, AStepPastADayComesBackAsNoTime) {
  StepPredictorConfig c = Config(8, 1, false);
  c.overheads.step_cpu_us = StepPredictor::kMaxStepUs * 2;
  StepPredictor slow(c, std::make_unique<RooflineOpCost>(GpuRates{}));
  EXPECT_EQ(slow.PredictStep(Decodes(1, 4, 100)).ns(), 0);
  c.overheads.step_cpu_us = 1000;
  StepPredictor ok(c, std::make_unique<RooflineOpCost>(GpuRates{}));
  EXPECT_GT(ok.PredictStep(Decodes(1, 4, 100)).ns(), 1'000'000);
}

TEST(StepPredictorTest, CudaGraphPaddingRoundsDecodeBatchesUp) {
  StepPredictorConfig c = Config(8, 1, false);
  StepPredictor eager(c, std::make_unique<RooflineOpCost>(GpuRates{}));
  c.cuda_graph_sizes = {1, 2, 4, 8, 16, 24, 32};
  StepPredictor graphed(c, std::make_unique<RooflineOpCost>(GpuRates{}));
  // 17 sequences run as the 24-wide graph: more than 17 alone, at most 24;
  // 7 filler rows of no context join them, which no sampler sees, so the
  // step is cheaper than 17 real rows and 7 real rows of no context.
  EXPECT_GT(graphed.PredictStep(Decodes(1, 17, 4096)), eager.PredictStep(Decodes(1, 17, 4096)));
  EXPECT_LE(graphed.PredictStep(Decodes(1, 17, 4096)), graphed.PredictStep(Decodes(1, 24, 4096)));
  std::vector<engine::StepBatch> with_rows = Decodes(1, 17, 4096);
  for (int i = 17; i < 24; ++i) with_rows[0].seqs.push_back({i, 1, 0, true});
  EXPECT_LT(graphed.PredictStep(Decodes(1, 17, 4096)), eager.PredictStep(with_rows));
  models::RankBatch seventeen, padded;
  for (int i = 0; i < 17; ++i) seventeen.seqs.push_back({1, 4096});
  ASSERT_TRUE(graphed.PadForCudaGraph(seventeen, padded));
  ASSERT_EQ(padded.seqs.size(), 24u);
  for (size_t i = 0; i < padded.seqs.size(); ++i) {
    EXPECT_EQ(padded.seqs[i].kind == models::RowKind::kGraphFiller, i >= 17) << i;
    EXPECT_EQ(padded.seqs[i].context_before_tokens, i >= 17 ? 0 : 4096) << i;
  }
  // 16 is a captured size: no padding.
  EXPECT_EQ(graphed.PredictStep(Decodes(1, 16, 4096)), eager.PredictStep(Decodes(1, 16, 4096)));
}

// A prompt's last chunk of one token: on SGLang and TensorRT-LLM (an extend
// or context forward of its own) it runs the prefill path, eager, its token
// stretched by the prefill factor; vLLM sorts rows by length, and there it
// runs as the 1-row decode graph, exactly as a decode does.
TEST(StepPredictorTest, AOneTokenChunkRunsAsADecodeOnlyWhereRowsAreSortedByLength) {
  StepPredictorConfig c = Config(8, 1, false);
  c.cuda_graph_sizes = {1, 2, 4, 8};
  c.prefill_time_scale = 3.0;
  auto step = [](const StepPredictorConfig& config, bool is_decode) {
    StepPredictor p(config, std::make_unique<RooflineOpCost>(GpuRates{}));
    engine::StepBatch b;
    b.seqs.push_back({0, 1, 2046, is_decode});
    return p.PredictStep(std::vector<engine::StepBatch>{b});
  };
  c.graph.short_chunks_run_as_decodes = true;
  EXPECT_EQ(step(c, false), step(c, true));
  c.graph.short_chunks_run_as_decodes = false;
  EXPECT_GT(step(c, false), step(c, true));
  // Unpadded and eager, with its one token stretched x3: dearer than the
  // same row run as a decode, even eagerly.
  StepPredictorConfig eager = c;
  eager.cuda_graph_sizes.clear();
  EXPECT_GT(step(c, false), step(eager, true));
}

// vLLM's capture sizes count tokens (an audit found them looked up by
// sequence count): under MTP with one draft, 9 decodes are 18 tokens and run
// as the 24-token graph, 12 rows; by sequences they would pad to 16 rows.
// SGLang's and TensorRT-LLM's sizes count sequences: 9 pad to 16.
TEST(StepPredictorTest, VllmPadsMtpDecodeBatchesByTokens) {
  StepPredictorConfig c = Config(8, 1, false);
  c.cuda_graph_sizes = {1, 2, 4, 8, 16, 24, 32};
  c.graph.num_speculative_tokens = 1;
  models::RankBatch decodes;
  for (int i = 0; i < 9; ++i) decodes.seqs.push_back({2, 2048});
  models::RankBatch padded;
  StepPredictor by_seqs(c, std::make_unique<RooflineOpCost>(GpuRates{}));
  ASSERT_TRUE(by_seqs.PadForCudaGraph(decodes, padded));
  EXPECT_EQ(padded.seqs.size(), 16u);
  c.graph_sizes_count_tokens = true;
  StepPredictor by_tokens(c, std::make_unique<RooflineOpCost>(GpuRates{}));
  ASSERT_TRUE(by_tokens.PadForCudaGraph(decodes, padded));
  EXPECT_EQ(padded.seqs.size(), 12u);
  EXPECT_EQ(padded.Tokens(), 24);
  // 17 decodes are 34 tokens, past the largest size: eager for vLLM; SGLang
  // and TensorRT-LLM compare requests with their largest size (SGLang's
  // can_run), so 17 requests still run their 24-request graph.
  for (int i = 9; i < 17; ++i) decodes.seqs.push_back({2, 2048});
  EXPECT_FALSE(by_tokens.PadForCudaGraph(decodes, padded));
  ASSERT_TRUE(by_seqs.PadForCudaGraph(decodes, padded));
  EXPECT_EQ(padded.seqs.size(), 24u);
}

// vLLM's piecewise graphs pad a mixed batch's tokens to the captured size as
// its full graphs pad a decode batch's sequences (found by an audit: 8
// decodes + a 2-token prompt came out 15 % cheaper than 9 decodes, which pad
// to 16). A mixed batch of 10 tokens runs as 16: its 6 padding tokens go
// through the token-linear ops only, not attention or the sampler.
TEST(StepPredictorTest, PiecewiseGraphsPadAMixedBatchsTokens) {
  StepPredictorConfig c = Config(8, 1, false);
  c.cuda_graph_sizes = {1, 2, 4, 8, 16, 24, 32};
  c.graphs_cover_mixed_batches = true;
  StepPredictor predictor(c, std::make_unique<RooflineOpCost>(GpuRates{}));
  models::RankBatch mixed;
  for (int i = 0; i < 8; ++i) mixed.seqs.push_back({1, 2048});
  mixed.seqs.push_back({2, 0});
  models::RankBatch padded;
  ASSERT_TRUE(predictor.PadForCudaGraph(mixed, padded));
  EXPECT_EQ(padded.seqs.size(), 9u);
  EXPECT_EQ(padded.padding_tokens, 6);
  c.cuda_graph_sizes.clear();
  StepPredictor eager(c, std::make_unique<RooflineOpCost>(GpuRates{}));
  const double as_padded = eager.GpuStepUs(std::vector<models::RankBatch>{padded});
  EXPECT_DOUBLE_EQ(predictor.GpuStepUs(std::vector<models::RankBatch>{mixed}), as_padded);
  EXPECT_GT(as_padded, eager.GpuStepUs(std::vector<models::RankBatch>{mixed}));
  // A decode batch pads with whole rows: 9 decodes run as 16.
  models::RankBatch decodes;
  for (int i = 0; i < 9; ++i) decodes.seqs.push_back({1, 2048});
  ASSERT_TRUE(predictor.PadForCudaGraph(decodes, padded));
  EXPECT_EQ(padded.seqs.size(), 16u);
  EXPECT_EQ(padded.padding_tokens, 0);
}

// A CUDA graph's padding rows are no prefill chunk: the prefill factor
// stretches what the real tokens add, not the filler up to a captured size.
// Padded to 64, a prompt of n < 64 tokens had its stretch measured from n
// weight-reading rows up to 64 padded ones, so a longer prompt ran faster
// (a saw-tooth in TTFT); now a longer prompt never runs faster.
TEST(StepPredictorTest, PrefillFactorLeavesGraphPaddingAlone) {
  StepPredictorConfig c = Config(8, 1, false);
  c.cuda_graph_sizes = {1, 2, 4, 8, 16, 32, 64};
  c.graphs_cover_mixed_batches = true;
  c.prefill_time_scale = 3.0;
  StepPredictor stretched(c, std::make_unique<RooflineOpCost>(GpuRates{}));
  c.prefill_time_scale = 1.0;
  StepPredictor plain(c, std::make_unique<RooflineOpCost>(GpuRates{}));
  auto prompt = [](int64_t tokens) {
    models::RankBatch b;
    b.seqs.push_back({tokens, 0});
    return std::vector<models::RankBatch>{b};
  };
  double last = 0;
  for (int64_t n = 33; n <= 64; ++n) {
    const double us = stretched.GpuStepUs(prompt(n));
    EXPECT_GE(us, last - 1e-6) << n << " tokens";
    // What the stretch adds is the chunk's own work, at most what the
    // unpadded step's token-linear work could be: below the padded step.
    EXPECT_GE(us, plain.GpuStepUs(prompt(n))) << n << " tokens";
    last = us;
  }
}

// TensorRT-LLM without cuda_graph_config.enable_padding replays a graph only
// for a batch of exactly a captured size; any other batch runs eagerly and
// pays the launch floor.
TEST(StepPredictorTest, ExactSizeGraphsRunOtherBatchesEagerly) {
  StepPredictorConfig c = Config(8, 1, false);
  c.overheads.eager_launch_us = 25;
  c.cuda_graph_sizes = {1, 2, 4, 8, 16, 32, 64, 128};
  StepPredictor padded(c, std::make_unique<RooflineOpCost>(GpuRates{}));
  c.graphs_exact_sizes_only = true;
  StepPredictor exact(c, std::make_unique<RooflineOpCost>(GpuRates{}));
  // 64 is captured: both replay the same graph.
  EXPECT_EQ(exact.PredictStep(Decodes(1, 64, 4096)), padded.PredictStep(Decodes(1, 64, 4096)));
  // 40 is not: padded replays the 64-wide graph, exact-only launches every
  // kernel (thousands of launches at 25 us dwarf 24 rows of padding).
  EXPECT_GT(exact.PredictStep(Decodes(1, 40, 4096)), padded.PredictStep(Decodes(1, 40, 4096)));
  EXPECT_GT(exact.PredictStep(Decodes(1, 40, 4096)), exact.PredictStep(Decodes(1, 64, 4096)));
}

// TensorRT-LLM's attention-DP ranks replay their graphs together: without
// padding, only when every rank's batch is the same captured size. One rank
// at 8 beside seven at 16 (both captured sizes, but unequal) and every rank
// launches its kernels; decided per rank, every rank would replay.
TEST(StepPredictorTest, SharedGraphChoiceRunsEveryRankEagerWhenOneCannotReplay) {
  StepPredictorConfig c = Config(1, 8, true);
  c.overheads.eager_launch_us = 25;
  c.cuda_graph_sizes = {1, 2, 4, 8, 16, 32};
  c.graphs_exact_sizes_only = true;
  StepPredictor per_rank(c, std::make_unique<RooflineOpCost>(GpuRates{}));
  c.graph_choice_shared_by_ranks = true;
  StepPredictor shared(c, std::make_unique<RooflineOpCost>(GpuRates{}));
  // Every rank at 16: both replay.
  EXPECT_EQ(shared.PredictStep(Decodes(8, 16, 4096)), per_rank.PredictStep(Decodes(8, 16, 4096)));
  // One rank at 8, the rest at 16: each size is captured, but they differ.
  std::vector<engine::StepBatch> uneven = Decodes(8, 16, 4096);
  uneven[5].seqs.resize(8);
  EXPECT_GT(shared.PredictStep(uneven), per_rank.PredictStep(uneven));
  // Eager on every rank is what the shared choice prices: no rank graphed.
  c.cuda_graph_sizes.clear();
  StepPredictor eager(c, std::make_unique<RooflineOpCost>(GpuRates{}));
  EXPECT_EQ(shared.PredictStep(uneven), eager.PredictStep(uneven));
}

// SGLang's DP-attention ranks, graphed, pad to the captured size of the
// largest rank's batch (16): seven ranks of 16 decodes and one of 3 give the
// MoE 8 x 16 tokens, where padding each rank to its own size gives 7 x 16 + 4.
// A step with a prefilling rank runs every rank eager, unpadded: 7 x 16 + 100.
TEST(StepPredictorTest, SharedGraphsPadEveryRankToTheLargestRanksSize) {
  StepPredictorConfig c = Config(1, 8, true);
  c.pad_moe_tokens_to_max_rank = false;
  c.cuda_graph_sizes = {1, 2, 4, 8, 16, 32};
  c.graph_choice_shared_by_ranks = true;
  std::vector<engine::StepBatch> uneven = Decodes(8, 16, 4096);
  uneven[5].seqs.resize(3);
  StepPredictor own_size(c, std::make_unique<RooflineOpCost>(GpuRates{}));
  own_size.PredictStep(uneven);
  EXPECT_EQ(own_size.last_step_moe_tokens(), 7 * 16 + 4);
  c.graphs_pad_to_largest_rank = true;
  StepPredictor largest(c, std::make_unique<RooflineOpCost>(GpuRates{}));
  largest.PredictStep(uneven);
  EXPECT_EQ(largest.last_step_moe_tokens(), 8 * 16);
  uneven[5].seqs = {{0, 100, 0, false}};
  largest.PredictStep(uneven);
  EXPECT_EQ(largest.last_step_moe_tokens(), 7 * 16 + 100);
}

}  // namespace
}  // namespace servesim::cost
