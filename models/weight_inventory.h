// The model's weight tensors as one flat list (shape, storage dtype, copies,
// sharding rule). Parameter counts and per-GPU weight bytes are sums over it.
#ifndef SERVESIM_MODELS_WEIGHT_INVENTORY_H_
#define SERVESIM_MODELS_WEIGHT_INVENTORY_H_

#include <cstdint>
#include <string>
#include <vector>

#include "models/model_spec.pb.h"

namespace servesim::models {

// Which parallel dimension splits a tensor (resolved against a ParallelLayout
// by the memory model).
enum class ShardRule {
  kReplicated,      // every GPU holds it whole
  kAttentionTp,     // split across the attention TP group
  kDenseTp,         // split across the dense-FFN TP group
  kSharedExpertTp,  // split across the shared-expert TP group
  kRoutedExpert,    // instances split across EP, the width across MoE TP
  kEmbedding,       // vocab rows split across the attention TP group
  kLmHead,          // vocab rows split across the LM-head group
};

struct WeightTensor {
  std::string name;       // e.g. "self_attn.q_b_proj"
  int64_t rows = 0;       // output features (elements for a vector)
  int64_t cols = 1;       // input features (1 for a vector)
  int64_t instances = 0;  // copies: layers, or layers x experts
  bool quantized =
      false;  // stored in WeightFormat.quantized_dtype with block scales
  ShardRule shard = ShardRule::kReplicated;
  bool shard_cols =
      false;         // the split dimension is `cols` (row-parallel linear)
  bool mtp = false;  // belongs to the MTP modules
  bool embedding = false;  // a lookup table, not a matmul (not "active")
  // In the checkpoint, but the engines point the MTP module at the target
  // model's copy instead of loading this one: no GPU holds it.
  bool shares_target_copy = false;
};

// Every weight tensor of `spec` (main model and MTP modules). Spec must be
// valid.
std::vector<WeightTensor> WeightInventory(const ModelSpec& spec);

// Stored bytes of one instance cut to rows x cols: elements times dtype bytes,
// plus one scale per (block_rows x block_cols) block, rounded up, if quantised.
int64_t StoredBytes(const ModelSpec& spec, const WeightTensor& tensor,
                    int64_t rows, int64_t cols);

}  // namespace servesim::models

#endif  // SERVESIM_MODELS_WEIGHT_INVENTORY_H_
