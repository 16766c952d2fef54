// ModelSpec (model_spec.proto) loading and validation, plus the figures that
// follow from the spec alone: parameter counts, checkpoint bytes, KV bytes.
#ifndef SERVESIM_MODELS_MODEL_SPEC_H_
#define SERVESIM_MODELS_MODEL_SPEC_H_

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "models/model_spec.pb.h"

namespace servesim::models {

// Reads a text-format ModelSpec from `path` and validates it. Errors name the
// file and the offending field in one line; NotFound when `path` cannot be
// opened, InvalidArgument when it is a directory.
absl::StatusOr<ModelSpec> LoadModelSpec(const std::string& path);

// Parses text-format `text`; `origin` names the source in error messages.
absl::StatusOr<ModelSpec> ParseModelSpec(const std::string& text,
                                         const std::string& origin);

// Checks positive dimensions with upper bounds far above any real model,
// finite floats, cross-field rules (top-k <= experts, dense layers <= layers,
// indexer top-k > 0, ...), and totals (parameters, KV bytes per token) that
// keep every size servesim computes from the spec far from int64 overflow.
absl::Status ValidateModelSpec(const ModelSpec& spec);

struct ParameterCounts {
  int64_t main_model =
      0;            // all main-model parameters (embedding and head included)
  int64_t mtp = 0;  // the MTP modules, with their own embedding/head copies
  int64_t checkpoint_total = 0;  // main_model + mtp
  // Parameters a token's forward pass multiplies by: every matrix of the main
  // model except the embedding (a lookup), with routed experts counted for
  // experts_per_token of num_routed_experts; the LM head included.
  int64_t active_per_token = 0;
  int64_t checkpoint_bytes =
      0;  // stored bytes: quantised + block scales + unquantised
};

ParameterCounts CountParameters(const ModelSpec& spec);

// Layout of the cached MLA latent (the KV cache proper).
enum class KvCacheDtype {
  kBf16,      // (kv_lora_rank + qk_rope_head_dim) BF16 values
  kFp8DsMla,  // vLLM fp8_ds_mla / FlashMLA FP8: e4m3 latent + FP32 tile scales
              // + BF16 rope
};

// "bf16" or "fp8_ds_mla".
const char* KvCacheDtypeName(KvCacheDtype dtype);

// MLA latent bytes per token per layer: BF16 1152 B, fp8_ds_mla 656 B for V3.2.
int64_t KvBytesPerTokenPerLayer(const ModelSpec& spec, KvCacheDtype dtype);

// Lightning-indexer key bytes per token per layer (FP8 key + per-block scale:
// 132 B for V3.2); 0 without an indexer.
int64_t IndexerKeyBytesPerTokenPerLayer(const ModelSpec& spec);

// All cached bytes of one token over every layer (latent + indexer key), plus
// the MTP layers' own caches when `with_mtp_layer`.
int64_t KvBytesPerToken(const ModelSpec& spec, KvCacheDtype dtype,
                        bool with_mtp_layer);

}  // namespace servesim::models

#endif  // SERVESIM_MODELS_MODEL_SPEC_H_
