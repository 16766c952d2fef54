#include "models/parallel_layout.h"

#include <string>

#include "gtest/gtest.h"
#include "models/model_spec.h"

namespace servesim::models {
namespace {

using MoeComm = ParallelLayout::MoeComm;

ModelSpec V32() {
  absl::StatusOr<ModelSpec> spec = LoadModelSpec(
      std::string(SERVESIM_SOURCE_DIR) + "/models/deepseek_v32.textproto");
  EXPECT_TRUE(spec.ok()) << spec.status();
  return spec.ok() ? *spec : ModelSpec();
}

TEST(ParallelLayoutTest, VllmTp8SplitsEverythingEightWays) {
  absl::StatusOr<ParallelLayout> l = VllmLayout(V32(), 8, 1, false, 8);
  ASSERT_TRUE(l.ok()) << l.status();
  EXPECT_EQ(l->gpus, 8);
  EXPECT_EQ(l->attn_tp, 8);
  EXPECT_EQ(l->attn_dp, 1);
  EXPECT_EQ(l->moe_tp, 8);
  EXPECT_EQ(l->moe_ep, 1);
  EXPECT_EQ(l->moe_comm, MoeComm::kAllReduce);
}

TEST(ParallelLayoutTest, VllmDp8WithEpGathersAcrossRanks) {
  absl::StatusOr<ParallelLayout> l = VllmLayout(V32(), 1, 8, true, 8);
  ASSERT_TRUE(l.ok()) << l.status();
  EXPECT_EQ(l->attn_tp, 1);
  EXPECT_EQ(l->attn_dp, 8);
  EXPECT_EQ(l->moe_ep, 8);
  EXPECT_EQ(l->moe_tp, 1);
  EXPECT_EQ(l->shared_tp, 1);
  EXPECT_EQ(l->moe_comm, MoeComm::kAllGatherReduceScatter);
}

TEST(ParallelLayoutTest, VllmTp8WithEpKeepsAllReduce) {
  absl::StatusOr<ParallelLayout> l = VllmLayout(V32(), 8, 1, true, 8);
  ASSERT_TRUE(l.ok()) << l.status();
  EXPECT_EQ(l->moe_ep, 8);
  EXPECT_EQ(l->moe_comm, MoeComm::kAllReduce);
}

TEST(ParallelLayoutTest, SglangDpAttentionSplitsAttentionByDp) {
  absl::StatusOr<ParallelLayout> l = SglangLayout(V32(), 8, 8, true, 1, 0, 8);
  ASSERT_TRUE(l.ok()) << l.status();
  EXPECT_EQ(l->gpus, 8);
  EXPECT_EQ(l->attn_tp, 1);
  EXPECT_EQ(l->attn_dp, 8);
  EXPECT_EQ(l->moe_tp, 8);
  EXPECT_EQ(l->dense_tp, 8);
  EXPECT_FALSE(l->lm_head_dp);
  EXPECT_EQ(l->moe_comm, MoeComm::kAllGatherReduceScatter);
}

// `--enable-dp-attention` without `--dp` leaves dp = 1: attention TP8.
TEST(ParallelLayoutTest, SglangDpAttentionWithDpOneIsAttentionTp) {
  absl::StatusOr<ParallelLayout> l = SglangLayout(V32(), 8, 1, true, 1, 0, 8);
  ASSERT_TRUE(l.ok()) << l.status();
  EXPECT_EQ(l->attn_tp, 8);
  EXPECT_EQ(l->attn_dp, 1);
  EXPECT_EQ(l->moe_comm, MoeComm::kAllReduce);
}

TEST(ParallelLayoutTest, SglangEpAndDenseTpOne) {
  absl::StatusOr<ParallelLayout> l = SglangLayout(V32(), 8, 8, true, 8, 1, 8);
  ASSERT_TRUE(l.ok()) << l.status();
  EXPECT_EQ(l->moe_ep, 8);
  EXPECT_EQ(l->moe_tp, 1);
  EXPECT_EQ(l->dense_tp, 1);
}

TEST(ParallelLayoutTest, SglangRefusesDpNotDividingTp) {
  absl::StatusOr<ParallelLayout> l = SglangLayout(V32(), 8, 3, true, 1, 0, 8);
  ASSERT_FALSE(l.ok());
  EXPECT_NE(l.status().message().find("divisible by dp_size"),
            std::string::npos);
}

TEST(ParallelLayoutTest, SglangRefusesDenseTpOtherThanOne) {
  absl::StatusOr<ParallelLayout> l = SglangLayout(V32(), 8, 8, true, 1, 2, 8);
  ASSERT_FALSE(l.ok());
  EXPECT_NE(l.status().message().find("moe_dense_tp_size only support 1 and None currently, got 2"),
            std::string::npos)
      << l.status();
}

TEST(ParallelLayoutTest, TrtllmTp8Ep8IsExpertParallelInsideTp) {
  absl::StatusOr<ParallelLayout> l = TrtllmLayout(V32(), 8, 8, 1, false, 8);
  ASSERT_TRUE(l.ok()) << l.status();
  EXPECT_EQ(l->attn_tp, 8);
  EXPECT_EQ(l->moe_ep, 8);
  EXPECT_EQ(l->moe_tp, 1);
  EXPECT_EQ(l->moe_comm, MoeComm::kAllReduce);
}

TEST(ParallelLayoutTest, TrtllmRefusesPipelineParallel) {
  EXPECT_EQ(TrtllmLayout(V32(), 4, 1, 2, false, 8).status().code(),
            absl::StatusCode::kUnimplemented);
}

TEST(ParallelLayoutTest, RefusesHeadsNotDivisibleByTp) {
  absl::StatusOr<ParallelLayout> l = VllmLayout(V32(), 3, 1, false, 8);
  ASSERT_FALSE(l.ok());
  EXPECT_NE(l.status().message().find("attention heads (128)"),
            std::string::npos)
      << l.status();
}

TEST(ParallelLayoutTest, RefusesExpertsNotDivisibleByEp) {
  absl::StatusOr<ParallelLayout> l = SglangLayout(V32(), 6, 6, true, 6, 0, 8);
  ASSERT_FALSE(l.ok());
  EXPECT_NE(l.status().message().find("expert parallel size (6)"),
            std::string::npos)
      << l.status();
}

// vLLM spreads 256 experts over 6 ranks unevenly rather than refusing:
// servesim says it does not model that (SGLang's rule above refuses).
TEST(ParallelLayoutTest, VllmUnevenExpertPlacementIsNotModelled) {
  absl::StatusOr<ParallelLayout> l = VllmLayout(V32(), 1, 6, true, 8);
  EXPECT_EQ(l.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_NE(l.status().message().find("256 experts over expert parallel size 6"), std::string::npos)
      << l.status();
}

TEST(ParallelLayoutTest, RefusesMoreGpusThanNode) {
  absl::StatusOr<ParallelLayout> l = VllmLayout(V32(), 8, 2, true, 8);
  ASSERT_FALSE(l.ok());
  EXPECT_NE(l.status().message().find("16 GPUs"), std::string::npos)
      << l.status();
  EXPECT_TRUE(VllmLayout(V32(), 8, 2, true, 16).ok());
}

// FP8 weights come in 128-wide blocks: 32-way MoE TP leaves each GPU 64 of
// an expert's 2048 columns, which vLLM's and SGLang's FP8 MoE refuse; 16-way
// leaves 128, and expert parallelism keeps whole experts.
TEST(ParallelLayoutTest, RefusesSlicesSmallerThanAQuantBlock) {
  absl::StatusOr<ParallelLayout> l = VllmLayout(V32(), 1, 32, false, 32);
  EXPECT_EQ(l.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(l.status().message(),
            "vllm: The output_size of gate's and up's weight = 64 is not divisible by weight "
            "quantization block_n = 128.");
  EXPECT_TRUE(VllmLayout(V32(), 1, 16, false, 16).ok());
  EXPECT_TRUE(VllmLayout(V32(), 1, 32, true, 32).ok());
  // SGLang's dense MLP at 32-way TP: 18432 / 32 = 576 columns, 4.5 blocks.
  absl::StatusOr<ParallelLayout> dense = SglangLayout(V32(), 32, 1, false, 32, 0, 32);
  EXPECT_EQ(dense.status().code(), absl::StatusCode::kFailedPrecondition);
}

TEST(ParallelLayoutTest, RefusesNonPositiveSizes) {
  EXPECT_EQ(VllmLayout(V32(), 0, 1, false, 8).status().message(),
            "vllm: --tensor-parallel-size: must be > 0, got 0");
  EXPECT_FALSE(TrtllmLayout(V32(), 8, -1, 1, false, 8).ok());
}

TEST(ParallelLayoutTest, DescribeNamesEveryDimension) {
  absl::StatusOr<ParallelLayout> l = VllmLayout(V32(), 1, 8, true, 8);
  ASSERT_TRUE(l.ok());
  EXPECT_EQ(
      l->Describe(),
      "gpus=8 attn TP1xDP8, MoE TP1xEP8 (allgather/reducescatter), dense TP1, "
      "shared TP1, lm_head DP");
}

}  // namespace
}  // namespace servesim::models
