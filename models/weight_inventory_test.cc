#include "models/weight_inventory.h"

#include <cstdint>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "models/model_spec.h"

namespace servesim::models {
namespace {

ModelSpec MustLoad(const std::string& name) {
  absl::StatusOr<ModelSpec> spec =
      LoadModelSpec(std::string(SERVESIM_SOURCE_DIR) + "/models/" + name);
  EXPECT_TRUE(spec.ok()) << spec.status();
  return spec.ok() ? *spec : ModelSpec();
}

// The first entry of `name`; a layer tensor is listed once for the dense
// layers and once for the MoE layers.
const WeightTensor* Find(const std::vector<WeightTensor>& inventory, const std::string& name,
                         bool mtp) {
  for (const WeightTensor& t : inventory) {
    if (t.name == name && t.mtp == mtp) return &t;
  }
  return nullptr;
}

// The checkpoint stores FP8 weights with one FP32 scale per 128 x 128 block
// (model-and-kernels.md §1); by hand: q_a_proj is 1536 x 7168, 12 x 56 blocks.
TEST(WeightInventoryTest, StoredBytesCountOneScalePerBlock) {
  const ModelSpec spec = MustLoad("deepseek_v32.textproto");
  const std::vector<WeightTensor> inventory = WeightInventory(spec);
  const WeightTensor* q_a = Find(inventory, "self_attn.q_a_proj", false);
  ASSERT_NE(q_a, nullptr);
  EXPECT_EQ(StoredBytes(spec, *q_a, 1536, 7168), int64_t{1536} * 7168 + 12 * 56 * 4);
  // 576 rows (512 latent + 64 RoPE) end in a partial block, which still
  // carries a whole scale: 5 block rows, not 4.5.
  const WeightTensor* kv_a = Find(inventory, "self_attn.kv_a_proj_with_mqa", false);
  ASSERT_NE(kv_a, nullptr);
  EXPECT_EQ(StoredBytes(spec, *kv_a, 576, 7168), int64_t{576} * 7168 + 5 * 56 * 4);
  // The LM head is BF16 and carries no scales.
  const WeightTensor* head = Find(inventory, "lm_head", false);
  ASSERT_NE(head, nullptr);
  EXPECT_FALSE(head->quantized);
  EXPECT_EQ(StoredBytes(spec, *head, 129280, 7168), int64_t{129280} * 7168 * 2);
}

// 58 MoE layers of 256 routed experts each, and one MTP module (a MoE layer
// of its own): config.json's first_k_dense_replace = 3 of 61 layers.
TEST(WeightInventoryTest, RoutedExpertsPerLayerAndModule) {
  const ModelSpec spec = MustLoad("deepseek_v32.textproto");
  const std::vector<WeightTensor> inventory = WeightInventory(spec);
  for (const char* name :
       {"mlp.experts.gate_proj", "mlp.experts.up_proj", "mlp.experts.down_proj"}) {
    const WeightTensor* main = Find(inventory, name, false);
    const WeightTensor* mtp = Find(inventory, name, true);
    ASSERT_NE(main, nullptr) << name;
    ASSERT_NE(mtp, nullptr) << name;
    EXPECT_EQ(main->instances, 58 * 256) << name;
    EXPECT_EQ(mtp->instances, 256) << name;
    EXPECT_EQ(main->shard, ShardRule::kRoutedExpert) << name;
  }
  // The down projection is row-parallel: MoE TP splits its input width.
  EXPECT_TRUE(Find(inventory, "mlp.experts.down_proj", false)->shard_cols);
  EXPECT_FALSE(Find(inventory, "mlp.experts.gate_proj", false)->shard_cols);
}

// The MTP module points at the target model's embedding and head, so no GPU
// holds the checkpoint's copies; its final norm is its own.
TEST(WeightInventoryTest, MtpSharesTheTargetEmbeddingAndHeadOnly) {
  const std::vector<WeightTensor> inventory = WeightInventory(MustLoad("deepseek_v32.textproto"));
  for (const WeightTensor& t : inventory) {
    const bool shared = t.mtp && (t.name == "embed_tokens" || t.name == "lm_head");
    EXPECT_EQ(t.shares_target_copy, shared) << t.name << (t.mtp ? " (mtp)" : "");
  }
}

// DeepSeek-V3 has dense MLA: no lightning indexer among its tensors; V3.2's
// indexer is replicated under TP, and its weights_proj stays BF16.
TEST(WeightInventoryTest, OnlyV32CarriesTheIndexer) {
  for (const WeightTensor& t : WeightInventory(MustLoad("deepseek_v3.textproto"))) {
    EXPECT_EQ(t.name.find("indexer"), std::string::npos) << t.name;
  }
  const std::vector<WeightTensor> v32 = WeightInventory(MustLoad("deepseek_v32.textproto"));
  const WeightTensor* wk = Find(v32, "self_attn.indexer.wk", false);
  const WeightTensor* weights_proj = Find(v32, "self_attn.indexer.weights_proj", false);
  ASSERT_NE(wk, nullptr);
  ASSERT_NE(weights_proj, nullptr);
  EXPECT_EQ(wk->shard, ShardRule::kReplicated);
  EXPECT_TRUE(wk->quantized);
  EXPECT_FALSE(weights_proj->quantized);
  // Every decoder layer has one, listed with the 3 dense and the 58 MoE layers.
  int64_t layers = 0;
  for (const WeightTensor& t : v32) {
    if (t.name == "self_attn.indexer.wk" && !t.mtp) layers += t.instances;
  }
  EXPECT_EQ(layers, 61);
}

}  // namespace
}  // namespace servesim::models
