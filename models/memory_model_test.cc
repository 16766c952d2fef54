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

// Hand-derived bytes of DeepSeek-V3.2, from the shapes in model-and-kernels.md §1 ("Model
// configuration" table) and its "Weight dtype" row: an FP8 matrix of r x c stores r*c bytes plus
// one FP32 scale per 128 x 128 block, q(r, c) = r*c + ceil(r/128)*ceil(c/128)*4 (the "+ 0.024 %
// scales" of §1.1's "Checkpoint size" row); embedding, LM head, norms, router gate (and its bias)
// and the indexer's weights_proj are BF16, 2 B per element.
//
// One layer's attention (MLA, lightning indexer and the layer's two norms). Replicated under any
// TP: norms (2 x 7168 + 1536 + 512 + k_norm's 2 x 128) x 2 = 33,280; q_a q(1536, 7168) =
// 11,012,736; kv_a q(576, 7168) = 4,129,888; indexer wq_b q(64*128, 1536) = 12,585,984, wk
// q(128, 7168) = 917,728, weights_proj 64 x 7168 x 2 = 917,504: 29,597,120. Split by attention
// TP: q_b q(128*192/tp, 1536), kv_b q(128*256/tp, 512), o q(7168, 128*128/tp).
constexpr int64_t kAttentionReplicated = 29'597'120;
constexpr int64_t kAttentionTp1 =
    kAttentionReplicated + 37'757'952 + 16'781'312 + 117'469'184;  // 201,605,568
constexpr int64_t kAttentionTp8 =
    kAttentionReplicated + 4'719'744 + 2'097'664 + 14'683'648;  // 51,098,176
// Dense FFN of layers 0-2: gate, up and down of 18432 x 7168; a TP8 slice is 2304 x 7168.
constexpr int64_t kDenseFfnTp1 = 3 * int64_t{132'152'832};  // 3 x q(18432, 7168)
constexpr int64_t kDenseFfnTp8 = 3 * int64_t{16'519'104};   // 3 x q(2304, 7168)
// A MoE layer: the BF16 router gate 256 x 7168 and its 256-entry bias (3,670,528), then gate, up
// and down of each expert, 2048 x 7168: whole q(2048, 7168) = 14,683,648, a TP8 slice q(256,
// 7168) = 1,835,456. MoE TP8 holds an eighth of all 256 routed + 1 shared experts; vLLM's EP8
// holds 32 routed experts and the shared one whole; TRT-LLM's TP8 + EP8 holds 32 routed whole and
// an eighth of the shared one, the same bytes as MoE TP8 (32 = 256 / 8).
constexpr int64_t kRouterGate = 3'670'528;
constexpr int64_t kMoeTp8 = kRouterGate + 3 * 257 * int64_t{1'835'456};  // 1,418,807,104
constexpr int64_t kMoeEp8 = kRouterGate + 3 * 33 * int64_t{14'683'648};  // 1,457,351,680
// Embedding or LM head, 129280 x 7168 BF16: whole 1,853,358,080, a TP8 vocab slice 16160 x 7168
// x 2 = 231,669,760. The final norm: 7168 x 2 = 14,336.
constexpr int64_t kVocabWhole = 1'853'358'080;
constexpr int64_t kVocabTp8 = 231'669'760;
constexpr int64_t kFinalNorm = 14'336;
// Per GPU, without MTP: 61 attention layers, 3 dense FFNs, 58 MoE layers, embedding, LM head and
// the final norm. vLLM TP8 splits everything 8 ways (§1.1 row "Weights per GPU, vLLM TP8":
// ~86 GB).
constexpr int64_t kVllmTp8Weights = 61 * kAttentionTp8 + 3 * kDenseFfnTp8 + 58 * kMoeTp8 +
                                    2 * kVocabTp8 + kFinalNorm;  // 86,019,826,560
// vLLM DP8 + EP8 (TP1) replicates attention, dense FFN, shared expert, embedding and head (§1.1
// row "Weights per GPU, vLLM DP8+EP8 (TP1)": ~101.7 GB).
constexpr int64_t kVllmDp8Ep8Weights = 61 * kAttentionTp1 + 3 * kDenseFfnTp1 + 58 * kMoeEp8 +
                                       2 * kVocabWhole + kFinalNorm;  // 101,720,443,072
// SGLang TP8 + DP-attention 8: attention TP1 and the embedding whole, dense FFN and MoE TP8, the
// LM head split over all 8 GPUs (no --enable-dp-lm-head).
constexpr int64_t kSglangDpAttention8Weights = 61 * kAttentionTp1 + 3 * kDenseFfnTp8 +
                                               58 * kMoeTp8 + kVocabWhole + kVocabTp8 +
                                               kFinalNorm;  // 96,822,465,792

// H200 as the engines see it: 143,771 MiB = 150,754,820,096 B (§1.1 row "H200 memory as the
// engine sees it"); the header's 1.5 GiB non-torch estimate; one BF16 token of KV over 61 layers,
// 61 x (576 x 2 + 132) = 78,324 B (§4.1 row "vLLM auto (BF16)").
constexpr int64_t kH200Bytes = 150'754'820'096;
constexpr int64_t kOverheadBytes = 1'610'612'736;
constexpr int64_t kBf16TokenBytes = 78'324;

// Conservation: one GPU holding everything holds exactly the checkpoint,
// less the MTP module's embedding and head, which the engines share with the
// target model: two BF16 129280 x 7168 matrices.
TEST(MemoryModelTest, SingleGpuHoldsTheCheckpointLessTheSharedMtpCopies) {
  const ModelSpec spec = V32();
  const ParallelLayout tp1 = Must(VllmLayout(spec, 1, 1, false, 8));
  EXPECT_EQ(WeightBytesPerGpu(spec, tp1, /*with_mtp=*/true),
            CountParameters(spec).checkpoint_bytes - 2 * int64_t{129280} * 7168 * 2);
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

// The hand counts above, and model-and-kernels.md §1.1's rounded figures: vLLM TP8 ~86 GB, vLLM
// DP8+EP8 ~101.7 GB.
TEST(MemoryModelTest, VllmWeightsPerGpuMatchHandCountAndReference) {
  const ModelSpec spec = V32();
  const int64_t tp8 =
      WeightBytesPerGpu(spec, Must(VllmLayout(spec, 8, 1, false, 8)), false);
  const int64_t dp8 =
      WeightBytesPerGpu(spec, Must(VllmLayout(spec, 1, 8, true, 8)), false);
  EXPECT_EQ(tp8, kVllmTp8Weights);
  EXPECT_EQ(dp8, kVllmDp8Ep8Weights);
  EXPECT_NEAR(tp8 / 1e9, 86.0, 0.3);
  EXPECT_NEAR(dp8 / 1e9, 101.7, 0.1);
}

// The reference's ~95 GB for SGLang TP8 + DP-attention 8 splits the embedding
// 8 ways; SGLang replicates it under DP attention (VocabParallelEmbedding with
// enable_tp = not dp attention), which adds 7/8 of 129280 x 7168 x 2 B.
TEST(MemoryModelTest, SglangDpAttentionReplicatesAttentionAndEmbedding) {
  const ModelSpec spec = V32();
  const int64_t bytes = WeightBytesPerGpu(
      spec, Must(SglangLayout(spec, 8, 8, true, 1, 0, 8)), false);
  EXPECT_EQ(bytes, kSglangDpAttention8Weights);
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

// SGLang's pool at --mem-fraction-static 0.8 under DP attention 8: floor(150,754,820,096 x 0.8)
// = 120,603,856,076 usable - 96,822,465,792 weights - 1,610,612,736 overhead = 22,170,777,548 B,
// 4422 whole pages of 64 x 78,324 = 5,012,736 B: 283,008 tokens per DP rank.
TEST(MemoryModelTest, SglangPoolIsFractionMinusWeightsAndOverhead) {
  const ModelSpec spec = V32();
  const ParallelLayout l = Must(SglangLayout(spec, 8, 8, true, 1, 0, 8));
  SglangMemoryConfig c;
  c.mem_fraction_static = 0.8;
  absl::StatusOr<KvBudget> b = SglangKvBudget(spec, l, c);
  ASSERT_TRUE(b.ok()) << b.status();
  EXPECT_EQ(b->usable_bytes, 120'603'856'076);
  EXPECT_EQ(b->kv_pool_bytes, 22'170'777'548);
  EXPECT_EQ(b->kv_capacity_tokens, 283'008);
  // With EAGLE/MTP the same: SGLang sizes the target's pool before the draft
  // worker loads its weights and one-layer cache from the memory outside it.
  c.speculative = true;
  b = SglangKvBudget(spec, l, c);
  ASSERT_TRUE(b.ok()) << b.status();
  EXPECT_EQ(b->kv_capacity_tokens, 283'008);
}

// vLLM TP8 at its defaults (gpu_memory_utilization 0.9, 8192 batched tokens, 1024 sequences,
// 32768-token fused-MoE chunks) and max_model_len 163,840, by the header's rule. A routed pair's
// MoE workspace is max(2w, h) + max(w, h) BF16 + h FP8 + h/128 FP32 scales = 2 x 7168 + 2 x 7168
// + 7168 + 56 x 4 = 36,064 B (expert width w = 2048 / 8, hidden h = 7168).
//   usable  floor(150,754,820,096 x 0.9)                                         135,679,338,086
//   weights  (the hand count above)                                              -86,019,826,560
//   profile run of 8192 tokens, 16 heads per GPU:
//     attention live set  8192 x (2 x 7168 + 16 x (2 x 512 + 64)) x 2               -520,093,696
//     fused-MoE workspaces  8192 x top-8 x 36,064 B per routed pair               -2,363,490,304
//     sampler  1024 x 129,280 x 4 B x 2 (logits, probs)                           -1,059,061,760
//   non-torch overhead  1.5 GiB                                                   -1,610,612,736
//   max_model_len buffers  163,840 x (5 x 576 x 2 + 40 x 132) (§4.1)              -1,808,793,600
//   KV pool                                                                       42,297,459,430
// = 8437 whole blocks of 64 x 78,324 B: 539,968 tokens, inside §4.1's "Rough KV room" row for
// vLLM TP8 (~530-580 K BF16 tokens).
TEST(MemoryModelTest, VllmTp8PoolMatchesTheHandBudget) {
  const ModelSpec spec = V32();
  VllmMemoryConfig c;
  c.max_model_len = 163840;
  absl::StatusOr<KvBudget> b = VllmKvBudget(spec, Must(VllmLayout(spec, 8, 1, false, 8)), c);
  ASSERT_TRUE(b.ok()) << b.status();
  EXPECT_EQ(b->gpu_capacity_bytes, kH200Bytes);
  EXPECT_EQ(b->usable_bytes, 135'679'338'086);
  EXPECT_EQ(b->weight_bytes, kVllmTp8Weights);
  EXPECT_EQ(b->activation_reserve_bytes,
            520'093'696 + 2'363'490'304 + 1'059'061'760 + kOverheadBytes + 1'808'793'600);
  EXPECT_EQ(b->kv_pool_bytes, 42'297'459'430);
  EXPECT_EQ(b->kv_bytes_per_token, kBf16TokenBytes);
  EXPECT_EQ(b->kv_capacity_tokens, 539'968);
}

// What vLLM DP8 + EP8 reserves before its KV pool at max_model_len 163,840, by the header's rule:
// a profile run of 8192 tokens per DP rank over all 128 heads, whose MoE sees the 8 ranks'
// 65,536 gathered tokens.
constexpr int64_t kVllmDp8Ep8Reserve163840 =
    2'516'582'400 +   // attention live set  8192 x (2 x 7168 + 128 x (2 x 512 + 64)) x 2
    9'453'961'216 +   // fused-MoE workspaces  min(65,536, 32,768 chunk) x top-8 x 36,064 (w 2048)
    1'879'048'192 +   // gathered MoE input and output  2 x 65,536 x 7168 x 2
    1'059'061'760 +   // sampler  1024 x 129,280 x 4 B x 2
    kOverheadBytes +  // 1.5 GiB non-torch
    1'808'793'600;    // max_model_len buffers  163,840 x (5 x 576 x 2 + 40 x 132)

// Halving max_model_len frees exactly the two length-sized buffers: 81920 x (5 x 576 x 2 + 40 x
// 132) B. At 163,840: 135,679,338,086 usable - 101,720,443,072 weights - 18,328,059,904 reserve
// = 15,630,835,110 B, 3118 blocks of 64 x 78,324 B (199,552 tokens); at 81,920 the pool is
// 904,396,800 B larger, 16,535,231,910 B, 3298 blocks (211,072 tokens).
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
  EXPECT_EQ(full->activation_reserve_bytes, kVllmDp8Ep8Reserve163840);
  EXPECT_EQ(full->kv_pool_bytes, 15'630'835'110);
  EXPECT_EQ(full->kv_capacity_tokens, 199'552);
  EXPECT_EQ(half->kv_pool_bytes, 16'535'231'910);
  EXPECT_EQ(half->kv_capacity_tokens, 211'072);
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

// At gpu_memory_utilization 0.8, DP8 + EP8 keeps floor(150,754,820,096 x 0.8) = 120,603,856,076
// - 101,720,443,072 weights - 18,328,059,904 reserve = 555,353,100 B of KV: 7090 tokens of
// 78,324 B (7090 x 78,324 = 555,317,160; 7091 would need 555,395,484), far short of 163,840.
TEST(MemoryModelTest, VllmRefusesMaxModelLenBeyondPool) {
  const ModelSpec spec = V32();
  const ParallelLayout l = Must(VllmLayout(spec, 1, 8, true, 8));
  VllmMemoryConfig c;
  c.max_model_len = 163840;
  c.gpu_memory_utilization = 0.8;
  absl::StatusOr<KvBudget> b = VllmKvBudget(spec, l, c);
  ASSERT_TRUE(b.ok()) << b.status();
  EXPECT_EQ(b->kv_pool_bytes, 555'353'100);
  const absl::Status s = VllmCheckMaxModelLen(spec, c, *b);
  EXPECT_EQ(s.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_NE(s.message().find("max seq len (163840)"), std::string::npos) << s;
  EXPECT_NE(s.message().find("the estimated maximum model length is 7090."), std::string::npos)
      << s;
  EXPECT_NE(s.message().find("Try increasing `gpu_memory_utilization` or "
                             "decreasing `max_model_len`"),
            std::string::npos);
  c.max_model_len = 7090;
  EXPECT_TRUE(VllmCheckMaxModelLen(spec, c, *b).ok());
  c.max_model_len = 7091;
  EXPECT_EQ(VllmCheckMaxModelLen(spec, c, *b).code(), absl::StatusCode::kResourceExhausted);
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

// Weights load whatever the memory fraction: 80 GiB of TP8 weights under a
// 0.5 fraction (70 GiB) fail as the engines fail then, for want of pool
// memory, not as a GPU too small for the weights.
TEST(MemoryModelTest, AFractionBelowTheWeightsFailsAsTheEnginesPool) {
  const ModelSpec spec = V32();
  VllmMemoryConfig v;
  v.max_model_len = 4096;
  v.gpu_memory_utilization = 0.5;
  const absl::Status vllm = VllmKvBudget(spec, Must(VllmLayout(spec, 8, 1, false, 8)), v).status();
  EXPECT_NE(vllm.message().find("No available memory for the cache blocks"), std::string::npos)
      << vllm;
  SglangMemoryConfig s;
  s.mem_fraction_static = 0.5;
  const absl::Status sglang =
      SglangKvBudget(spec, Must(SglangLayout(spec, 8, 1, false, 1, 0, 8)), s).status();
  EXPECT_EQ(sglang.message(),
            "sglang: Not enough memory. Please try to increase --mem-fraction-static.");
}

TEST(MemoryModelTest, VllmRejectsMissingMaxModelLen) {
  const ModelSpec spec = V32();
  EXPECT_EQ(VllmKvBudget(spec, Must(VllmLayout(spec, 8, 1, false, 8)), {})
                .status()
                .code(),
            absl::StatusCode::kInvalidArgument);
}

// TRT-LLM TP8 + EP8 holds vLLM TP8's weights (see kMoeTp8) and reserves a forward of
// max_num_tokens 8192 (16 heads per GPU, no gather, 8192-token MoE chunk) and max_batch_size
// 2048 rows of FP32 logits:
//   150,754,820,096 - 86,019,826,560 weights - (520,093,696 attention + 2,363,490,304 MoE
//   workspaces + 2048 x 129,280 x 4 = 1,059,061,760 logits + 1,610,612,736 overhead
//   = 5,553,258,496) = 59,181,735,040 B free,
// of which free_gpu_memory_fraction 0.9 is 53,263,561,536 B: 21,251 blocks of 32 x 78,324 B,
// 680,032 tokens.
TEST(MemoryModelTest, TrtllmPoolIsFractionOfFreeMemory) {
  const ModelSpec spec = V32();
  const ParallelLayout l = Must(TrtllmLayout(spec, 8, 8, 1, false, 8));
  absl::StatusOr<KvBudget> b = TrtllmKvBudget(spec, l, {});
  ASSERT_TRUE(b.ok()) << b.status();
  EXPECT_EQ(b->weight_bytes, kVllmTp8Weights);
  EXPECT_EQ(b->activation_reserve_bytes,
            520'093'696 + 2'363'490'304 + 1'059'061'760 + kOverheadBytes);
  EXPECT_EQ(b->kv_pool_bytes, 53'263'561'536);
  EXPECT_EQ(b->kv_capacity_tokens, 680'032);
}

}  // namespace
}  // namespace servesim::models
