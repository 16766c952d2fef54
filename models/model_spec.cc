#include "models/model_spec.h"

#include <cmath>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/control_byte.h"
#include "base/read_file.h"
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

// Upper bounds far above any real model (DeepSeek-V3: hidden 7168, vocab
// 129,280, 256 experts, 61 layers), low enough that a sum of two stays in
// int32 and a product of two or three far inside int64; the larger products
// are bounded by the totals below.
constexpr int64_t kMaxWidth = int64_t{1} << 20;      // hidden, vocab, ranks, head dims
constexpr int64_t kMaxCount = int64_t{1} << 16;      // layers, heads, experts
constexpr int64_t kMaxPositions = int64_t{1} << 24;  // context: 16.7 M tokens
constexpr int64_t kMaxElementBytes = 8;              // a float64
// The weights multiply up to four bounded fields (experts x layers x two
// widths), which the field bounds alone do not keep from int64: their total
// is checked in floating point first. 1e15 parameters is some 500 times the
// largest model served today.
constexpr double kMaxParameters = 1e15;
// Cached bytes per token over all layers: DeepSeek-V3.2 78 kB; a dense
// multi-head model of 96 layers and heads of 128 dims under 5 MB.
constexpr int64_t kMaxKvBytesPerToken = int64_t{1} << 32;

// In [0, max]: a count that may be zero.
absl::Status ZeroOrUpTo(const std::string& field, int64_t value, int64_t max) {
  if (value >= 0 && value <= max) return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrCat("model spec: ", field, ": must be in [0, ", max, "], got ", value));
}

// > 0 and at most `max`.
absl::Status InRange(const std::string& field, int64_t value, int64_t max) {
  RETURN_IF_ERROR(Positive(field, value));
  if (value <= max) return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrCat("model spec: ", field, ": must be <= ", max, ", got ", value));
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
  absl::StatusOr<std::string> text = ReadFileToString(path);
  if (!text.ok()) {
    return absl::Status(text.status().code(),
                        absl::StrCat("model spec: ", text.status().message()));
  }
  return ParseModelSpec(*text, path);
}

absl::Status ValidateModelSpec(const ModelSpec& spec) {
  // The name is what a serve command must serve (or be mapped onto) and what
  // the report says was simulated.
  if (spec.name().empty()) {
    return absl::InvalidArgumentError("model spec: name: must name the model (e.g. "
                                      "\"deepseek-ai/DeepSeek-V3.2\")");
  }
  // It is echoed into the report's `#` header lines: a newline there would
  // start a line that is neither header nor report.
  if (const std::optional<size_t> at = FirstControlByte(absl::string_view(spec.name()), false)) {
    return absl::InvalidArgumentError(
        absl::StrFormat("model spec: name: control byte 0x%02x at column %d",
                        static_cast<unsigned char>(spec.name()[*at]), *at + 1));
  }
  RETURN_IF_ERROR(InRange("num_layers", spec.num_layers(), kMaxCount));
  RETURN_IF_ERROR(InRange("hidden_size", spec.hidden_size(), kMaxWidth));
  RETURN_IF_ERROR(InRange("vocab_size", spec.vocab_size(), kMaxWidth));
  RETURN_IF_ERROR(InRange("max_position_embeddings",
                          spec.max_position_embeddings(), kMaxPositions));
  if (spec.num_dense_layers() < 0 ||
      spec.num_dense_layers() > spec.num_layers()) {
    return absl::InvalidArgumentError(
        absl::StrCat("model spec: num_dense_layers: must be in [0, num_layers=",
                     spec.num_layers(), "], got ", spec.num_dense_layers()));
  }
  if (spec.num_dense_layers() > 0) {
    RETURN_IF_ERROR(InRange("dense_intermediate_size",
                            spec.dense_intermediate_size(), kMaxWidth));
  }
  RETURN_IF_ERROR(ZeroOrUpTo("num_mtp_layers", spec.num_mtp_layers(), kMaxCount));
  RETURN_IF_ERROR(ZeroOrUpTo("chat_template_tokens", spec.chat_template_tokens(), kMaxWidth));
  if (spec.has_generation_top_p() &&
      !(spec.generation_top_p() > 0 && spec.generation_top_p() <= 1)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "model spec: generation_top_p: must be in (0, 1] (left out = not set), "
        "got ",
        spec.generation_top_p()));
  }
  const MlaSpec& a = spec.mla();
  RETURN_IF_ERROR(InRange("mla.num_heads", a.num_heads(), kMaxCount));
  RETURN_IF_ERROR(InRange("mla.q_lora_rank", a.q_lora_rank(), kMaxWidth));
  RETURN_IF_ERROR(InRange("mla.kv_lora_rank", a.kv_lora_rank(), kMaxWidth));
  RETURN_IF_ERROR(
      InRange("mla.qk_nope_head_dim", a.qk_nope_head_dim(), kMaxWidth));
  RETURN_IF_ERROR(
      InRange("mla.qk_rope_head_dim", a.qk_rope_head_dim(), kMaxWidth));
  RETURN_IF_ERROR(InRange("mla.v_head_dim", a.v_head_dim(), kMaxWidth));
  if (spec.num_layers() > spec.num_dense_layers() ||
      spec.num_mtp_layers() > 0) {
    const MoeSpec& m = spec.moe();
    RETURN_IF_ERROR(
        InRange("moe.num_routed_experts", m.num_routed_experts(), kMaxCount));
    RETURN_IF_ERROR(
        InRange("moe.experts_per_token", m.experts_per_token(), kMaxCount));
    RETURN_IF_ERROR(InRange("moe.expert_intermediate_size",
                            m.expert_intermediate_size(), kMaxWidth));
    RETURN_IF_ERROR(
        InRange("moe.num_expert_groups", m.num_expert_groups(), kMaxCount));
    RETURN_IF_ERROR(InRange("moe.topk_groups", m.topk_groups(), kMaxCount));
    RETURN_IF_ERROR(ZeroOrUpTo("moe.num_shared_experts", m.num_shared_experts(), kMaxCount));
    // Not used in any cost, but a value no checkpoint has is a broken spec.
    if (!(std::isfinite(m.routed_scaling_factor()) &&
          m.routed_scaling_factor() >= 0)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "model spec: moe.routed_scaling_factor: must be finite and >= 0, "
          "got ",
          m.routed_scaling_factor()));
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
    RETURN_IF_ERROR(InRange("indexer.num_heads", ix.num_heads(), kMaxCount));
    RETURN_IF_ERROR(InRange("indexer.head_dim", ix.head_dim(), kMaxWidth));
    RETURN_IF_ERROR(InRange("indexer.index_topk", ix.index_topk(), kMaxWidth));
    RETURN_IF_ERROR(InRange("indexer.key_element_bytes",
                            ix.key_element_bytes(), kMaxElementBytes));
    RETURN_IF_ERROR(
        InRange("indexer.key_quant_block", ix.key_quant_block(), kMaxWidth));
    RETURN_IF_ERROR(InRange("indexer.key_scale_bytes", ix.key_scale_bytes(),
                            kMaxElementBytes));
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
  RETURN_IF_ERROR(InRange("weights.block_rows", w.block_rows(), kMaxWidth));
  RETURN_IF_ERROR(InRange("weights.block_cols", w.block_cols(), kMaxWidth));
  if (w.quantized_dtype() == FP8_E4M3) {
    RETURN_IF_ERROR(
        InRange("weights.scale_bytes", w.scale_bytes(), kMaxElementBytes));
  }
  double parameters = 0;
  for (const WeightTensor& t : WeightInventory(spec)) {
    parameters += static_cast<double>(t.rows) * t.cols * t.instances;
  }
  if (parameters > kMaxParameters) {
    return absl::InvalidArgumentError(
        absl::StrCat("model spec: the weights come to ", parameters,
                     " parameters, more than the ", kMaxParameters,
                     " servesim can size"));
  }
  // BF16, the larger of the two cache layouts.
  const int64_t kv_bytes =
      KvBytesPerToken(spec, KvCacheDtype::kBf16, /*with_mtp_layer=*/true);
  if (kv_bytes > kMaxKvBytesPerToken) {
    return absl::InvalidArgumentError(
        absl::StrCat("model spec: the KV cache comes to ", kv_bytes,
                     " bytes per token, more than the ", kMaxKvBytesPerToken,
                     " servesim can size"));
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
