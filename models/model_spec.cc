#include "models/model_spec.h"

#include <fstream>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "base/text_proto.h"
#include "models/sizes.h"
#include "models/weight_inventory.h"

namespace servesim::models {
namespace {

// FlashMLA's FP8 latent format (vLLM fp8_ds_mla) quantises the latent in tiles
// of 128 elements, one FP32 scale each, and keeps the rope part in BF16:
// entry = kv_lora_rank + 4 * (kv_lora_rank / 128) + 2 * rope = 656 B for V3.2
// (engine-defaults.md §C4; vLLM test_concat_and_cache_ds_mla).
constexpr int64_t kFp8DsMlaTileElements = 128;
constexpr int64_t kFp8DsMlaScaleBytes = 4;

absl::Status Positive(const std::string& field, int64_t value) {
  if (value > 0) return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrCat("model spec: ", field, ": must be > 0, got ", value));
}

}  // namespace

absl::StatusOr<ModelSpec> ParseModelSpec(const std::string& text,
                                         const std::string& origin) {
  ModelSpec spec;
  if (absl::Status parsed = ParseTextProto(text, &spec); !parsed.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(
        origin, ": not a valid ModelSpec textproto: ", parsed.message()));
  }
  absl::Status valid = ValidateModelSpec(spec);
  if (!valid.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat(origin, ": ", valid.message()));
  }
  return spec;
}

absl::StatusOr<ModelSpec> LoadModelSpec(const std::string& path) {
  std::ifstream in(path);
  if (!in)
    return absl::NotFoundError(absl::StrCat("model spec: cannot open ", path));
  std::stringstream text;
  text << in.rdbuf();
  return ParseModelSpec(text.str(), path);
}

absl::Status ValidateModelSpec(const ModelSpec& spec) {
  RETURN_IF_ERROR(Positive("num_layers", spec.num_layers()));
  RETURN_IF_ERROR(Positive("hidden_size", spec.hidden_size()));
  RETURN_IF_ERROR(Positive("vocab_size", spec.vocab_size()));
  RETURN_IF_ERROR(
      Positive("max_position_embeddings", spec.max_position_embeddings()));
  if (spec.num_dense_layers() < 0 ||
      spec.num_dense_layers() > spec.num_layers()) {
    return absl::InvalidArgumentError(
        absl::StrCat("model spec: num_dense_layers: must be in [0, num_layers=",
                     spec.num_layers(), "], got ", spec.num_dense_layers()));
  }
  if (spec.num_dense_layers() > 0) {
    RETURN_IF_ERROR(
        Positive("dense_intermediate_size", spec.dense_intermediate_size()));
  }
  if (spec.num_mtp_layers() < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("model spec: num_mtp_layers: must be >= 0, got ",
                     spec.num_mtp_layers()));
  }
  if (spec.chat_template_tokens() < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("model spec: chat_template_tokens: must be >= 0, got ",
                     spec.chat_template_tokens()));
  }
  if (!(spec.generation_top_p() >= 0 && spec.generation_top_p() <= 1)) {
    return absl::InvalidArgumentError(
        absl::StrCat("model spec: generation_top_p: must be in [0, 1] (0 = not set), got ",
                     spec.generation_top_p()));
  }
  const MlaSpec& a = spec.mla();
  RETURN_IF_ERROR(Positive("mla.num_heads", a.num_heads()));
  RETURN_IF_ERROR(Positive("mla.q_lora_rank", a.q_lora_rank()));
  RETURN_IF_ERROR(Positive("mla.kv_lora_rank", a.kv_lora_rank()));
  RETURN_IF_ERROR(Positive("mla.qk_nope_head_dim", a.qk_nope_head_dim()));
  RETURN_IF_ERROR(Positive("mla.qk_rope_head_dim", a.qk_rope_head_dim()));
  RETURN_IF_ERROR(Positive("mla.v_head_dim", a.v_head_dim()));
  if (spec.num_layers() > spec.num_dense_layers() ||
      spec.num_mtp_layers() > 0) {
    const MoeSpec& m = spec.moe();
    RETURN_IF_ERROR(Positive("moe.num_routed_experts", m.num_routed_experts()));
    RETURN_IF_ERROR(Positive("moe.experts_per_token", m.experts_per_token()));
    RETURN_IF_ERROR(
        Positive("moe.expert_intermediate_size", m.expert_intermediate_size()));
    RETURN_IF_ERROR(Positive("moe.num_expert_groups", m.num_expert_groups()));
    RETURN_IF_ERROR(Positive("moe.topk_groups", m.topk_groups()));
    if (m.num_shared_experts() < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("model spec: moe.num_shared_experts: must be >= 0, got ",
                       m.num_shared_experts()));
    }
    if (m.experts_per_token() > m.num_routed_experts()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "model spec: moe.experts_per_token (", m.experts_per_token(),
          ") exceeds moe.num_routed_experts (", m.num_routed_experts(), ")"));
    }
    if (m.num_routed_experts() % m.num_expert_groups() != 0 ||
        m.topk_groups() > m.num_expert_groups()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "model spec: moe routing groups: need num_routed_experts % "
          "num_expert_groups == 0 "
          "and topk_groups <= num_expert_groups, got ",
          m.num_routed_experts(), " experts, ", m.num_expert_groups(),
          " groups, top ", m.topk_groups()));
    }
    const int64_t reachable = int64_t{m.num_routed_experts()} /
                              m.num_expert_groups() * m.topk_groups();
    if (m.experts_per_token() > reachable) {
      return absl::InvalidArgumentError(absl::StrCat(
          "model spec: moe.experts_per_token (", m.experts_per_token(),
          ") exceeds the experts in topk_groups groups (", reachable, ")"));
    }
  }
  if (spec.has_indexer()) {
    const IndexerSpec& ix = spec.indexer();
    RETURN_IF_ERROR(Positive("indexer.num_heads", ix.num_heads()));
    RETURN_IF_ERROR(Positive("indexer.head_dim", ix.head_dim()));
    RETURN_IF_ERROR(Positive("indexer.index_topk", ix.index_topk()));
    RETURN_IF_ERROR(
        Positive("indexer.key_element_bytes", ix.key_element_bytes()));
    RETURN_IF_ERROR(Positive("indexer.key_quant_block", ix.key_quant_block()));
    RETURN_IF_ERROR(Positive("indexer.key_scale_bytes", ix.key_scale_bytes()));
    if (ix.rope_head_dim() < 0 || ix.rope_head_dim() > ix.head_dim()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "model spec: indexer.rope_head_dim: must be in [0, head_dim=",
          ix.head_dim(), "], got ", ix.rope_head_dim()));
    }
    if (ix.head_dim() % ix.key_quant_block() != 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("model spec: indexer.head_dim (", ix.head_dim(),
                       ") must be a multiple of indexer.key_quant_block (",
                       ix.key_quant_block(), ")"));
    }
  }
  const WeightFormat& w = spec.weights();
  if (w.quantized_dtype() == WEIGHT_DTYPE_UNSPECIFIED ||
      w.unquantized_dtype() == WEIGHT_DTYPE_UNSPECIFIED) {
    return absl::InvalidArgumentError(
        "model spec: weights.quantized_dtype and weights.unquantized_dtype "
        "must be set");
  }
  RETURN_IF_ERROR(Positive("weights.block_rows", w.block_rows()));
  RETURN_IF_ERROR(Positive("weights.block_cols", w.block_cols()));
  if (w.quantized_dtype() == FP8_E4M3) {
    RETURN_IF_ERROR(Positive("weights.scale_bytes", w.scale_bytes()));
  }
  return absl::OkStatus();
}

ParameterCounts CountParameters(const ModelSpec& spec) {
  ParameterCounts c;
  const double active_expert_share = spec.moe().num_routed_experts() > 0
                                         ? double{1} *
                                               spec.moe().experts_per_token() /
                                               spec.moe().num_routed_experts()
                                         : 0;
  int64_t routed_main = 0;
  for (const WeightTensor& t : WeightInventory(spec)) {
    const int64_t params = t.rows * t.cols * t.instances;
    c.checkpoint_bytes += StoredBytes(spec, t, t.rows, t.cols) * t.instances;
    if (t.mtp) {
      c.mtp += params;
      continue;
    }
    c.main_model += params;
    if (t.embedding) continue;
    if (t.shard == ShardRule::kRoutedExpert) {
      routed_main += params;
    } else {
      c.active_per_token += params;
    }
  }
  c.active_per_token += static_cast<int64_t>(routed_main * active_expert_share);
  c.checkpoint_total = c.main_model + c.mtp;
  return c;
}

const char* KvCacheDtypeName(KvCacheDtype dtype) {
  return dtype == KvCacheDtype::kBf16 ? "bf16" : "fp8_ds_mla";
}

int64_t KvBytesPerTokenPerLayer(const ModelSpec& spec, KvCacheDtype dtype) {
  const int64_t latent = spec.mla().kv_lora_rank();
  const int64_t rope = spec.mla().qk_rope_head_dim();
  if (dtype == KvCacheDtype::kBf16) return (latent + rope) * kBf16Bytes;
  const int64_t tiles =
      (latent + kFp8DsMlaTileElements - 1) / kFp8DsMlaTileElements;
  return latent + tiles * kFp8DsMlaScaleBytes + rope * kBf16Bytes;
}

int64_t IndexerKeyBytesPerTokenPerLayer(const ModelSpec& spec) {
  if (!spec.has_indexer()) return 0;
  const IndexerSpec& ix = spec.indexer();
  return int64_t{ix.head_dim()} * ix.key_element_bytes() +
         int64_t{ix.head_dim()} / ix.key_quant_block() * ix.key_scale_bytes();
}

int64_t KvBytesPerToken(const ModelSpec& spec, KvCacheDtype dtype,
                        bool with_mtp_layer) {
  const int64_t layers =
      spec.num_layers() + (with_mtp_layer ? spec.num_mtp_layers() : 0);
  return layers * (KvBytesPerTokenPerLayer(spec, dtype) +
                   IndexerKeyBytesPerTokenPerLayer(spec));
}

}  // namespace servesim::models
