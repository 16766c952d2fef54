#include "models/memory_model.h"

#include <string>

#include "gtest/gtest.h"

namespace servesim::models {
namespace {

ModelSpec V32() {
  absl::StatusOr<ModelSpec> spec = LoadModelSpec(
      std::string(SERVESIM_SOURCE_DIR) + "/models/deepseek_v32.textproto");
  EXPECT_TRUE(spec.ok()) << spec.status();
  return spec.ok() ? *spec : ModelSpec();
}

ParallelLayout Must(absl::StatusOr<ParallelLayout> l) {
  EXPECT_TRUE(l.ok()) << l.status();
  return l.ok() ? *l : ParallelLayout();
}

// Conservation: one GPU holding everything holds exactly the checkpoint.
TEST(MemoryModelTest, SingleGpuHoldsTheWholeCheckpoint) {
  const ModelSpec spec = V32();
  const ParallelLayout tp1 = Must(VllmLayout(spec, 1, 1, false, 8));
  EXPECT_EQ(WeightBytesPerGpu(spec, tp1, /*with_mtp=*/true),
            CountParameters(spec).checkpoint_bytes);
}

// EP8 drops 224 of 256 routed experts per MoE layer: 58 x 224 x 3 matrices of
// 7168 x 2048 FP8 bytes + 16 x 56 FP32 block scales each.
TEST(MemoryModelTest, ExpertParallelDropsSevenEighthsOfRoutedExperts) {
  const ModelSpec spec = V32();
  const int64_t tp1 =
      WeightBytesPerGpu(spec, Must(VllmLayout(spec, 1, 1, false, 8)), false);
  const int64_t ep8 =
      WeightBytesPerGpu(spec, Must(VllmLayout(spec, 1, 8, true, 8)), false);
  const int64_t matrix = int64_t{7168} * 2048 + 16 * 56 * 4;
  EXPECT_EQ(tp1 - ep8, int64_t{58} * 224 * 3 * matrix);
}

// model-and-kernels.md §1.1: vLLM TP8 ~86 GB, vLLM DP8+EP8 ~101.7 GB.
TEST(MemoryModelTest, VllmWeightsPerGpuMatchReference) {
  const ModelSpec spec = V32();
  EXPECT_NEAR(
      WeightBytesPerGpu(spec, Must(VllmLayout(spec, 8, 1, false, 8)), false) /
          1e9,
      86.0, 0.3);
  EXPECT_NEAR(
      WeightBytesPerGpu(spec, Must(VllmLayout(spec, 1, 8, true, 8)), false) /
          1e9,
      101.7, 0.1);
}

// The reference's ~95 GB for SGLang TP8 + DP-attention 8 splits the embedding
// 8 ways; SGLang replicates it under DP attention (VocabParallelEmbedding with
// enable_tp = not dp attention), which adds 7/8 of 129280 x 7168 x 2 B.
TEST(MemoryModelTest, SglangDpAttentionReplicatesAttentionAndEmbedding) {
  const ModelSpec spec = V32();
  const int64_t bytes = WeightBytesPerGpu(
      spec, Must(SglangLayout(spec, 8, 8, true, 1, 0, 8)), false);
  const int64_t embedding_extra = int64_t{129280} * 7168 * 2 / 8 * 7;
  EXPECT_NEAR((bytes - embedding_extra) / 1e9, 95.0, 0.3);
}

// engine-defaults.md §C2 worked examples: 0.897 (TP8), 0.769 (DP-attn 8), 0.882
// (TP8 + EAGLE).
TEST(MemoryModelTest, SglangMemFractionStaticMatchesWorkedExamples) {
  const ModelSpec spec = V32();
  SglangMemoryConfig c;
  EXPECT_DOUBLE_EQ(SglangMemFractionStatic(
                       Must(SglangLayout(spec, 8, 1, false, 1, 0, 8)), c),
                   0.897);
  EXPECT_DOUBLE_EQ(
      SglangMemFractionStatic(Must(SglangLayout(spec, 8, 8, true, 1, 0, 8)), c),
      0.769);
  c.speculative = true;
  EXPECT_DOUBLE_EQ(SglangMemFractionStatic(
                       Must(SglangLayout(spec, 8, 1, false, 1, 0, 8)), c),
                   0.882);
}

TEST(MemoryModelTest, SglangPoolIsFractionMinusWeightsAndOverhead) {
  const ModelSpec spec = V32();
  const ParallelLayout l = Must(SglangLayout(spec, 8, 8, true, 1, 0, 8));
  SglangMemoryConfig c;
  c.mem_fraction_static = 0.8;
  absl::StatusOr<KvBudget> b = SglangKvBudget(spec, l, c);
  ASSERT_TRUE(b.ok()) << b.status();
  const int64_t pool = static_cast<int64_t>(kH200CapacityBytes * 0.8) -
                       WeightBytesPerGpu(spec, l, false) -
                       kDefaultRuntimeOverheadBytes;
  EXPECT_EQ(b->kv_pool_bytes, pool);
  EXPECT_EQ(b->kv_capacity_tokens, pool / (64 * 78324) * 64);
}

// Halving max_model_len frees exactly the two length-sized buffers:
// 81920 x (5 x 576 x 2 + 40 x 132) B.
TEST(MemoryModelTest, VllmMaxModelLenBuffersScaleWithLength) {
  const ModelSpec spec = V32();
  const ParallelLayout l = Must(VllmLayout(spec, 1, 8, true, 8));
  VllmMemoryConfig c;
  c.max_model_len = 163840;
  absl::StatusOr<KvBudget> full = VllmKvBudget(spec, l, c);
  c.max_model_len = 81920;
  absl::StatusOr<KvBudget> half = VllmKvBudget(spec, l, c);
  ASSERT_TRUE(full.ok() && half.ok());
  EXPECT_EQ(half->kv_pool_bytes - full->kv_pool_bytes,
            int64_t{81920} * (5 * 576 * 2 + 40 * 132));
  EXPECT_EQ(full->kv_capacity_tokens % 64, 0);
  EXPECT_EQ(full->usable_bytes, static_cast<int64_t>(kH200CapacityBytes * 0.9));
  EXPECT_EQ(
      full->usable_bytes - full->weight_bytes - full->activation_reserve_bytes,
      full->kv_pool_bytes);
}

// vLLM gives the MTP module's decoder layer its own slot in the shared KV
// pool, so with MTP a token holds 62 layers of MLA latent (576 BF16) and
// indexer key (128 FP8 + a 4-byte scale) instead of 61.
TEST(MemoryModelTest, VllmMtpLayerTakesItsShareOfEveryToken) {
  const ModelSpec spec = V32();
  const ParallelLayout l = Must(VllmLayout(spec, 8, 1, true, 8));
  VllmMemoryConfig c;
  c.max_model_len = 163840;
  absl::StatusOr<KvBudget> plain = VllmKvBudget(spec, l, c);
  c.with_mtp = true;
  absl::StatusOr<KvBudget> mtp = VllmKvBudget(spec, l, c);
  ASSERT_TRUE(plain.ok() && mtp.ok());
  EXPECT_EQ(plain->kv_bytes_per_token, 61 * (576 * 2 + 132));
  EXPECT_EQ(mtp->kv_bytes_per_token, 62 * (576 * 2 + 132));
  EXPECT_LT(mtp->kv_capacity_tokens, plain->kv_capacity_tokens);
}

// DP ranks gather their tokens before the MoE, so DP8+EP8 reserves more for
// the profile run than TP8, where the MoE sees only the rank's own tokens.
TEST(MemoryModelTest, GatheredMoeTokensGrowTheProfileReserve) {
  const ModelSpec spec = V32();
  const ParallelLayout tp8 = Must(VllmLayout(spec, 8, 1, true, 8));
  const ParallelLayout dp8 = Must(VllmLayout(spec, 1, 8, true, 8));
  EXPECT_GT(ForwardPeakActivationBytes(spec, dp8, 8192, 32768),
            ForwardPeakActivationBytes(spec, tp8, 8192, 32768));
}

TEST(MemoryModelTest, VllmRefusesMaxModelLenBeyondPool) {
  const ModelSpec spec = V32();
  const ParallelLayout l = Must(VllmLayout(spec, 1, 8, true, 8));
  VllmMemoryConfig c;
  c.max_model_len = 163840;
  c.gpu_memory_utilization = 0.8;
  absl::StatusOr<KvBudget> b = VllmKvBudget(spec, l, c);
  ASSERT_TRUE(b.ok()) << b.status();
  const absl::Status s = VllmCheckMaxModelLen(spec, c, *b);
  EXPECT_EQ(s.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_NE(s.message().find("max seq len (163840)"), std::string::npos) << s;
  EXPECT_NE(s.message().find("Try increasing `gpu_memory_utilization` or "
                             "decreasing `max_model_len`"),
            std::string::npos);
  c.max_model_len = b->kv_pool_bytes / 78324;
  EXPECT_TRUE(VllmCheckMaxModelLen(spec, c, *b).ok());
}

TEST(MemoryModelTest, WeightsThatDoNotFitAreResourceExhausted) {
  const ModelSpec spec = V32();
  VllmMemoryConfig c;
  c.max_model_len = 4096;
  EXPECT_EQ(VllmKvBudget(spec, Must(VllmLayout(spec, 1, 1, false, 8)), c)
                .status()
                .code(),
            absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(
      SglangKvBudget(spec, Must(SglangLayout(spec, 4, 1, false, 1, 0, 8)), {})
          .status()
          .code(),
      absl::StatusCode::kResourceExhausted);
}

TEST(MemoryModelTest, VllmRejectsMissingMaxModelLen) {
  const ModelSpec spec = V32();
  EXPECT_EQ(VllmKvBudget(spec, Must(VllmLayout(spec, 8, 1, false, 8)), {})
                .status()
                .code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(MemoryModelTest, TrtllmPoolIsFractionOfFreeMemory) {
  const ModelSpec spec = V32();
  const ParallelLayout l = Must(TrtllmLayout(spec, 8, 8, 1, false, 8));
  absl::StatusOr<KvBudget> b = TrtllmKvBudget(spec, l, {});
  ASSERT_TRUE(b.ok()) << b.status();
  const int64_t free_bytes =
      kH200CapacityBytes - b->weight_bytes - b->activation_reserve_bytes;
  EXPECT_EQ(b->kv_pool_bytes, static_cast<int64_t>(free_bytes * 0.9));
  EXPECT_EQ(b->kv_capacity_tokens % 32, 0);
}

}  // namespace
}  // namespace servesim::models
