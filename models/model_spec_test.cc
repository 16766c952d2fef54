#include "models/model_spec.h"

#include <cmath>
#include <cstdint>
#include <string>

#include "gtest/gtest.h"

namespace servesim::models {
namespace {

const std::string kV32 =
    std::string(SERVESIM_SOURCE_DIR) + "/models/deepseek_v32.textproto";
const std::string kV3 =
    std::string(SERVESIM_SOURCE_DIR) + "/models/deepseek_v3.textproto";

ModelSpec MustLoad(const std::string& path) {
  absl::StatusOr<ModelSpec> spec = LoadModelSpec(path);
  EXPECT_TRUE(spec.ok()) << spec.status();
  return spec.ok() ? *spec : ModelSpec();
}

TEST(ModelSpecTest, LoadsDeepSeekV32Shapes) {
  const ModelSpec spec = MustLoad(kV32);
  EXPECT_EQ(spec.num_layers(), 61);
  EXPECT_EQ(spec.num_dense_layers(), 3);
  EXPECT_EQ(spec.mla().num_heads(), 128);
  EXPECT_EQ(spec.moe().num_routed_experts(), 256);
  ASSERT_TRUE(spec.has_indexer());
  EXPECT_EQ(spec.indexer().index_topk(), 2048);
  EXPECT_FALSE(MustLoad(kV3).has_indexer());
  // <｜User｜>, <｜Assistant｜> and V3.2's non-thinking </think>.
  EXPECT_EQ(spec.chat_template_tokens(), 3);
  EXPECT_EQ(MustLoad(kV3).chat_template_tokens(), 2);
  EXPECT_DOUBLE_EQ(spec.generation_top_p(), 0.95);
}

// model-and-kernels.md §1.1: main 671.9 B, with MTP 685.35 B (HF "685.4B"),
// MTP 13.48 B, active 37.5 B with the LM head, checkpoint ~689 GB.
TEST(ModelSpecTest, ParameterCountsMatchReference) {
  const ParameterCounts c = CountParameters(MustLoad(kV32));
  EXPECT_NEAR(c.main_model / 1e9, 671.9, 0.1);
  EXPECT_NEAR(c.mtp / 1e9, 13.48, 0.02);
  EXPECT_NEAR(c.checkpoint_total / 1e9, 685.35, 0.1);
  EXPECT_EQ(c.checkpoint_total, c.main_model + c.mtp);
  EXPECT_NEAR(c.active_per_token / 1e9, 37.5, 0.1);
  EXPECT_NEAR(c.checkpoint_bytes / 1e9, 689.0, 1.0);
}

// Without the indexer V3 loses 61 x 13.96 M (main) and 13.96 M (MTP)
// parameters.
TEST(ModelSpecTest, V3DiffersFromV32ByTheIndexerOnly) {
  const ParameterCounts v32 = CountParameters(MustLoad(kV32));
  const ParameterCounts v3 = CountParameters(MustLoad(kV3));
  // wq_b 1536x8192 + wk 7168x128 + k_norm 2x128 + weights_proj 7168x64.
  const int64_t indexer = 1536 * 8192 + 7168 * 128 + 256 + 7168 * 64;
  EXPECT_EQ(v32.main_model - v3.main_model, 61 * indexer);
  EXPECT_EQ(v32.mtp - v3.mtp, indexer);
}

// engine-defaults.md §C4: 1152 / 656 B latent, 132 B indexer key,
// 78,324 / 48,068 B per token over 61 layers.
TEST(ModelSpecTest, KvBytesMatchEngineLayouts) {
  const ModelSpec spec = MustLoad(kV32);
  EXPECT_EQ(KvBytesPerTokenPerLayer(spec, KvCacheDtype::kBf16), 1152);
  EXPECT_EQ(KvBytesPerTokenPerLayer(spec, KvCacheDtype::kFp8DsMla), 656);
  EXPECT_EQ(IndexerKeyBytesPerTokenPerLayer(spec), 132);
  EXPECT_EQ(KvBytesPerToken(spec, KvCacheDtype::kBf16, false), 78324);
  EXPECT_EQ(KvBytesPerToken(spec, KvCacheDtype::kFp8DsMla, false), 48068);
  EXPECT_EQ(KvBytesPerToken(spec, KvCacheDtype::kBf16, true), 62 * 1284);
}

// DeepSeek's reference point (K2): a 128K request holds 576 x 2 x 62 x 128 x
// 1024 B = 8.72 GiB of BF16 MLA latent over 61 layers + MTP.
TEST(ModelSpecTest, LatentOf128kRequestMatchesFlashMlaFigure) {
  const ModelSpec spec = MustLoad(kV32);
  const int64_t latent = KvBytesPerTokenPerLayer(spec, KvCacheDtype::kBf16) *
                         (spec.num_layers() + spec.num_mtp_layers()) * 128 *
                         1024;
  EXPECT_NEAR(latent / double(1 << 30), 8.72, 0.01);
}

TEST(ModelSpecTest, V3HasNoIndexerKeyBytes) {
  const ModelSpec spec = MustLoad(kV3);
  EXPECT_EQ(IndexerKeyBytesPerTokenPerLayer(spec), 0);
  EXPECT_EQ(KvBytesPerToken(spec, KvCacheDtype::kBf16, false), 61 * 1152);
}

TEST(ModelSpecTest, RejectsTopKAboveExperts) {
  ModelSpec spec = MustLoad(kV32);
  spec.mutable_moe()->set_experts_per_token(300);
  const absl::Status s = ValidateModelSpec(spec);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("experts_per_token"), std::string::npos) << s;
}

TEST(ModelSpecTest, RejectsNonPositiveHidden) {
  ModelSpec spec = MustLoad(kV32);
  spec.set_hidden_size(0);
  EXPECT_EQ(ValidateModelSpec(spec).message(),
            "model spec: hidden_size: must be > 0, got 0");
}

TEST(ModelSpecTest, RejectsNegativeChatTemplateTokens) {
  ModelSpec spec = MustLoad(kV32);
  spec.set_chat_template_tokens(-1);
  EXPECT_EQ(ValidateModelSpec(spec).message(),
            "model spec: chat_template_tokens: must be in [0, 1048576], got -1");
}

TEST(ModelSpecTest, RejectsTopPAboveOne) {
  ModelSpec spec = MustLoad(kV32);
  spec.set_generation_top_p(1.5);
  EXPECT_EQ(ValidateModelSpec(spec).message(),
            "model spec: generation_top_p: must be in (0, 1] (left out = not set), got 1.5");
}

// A top_p of 0 would keep no token; only leaving the field out means "no
// nucleus filtering".
TEST(ModelSpecTest, TopPZeroIsRefusedAndLeavingItOutIsNot) {
  ModelSpec spec = MustLoad(kV32);
  spec.set_generation_top_p(0);
  EXPECT_EQ(ValidateModelSpec(spec).message(),
            "model spec: generation_top_p: must be in (0, 1] (left out = not set), got 0");
  spec.clear_generation_top_p();
  EXPECT_TRUE(ValidateModelSpec(spec).ok());
  EXPECT_EQ(spec.generation_top_p(), 0);
}

// Each out-of-range field is refused in one line naming it, before any size
// is computed from it (INT32_MAX head dims once overflowed into negative
// weights).
struct BadSpec {
  const char* name;
  void (*mutate)(ModelSpec*);
  const char* expected;
};

class ModelSpecOutOfRangeTest : public ::testing::TestWithParam<BadSpec> {};

TEST_P(ModelSpecOutOfRangeTest, RefusedNamingTheField) {
  ModelSpec spec = MustLoad(kV32);
  GetParam().mutate(&spec);
  const absl::Status s = ValidateModelSpec(spec);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find(GetParam().expected), std::string::npos) << s;
  EXPECT_EQ(s.message().find('\n'), std::string::npos) << s;
}

constexpr int32_t kInt32Max = 2147483647;

INSTANTIATE_TEST_SUITE_P(
    Cases, ModelSpecOutOfRangeTest,
    ::testing::Values(
        BadSpec{"ScalingNan", [](ModelSpec* s) { s->mutable_moe()->set_routed_scaling_factor(NAN); },
                "moe.routed_scaling_factor: must be finite and >= 0, got nan"},
        BadSpec{"ScalingInf",
                [](ModelSpec* s) { s->mutable_moe()->set_routed_scaling_factor(INFINITY); },
                "moe.routed_scaling_factor: must be finite and >= 0, got inf"},
        BadSpec{"ScalingNegative",
                [](ModelSpec* s) { s->mutable_moe()->set_routed_scaling_factor(-2.5); },
                "moe.routed_scaling_factor: must be finite and >= 0, got -2.5"},
        BadSpec{"TopPNan", [](ModelSpec* s) { s->set_generation_top_p(NAN); },
                "generation_top_p: must be in (0, 1]"},
        BadSpec{"IndexTopk", [](ModelSpec* s) { s->mutable_indexer()->set_index_topk(kInt32Max); },
                "indexer.index_topk: must be <= 1048576, got 2147483647"},
        BadSpec{"QkNopeHeadDim",
                [](ModelSpec* s) { s->mutable_mla()->set_qk_nope_head_dim(kInt32Max); },
                "mla.qk_nope_head_dim: must be <= 1048576, got 2147483647"},
        BadSpec{"Layers", [](ModelSpec* s) { s->set_num_layers(kInt32Max); },
                "num_layers: must be <= 65536"},
        BadSpec{"Experts",
                [](ModelSpec* s) { s->mutable_moe()->set_num_routed_experts(1 << 24); },
                "moe.num_routed_experts: must be <= 65536"},
        BadSpec{"MtpLayers", [](ModelSpec* s) { s->set_num_mtp_layers(kInt32Max); },
                "num_mtp_layers: must be in [0, 65536]"},
        BadSpec{"ScaleBytes", [](ModelSpec* s) { s->mutable_weights()->set_scale_bytes(1 << 20); },
                "weights.scale_bytes: must be <= 8"},
        // Every field within its bound, the product of several beyond reach.
        BadSpec{"TotalParameters",
                [](ModelSpec* s) {
                  s->set_hidden_size(1 << 20);
                  s->mutable_moe()->set_expert_intermediate_size(1 << 20);
                  s->mutable_moe()->set_num_routed_experts(1 << 12);
                },
                "parameters, more than the 1e+15 servesim can size"},
        BadSpec{"KvBytesPerToken",
                [](ModelSpec* s) {
                  s->set_num_layers(1 << 16);
                  s->set_num_dense_layers(1 << 16);
                  s->set_dense_intermediate_size(1);
                  s->set_hidden_size(1);
                  s->set_vocab_size(1);
                  s->mutable_mla()->set_num_heads(1);
                  s->mutable_mla()->set_q_lora_rank(1);
                  s->mutable_mla()->set_kv_lora_rank(1 << 20);
                  s->clear_indexer();
                },
                "bytes per token, more than the 4294967296 servesim can size"}),
    [](const ::testing::TestParamInfo<BadSpec>& info) { return std::string(info.param.name); });

TEST(ModelSpecTest, DirectoryIsNotAReadableFile) {
  const absl::StatusOr<ModelSpec> spec =
      LoadModelSpec(std::string(SERVESIM_SOURCE_DIR) + "/models");
  ASSERT_FALSE(spec.ok());
  EXPECT_EQ(spec.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(spec.status().message().find("models: not a readable file (a directory)"),
            std::string::npos)
      << spec.status();
}

TEST(ModelSpecTest, RejectsASpecWithoutAName) {
  ModelSpec spec = MustLoad(kV32);
  spec.clear_name();
  EXPECT_EQ(ValidateModelSpec(spec).message(),
            "model spec: name: must name the model (e.g. \"deepseek-ai/DeepSeek-V3.2\")");
}

TEST(ModelSpecTest, RejectsANameWithAControlByte) {
  ModelSpec spec = MustLoad(kV32);
  spec.set_name("x y\n z");
  EXPECT_EQ(ValidateModelSpec(spec).message(), "model spec: name: control byte 0x0a at column 4");
}

TEST(ModelSpecTest, RejectsMoreDenseLayersThanLayers) {
  ModelSpec spec = MustLoad(kV32);
  spec.set_num_dense_layers(62);
  absl::Status s = ValidateModelSpec(spec);
  EXPECT_NE(s.message().find("num_dense_layers: must be in [0, num_layers=61], got 62"),
            std::string::npos)
      << s;
}

TEST(ModelSpecTest, ParseErrorNamesOriginAndLine) {
  const absl::StatusOr<ModelSpec> spec =
      ParseModelSpec("num_layers: 61\nbogus: 1\n", "x.textproto");
  ASSERT_FALSE(spec.ok());
  EXPECT_NE(spec.status().message().find("x.textproto: "), std::string::npos);
  EXPECT_NE(spec.status().message().find("2:"), std::string::npos)
      << spec.status();
}

TEST(ModelSpecTest, MissingFileIsNotFound) {
  EXPECT_EQ(LoadModelSpec("/nonexistent/spec.textproto").status().code(),
            absl::StatusCode::kNotFound);
}

}  // namespace
}  // namespace servesim::models
