#include "models/weight_inventory.h"

#include <algorithm>

#include "models/sizes.h"

namespace servesim::models {
namespace {

int64_t DtypeBytes(WeightDtype dtype) {
  switch (dtype) {
    case FP8_E4M3:
      return 1;
    case BF16:
      return 2;
    default:
      return 0;  // rejected by ValidateModelSpec
  }
}

bool Unquantized(const ModelSpec& spec, TensorClass cls) {
  const auto& list = spec.weights().unquantized();
  return std::find(list.begin(), list.end(), cls) != list.end();
}

// Appends one decoder layer's tensors; `instances` = layers of this kind.
void AddDecoderLayer(const ModelSpec& spec, int64_t instances, bool moe,
                     bool mtp, std::vector<WeightTensor>& out) {
  const MlaSpec& a = spec.mla();
  const int64_t h = spec.hidden_size();
  const int64_t heads = a.num_heads();
  const bool norm_q = !Unquantized(spec, NORM);
  auto add = [&](std::string name, int64_t rows, int64_t cols, bool quantized,
                 ShardRule shard, bool shard_cols = false, int64_t mult = 1) {
    out.push_back(WeightTensor{std::move(name), rows, cols, instances * mult,
                               quantized, shard, shard_cols, mtp, false});
  };
  add("input_layernorm", h, 1, norm_q, ShardRule::kReplicated);
  add("self_attn.q_a_proj", a.q_lora_rank(), h, true, ShardRule::kReplicated);
  add("self_attn.q_a_layernorm", a.q_lora_rank(), 1, norm_q,
      ShardRule::kReplicated);
  add("self_attn.q_b_proj",
      heads * (a.qk_nope_head_dim() + a.qk_rope_head_dim()), a.q_lora_rank(),
      true, ShardRule::kAttentionTp);
  add("self_attn.kv_a_proj_with_mqa", a.kv_lora_rank() + a.qk_rope_head_dim(),
      h, true, ShardRule::kReplicated);
  add("self_attn.kv_a_layernorm", a.kv_lora_rank(), 1, norm_q,
      ShardRule::kReplicated);
  add("self_attn.kv_b_proj", heads * (a.qk_nope_head_dim() + a.v_head_dim()),
      a.kv_lora_rank(), true, ShardRule::kAttentionTp);
  add("self_attn.o_proj", h, heads * a.v_head_dim(), true,
      ShardRule::kAttentionTp,
      /*shard_cols=*/true);
  if (spec.has_indexer()) {
    // The indexer is replicated under TP in vLLM (ReplicatedLinear) and in the
    // DeepSeek reference code (model-and-kernels.md §4.1).
    const IndexerSpec& ix = spec.indexer();
    add("self_attn.indexer.wq_b", int64_t{ix.num_heads()} * ix.head_dim(),
        a.q_lora_rank(), true, ShardRule::kReplicated);
    add("self_attn.indexer.wk", ix.head_dim(), h, true, ShardRule::kReplicated);
    add("self_attn.indexer.k_norm", 2 * int64_t{ix.head_dim()}, 1, norm_q,
        ShardRule::kReplicated);  // LayerNorm: weight + bias
    add("self_attn.indexer.weights_proj", ix.num_heads(), h,
        !Unquantized(spec, INDEXER_WEIGHTS_PROJ), ShardRule::kReplicated);
  }
  add("post_attention_layernorm", h, 1, norm_q, ShardRule::kReplicated);
  if (!moe) {
    const int64_t w = spec.dense_intermediate_size();
    add("mlp.gate_proj", w, h, true, ShardRule::kDenseTp);
    add("mlp.up_proj", w, h, true, ShardRule::kDenseTp);
    add("mlp.down_proj", h, w, true, ShardRule::kDenseTp, /*shard_cols=*/true);
    return;
  }
  const MoeSpec& m = spec.moe();
  const bool gate_q = !Unquantized(spec, ROUTER_GATE);
  add("mlp.gate", m.num_routed_experts(), h, gate_q, ShardRule::kReplicated);
  add("mlp.gate.e_score_correction_bias", m.num_routed_experts(), 1, gate_q,
      ShardRule::kReplicated);
  const int64_t ws =
      int64_t{m.expert_intermediate_size()} * m.num_shared_experts();
  if (ws > 0) {
    add("mlp.shared_experts.gate_proj", ws, h, true,
        ShardRule::kSharedExpertTp);
    add("mlp.shared_experts.up_proj", ws, h, true, ShardRule::kSharedExpertTp);
    add("mlp.shared_experts.down_proj", h, ws, true, ShardRule::kSharedExpertTp,
        true);
  }
  const int64_t we = m.expert_intermediate_size();
  const int64_t e = m.num_routed_experts();
  add("mlp.experts.gate_proj", we, h, true, ShardRule::kRoutedExpert, false, e);
  add("mlp.experts.up_proj", we, h, true, ShardRule::kRoutedExpert, false, e);
  add("mlp.experts.down_proj", h, we, true, ShardRule::kRoutedExpert, true, e);
}

void AddEmbeddingAndHead(const ModelSpec& spec, int64_t instances, bool mtp,
                         std::vector<WeightTensor>& out) {
  const int64_t h = spec.hidden_size();
  const int64_t v = spec.vocab_size();
  out.push_back(WeightTensor{
      "embed_tokens", v, h, instances, !Unquantized(spec, EMBEDDING),
      ShardRule::kEmbedding, false, mtp, /*embedding=*/true});
  out.push_back(WeightTensor{"norm", h, 1, instances, !Unquantized(spec, NORM),
                             ShardRule::kReplicated, false, mtp, false});
  out.push_back(WeightTensor{"lm_head", v, h, instances,
                             !Unquantized(spec, LM_HEAD), ShardRule::kLmHead,
                             false, mtp, false});
}

}  // namespace

std::vector<WeightTensor> WeightInventory(const ModelSpec& spec) {
  std::vector<WeightTensor> out;
  const int64_t dense = spec.num_dense_layers();
  const int64_t moe = spec.num_layers() - dense;
  AddEmbeddingAndHead(spec, 1, /*mtp=*/false, out);
  if (dense > 0)
    AddDecoderLayer(spec, dense, /*moe=*/false, /*mtp=*/false, out);
  if (moe > 0) AddDecoderLayer(spec, moe, /*moe=*/true, /*mtp=*/false, out);
  const int64_t n_mtp = spec.num_mtp_layers();
  if (n_mtp > 0) {
    // Each MTP module: a full MoE decoder layer, enorm/hnorm, eh_proj mapping
    // [embedding; hidden] (2*hidden) to hidden, and its own embedding and head
    // copies (model-and-kernels.md §1.1). eh_proj is a plain BF16 linear,
    // replicated (vLLM's and SGLang's nn.Linear [U: recalled]). The engines
    // share the target model's embedding and head with the MTP module
    // (vLLM's EagleProposer.load_model, SGLang's set_embed_and_head,
    // TensorRT-LLM's MTP layers [U: recalled]): the checkpoint's copies are
    // counted, not held.
    AddDecoderLayer(spec, n_mtp, /*moe=*/true, /*mtp=*/true, out);
    const int64_t h = spec.hidden_size();
    const bool norm_q = !Unquantized(spec, NORM);
    out.push_back(WeightTensor{"mtp.enorm", h, 1, n_mtp, norm_q,
                               ShardRule::kReplicated, false, true, false});
    out.push_back(WeightTensor{"mtp.hnorm", h, 1, n_mtp, norm_q,
                               ShardRule::kReplicated, false, true, false});
    out.push_back(WeightTensor{"mtp.eh_proj", h, 2 * h, n_mtp, false, ShardRule::kReplicated, false,
                               true, false});
    const size_t first_shared = out.size();
    AddEmbeddingAndHead(spec, n_mtp, /*mtp=*/true, out);
    for (size_t i = first_shared; i < out.size(); ++i) {
      // The shared head's final norm is the module's own.
      out[i].shares_target_copy = out[i].name != "norm";
    }
  }
  return out;
}

int64_t StoredBytes(const ModelSpec& spec, const WeightTensor& tensor,
                    int64_t rows, int64_t cols) {
  const WeightFormat& f = spec.weights();
  if (!tensor.quantized) return rows * cols * DtypeBytes(f.unquantized_dtype());
  const int64_t scales =
      CeilDiv(rows, f.block_rows()) * CeilDiv(cols, f.block_cols());
  return rows * cols * DtypeBytes(f.quantized_dtype()) +
         scales * f.scale_bytes();
}

}  // namespace servesim::models
