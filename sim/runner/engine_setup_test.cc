#include "sim/runner/engine_setup.h"

#include <string>

#include "gtest/gtest.h"
#include "scenarios/serve_command.h"
#include "sim/runner/repo_context_for_test.h"

namespace servesim::runner {
namespace {

models::OpGraphOptions GraphOf(const std::string& serve) {
  absl::StatusOr<scenarios::EngineConfig> config =
      scenarios::ParseServeCommand(serve, {}, scenarios::ServeContext{});
  EXPECT_TRUE(config.ok()) << config.status();
  absl::StatusOr<EngineSetup> setup =
      PrepareEngine(*config, RepoPredictionContext().spec, scenarios::EngineParams{});
  EXPECT_TRUE(setup.ok()) << setup.status();
  return setup->predictor.graph;
}

// vLLM v0.13's FlashMLA sparse backend: one kernel for every row, chosen by
// the cache dtype, heads padded to 64, the whole top-k per row, no dense MHA.
TEST(EngineSetupTest, VllmSendsEveryRowThroughOneFlashMlaKernel) {
  models::OpGraphOptions g = GraphOf("vllm serve deepseek-ai/DeepSeek-V3.2 -tp 8");
  EXPECT_EQ(g.sparse_kernel_routing, models::SparseKernelRouting::kAllOnPrefillKernel);
  EXPECT_TRUE(g.sparse_prefill_full_topk);
  EXPECT_TRUE(g.sparse_decode_full_topk);
  EXPECT_EQ(g.dense_mha_prefill_max_tokens, 0);
  EXPECT_EQ(g.min_sparse_prefill_heads, 64);
  g = GraphOf("vllm serve deepseek-ai/DeepSeek-V3.2 -tp 8 --kv-cache-dtype fp8");
  EXPECT_EQ(g.sparse_kernel_routing, models::SparseKernelRouting::kAllOnDecodeKernel);
}

// SGLang: short prefills take dense MHA; FlashMLA backends walk the whole
// top-k, fa3 (the default decode backend on a BF16 cache) the real length.
TEST(EngineSetupTest, SglangChargesTheWholeTopkOnlyOnFlashMlaBackends) {
  models::OpGraphOptions g =
      GraphOf("python3 -m sglang.launch_server --model-path deepseek-ai/DeepSeek-V3.2 --tp-size 8");
  EXPECT_EQ(g.sparse_kernel_routing, models::SparseKernelRouting::kByPhase);
  EXPECT_EQ(g.dense_mha_prefill_max_tokens, 2048);
  EXPECT_TRUE(g.sparse_prefill_full_topk);   // flashmla_sparse
  EXPECT_FALSE(g.sparse_decode_full_topk);   // fa3
  EXPECT_EQ(g.min_sparse_decode_heads, 1);
  g = GraphOf(
      "python3 -m sglang.launch_server --model-path deepseek-ai/DeepSeek-V3.2 --tp-size 8 "
      "--kv-cache-dtype fp8_e4m3");
  EXPECT_TRUE(g.sparse_decode_full_topk);  // flashmla_kv
  EXPECT_EQ(g.min_sparse_decode_heads, 64);
  g = GraphOf(
      "python3 -m sglang.launch_server --model-path deepseek-ai/DeepSeek-V3.2 --tp-size 8 "
      "--nsa-prefill-backend fa3 --nsa-decode-backend fa3");
  EXPECT_FALSE(g.sparse_prefill_full_topk);
  EXPECT_FALSE(g.sparse_decode_full_topk);
}

}  // namespace
}  // namespace servesim::runner
