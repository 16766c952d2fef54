#include "models/memory_model.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "models/sizes.h"
#include "models/weight_inventory.h"

namespace servesim::models {
namespace {

// GPUs sharing one shard of a tensor under `rule`.
int ShardWays(ShardRule rule, const ParallelLayout& l) {
  switch (rule) {
    case ShardRule::kReplicated:
      return 1;
    case ShardRule::kAttentionTp:
    case ShardRule::kEmbedding:
      return l.attn_tp;
    case ShardRule::kDenseTp:
      return l.dense_tp;
    case ShardRule::kSharedExpertTp:
      return l.shared_tp;
    case ShardRule::kRoutedExpert:
      return l.moe_tp;
    case ShardRule::kLmHead:
      return l.lm_head_dp ? l.attn_tp : l.gpus;
  }
  return 1;
}

struct PeakParts {
  int64_t attention_live = 0;
  int64_t moe_workspace = 0;
  int64_t moe_io = 0;
};

PeakParts ForwardPeakParts(const ModelSpec& spec, const ParallelLayout& l,
                           int64_t tokens, int64_t moe_chunk_tokens) {
  const int64_t h = spec.hidden_size();
  const MlaSpec& a = spec.mla();
  const int64_t heads = a.num_heads() / l.attn_tp;
  PeakParts p;
  // Live at the attention kernel (absorbed MQA path, the larger of the two):
  // residual + normed hidden, the latent-space query (kv_lora + rope per head)
  // and the latent-space output (kv_lora per head), all BF16.
  p.attention_live =
      tokens *
      (2 * h + heads * (2 * int64_t{a.kv_lora_rank()} + a.qk_rope_head_dim())) *
      kBf16Bytes;
  if (spec.num_layers() == spec.num_dense_layers()) return p;
  const MoeSpec& m = spec.moe();
  // Tokens entering the MoE on this GPU: gathered over DP ranks for AG/RS.
  const int64_t moe_tokens =
      l.moe_comm == ParallelLayout::MoeComm::kAllGatherReduceScatter
          ? tokens * l.attn_dp
          : tokens;
  const int64_t w = m.expert_intermediate_size() / l.moe_tp;
  // Modular fused-MoE workspaces (vLLM DeepGemmExperts / TritonExperts):
  // workspace13 (M*topk, max(2w, h)) and workspace2 (M*topk, max(w, h)) in
  // BF16, plus the permuted FP8 input with its 1x128 scales; sized for the
  // worst case where every routed pair lands on local experts.
  const int64_t pair_bytes = std::max(2 * w, h) * kBf16Bytes +
                             std::max(w, h) * kBf16Bytes + h +
                             CeilDiv(h, kActivationQuantGroup) * kFp32Bytes;
  p.moe_workspace = std::min(moe_tokens, moe_chunk_tokens) *
                    m.experts_per_token() * pair_bytes;
  // The gathered hidden states and the MoE output before the reduce-scatter.
  if (moe_tokens > tokens) p.moe_io = 2 * moe_tokens * h * kBf16Bytes;
  return p;
}

std::string Gib(int64_t bytes) {
  return absl::StrFormat("%.2f GiB", static_cast<double>(bytes) / kGiB);
}

// Weights load into the GPU's memory whatever fraction the engine is given
// for its pools: only a GPU too small for them fails here; a fraction too
// small for them fails later, with the engine's own message about its pool.
absl::Status CheckWeightsFit(const char* engine, int64_t weights, int64_t gpu_capacity) {
  if (weights < gpu_capacity) return absl::OkStatus();
  return absl::ResourceExhaustedError(
      absl::StrCat(engine, ": CUDA out of memory loading weights: ", Gib(weights),
                   " per GPU, the GPU has ", Gib(gpu_capacity)));
}

void FinishPool(KvBudget& b, int64_t bytes_per_token, int64_t block_tokens) {
  b.kv_pool_bytes = std::max<int64_t>(0, b.kv_pool_bytes);
  const int64_t block_bytes = bytes_per_token * block_tokens;
  b.kv_bytes_per_token = bytes_per_token;
  b.kv_capacity_tokens = b.kv_pool_bytes / block_bytes * block_tokens;
  b.terms.push_back({"kv_pool", b.kv_pool_bytes});
  b.terms.push_back({"kv_bytes_per_token", bytes_per_token});
  b.terms.push_back({"kv_capacity_tokens", b.kv_capacity_tokens});
}

}  // namespace

int64_t WeightBytesPerGpu(const ModelSpec& spec, const ParallelLayout& layout,
                          bool with_mtp) {
  int64_t total = 0;
  for (const WeightTensor& t : WeightInventory(spec)) {
    if ((t.mtp && !with_mtp) || t.shares_target_copy) continue;
    const int ways = ShardWays(t.shard, layout);
    const int64_t rows = t.shard_cols ? t.rows : CeilDiv(t.rows, ways);
    const int64_t cols = t.shard_cols ? CeilDiv(t.cols, ways) : t.cols;
    int64_t instances = t.instances;
    if (t.shard == ShardRule::kRoutedExpert) {
      instances = CeilDiv(t.instances, layout.moe_ep);
    }
    total += StoredBytes(spec, t, rows, cols) * instances;
  }
  return total;
}

int64_t ForwardPeakActivationBytes(const ModelSpec& spec,
                                   const ParallelLayout& layout,
                                   int64_t tokens_per_rank,
                                   int64_t moe_chunk_tokens) {
  const PeakParts p =
      ForwardPeakParts(spec, layout, tokens_per_rank, moe_chunk_tokens);
  return p.attention_live + p.moe_workspace + p.moe_io;
}

absl::StatusOr<KvBudget> VllmKvBudget(const ModelSpec& spec,
                                      const ParallelLayout& layout,
                                      const VllmMemoryConfig& c) {
  if (c.gpu_memory_utilization <= 0 || c.gpu_memory_utilization > 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("vllm: --gpu-memory-utilization: must be in (0, 1], got ",
                     c.gpu_memory_utilization));
  }
  if (c.max_model_len <= 0 || c.max_num_batched_tokens <= 0 ||
      c.max_num_seqs <= 0 || c.kv_block_tokens <= 0) {
    return absl::InvalidArgumentError(
        "vllm: max_model_len, max_num_batched_tokens, max_num_seqs and block "
        "size must be > 0");
  }
  KvBudget b;
  b.gpu_capacity_bytes = c.gpu_capacity_bytes;
  b.usable_bytes =
      static_cast<int64_t>(c.gpu_capacity_bytes * c.gpu_memory_utilization);
  b.weight_bytes = WeightBytesPerGpu(spec, layout, c.with_mtp);
  if (absl::Status s = CheckWeightsFit("vllm", b.weight_bytes, b.gpu_capacity_bytes); !s.ok()) {
    return s;
  }
  b.terms.push_back({"gpu_capacity", b.gpu_capacity_bytes});
  b.terms.push_back({"usable (x gpu_memory_utilization)", b.usable_bytes});
  b.terms.push_back({"weights", -b.weight_bytes});
  // Profile run: one dummy forward of max_num_batched_tokens tokens per rank.
  const PeakParts p = ForwardPeakParts(spec, layout, c.max_num_batched_tokens,
                                       c.fused_moe_chunk_tokens);
  b.terms.push_back({"profile_run.attention_live_set", -p.attention_live});
  b.terms.push_back({"profile_run.fused_moe_workspace", -p.moe_workspace});
  b.terms.push_back({"profile_run.moe_gathered_io", -p.moe_io});
  // Dummy sampler run: FP32 logits and probabilities for max_num_seqs rows.
  const int64_t sampler = c.max_num_seqs * spec.vocab_size() * kFp32Bytes * 2;
  b.terms.push_back({"profile_run.sampler_logits_probs", -sampler});
  b.terms.push_back({"non_torch (CUDA context, NCCL, workspaces) [U]",
                     -c.runtime_overhead_bytes});
  // Buffers vLLM sizes by max_model_len (model-and-kernels.md §4.1, vLLM
  // flashmla_sparse.get_prefill_workspace_size,
  // indexer.get_max_prefill_buffer_size).
  int64_t len_buffers = 0;
  if (spec.has_indexer()) {
    const int64_t latent =
        spec.mla().kv_lora_rank() + spec.mla().qk_rope_head_dim();
    const int64_t workspace = 5 * c.max_model_len * latent * kBf16Bytes;
    const int64_t indexer =
        40 * c.max_model_len * IndexerKeyBytesPerTokenPerLayer(spec);
    b.terms.push_back(
        {"flashmla_sparse_prefill_workspace (5*max_model_len*576*2)",
         -workspace});
    b.terms.push_back(
        {"indexer_prefill_buffer (40*max_model_len*132)", -indexer});
    len_buffers = workspace + indexer;
  }
  int64_t graphs = 0;
  if (c.cuda_graphs_in_budget) {
    graphs = ForwardPeakActivationBytes(spec, layout, c.cuda_graph_max_tokens,
                                        c.fused_moe_chunk_tokens);
    b.terms.push_back({"cuda_graph_pool", -graphs});
  }
  b.activation_reserve_bytes = p.attention_live + p.moe_workspace + p.moe_io +
                               sampler + c.runtime_overhead_bytes +
                               len_buffers + graphs;
  b.kv_pool_bytes =
      b.usable_bytes - b.weight_bytes - b.activation_reserve_bytes;
  if (b.kv_pool_bytes <= 0) {
    return absl::ResourceExhaustedError(
        "vllm: No available memory for the cache blocks. Try increasing "
        "`gpu_memory_utilization` when initializing the engine.");
  }
  FinishPool(b, KvBytesPerToken(spec, c.kv_dtype, c.with_mtp),
             c.kv_block_tokens);
  return b;
}

absl::Status VllmCheckMaxModelLen(const ModelSpec& spec,
                                  const VllmMemoryConfig& c,
                                  const KvBudget& budget) {
  const int64_t per_token = KvBytesPerToken(spec, c.kv_dtype, c.with_mtp);
  const int64_t needed = c.max_model_len * per_token;
  if (needed <= budget.kv_pool_bytes) return absl::OkStatus();
  const int64_t max_len = budget.kv_pool_bytes / per_token;
  // vllm/v1/core/kv_cache_utils.py check_enough_kv_cache_memory.
  return absl::ResourceExhaustedError(absl::StrFormat(
      "vllm: To serve at least one request with the models's max seq len (%d), "
      "(%.2f GiB KV cache is needed, which is larger than the available KV "
      "cache "
      "memory (%.2f GiB). Based on the available memory, the estimated maximum "
      "model "
      "length is %d. Try increasing `gpu_memory_utilization` or decreasing "
      "`max_model_len` when initializing the engine.",
      c.max_model_len, static_cast<double>(needed) / kGiB,
      static_cast<double>(budget.kv_pool_bytes) / kGiB, max_len));
}

double SglangMemFractionStatic(const ParallelLayout& layout,
                               const SglangMemoryConfig& c) {
  // The constants (MB) are SGLang's own, as server_args._handle_gpu_memory_settings
  // writes them (v0.5.6; engine-defaults.md §C2, quoted in the header).
  const double gpu_mb = static_cast<double>(c.gpu_capacity_bytes) / kMiB;
  const double bs = c.cuda_graph_max_bs;
  double reserved = 512 + std::max<double>(c.chunked_prefill_size, 2048) * 1.5 +
                    bs * 2 +
                    static_cast<double>(layout.gpus) * c.pp_size / 8 * 1024;
  if (layout.attn_dp > 1) {
    reserved += bs * layout.attn_dp * 3;
    if (bs > 300) reserved += bs * layout.attn_dp * 1.5;
  }
  if (gpu_mb > 60 * 1024) reserved = std::max(reserved, 10.0 * 1024);
  if (c.speculative) reserved += 2 * 1024;
  return std::round((gpu_mb - reserved) / gpu_mb * 1000) / 1000;
}

absl::StatusOr<KvBudget> SglangKvBudget(const ModelSpec& spec,
                                        const ParallelLayout& layout,
                                        const SglangMemoryConfig& c) {
  if (c.mem_fraction_static < 0 || c.mem_fraction_static > 1 ||
      c.page_tokens <= 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("sglang: --mem-fraction-static: must be in (0, 1], got ",
                     c.mem_fraction_static));
  }
  const double fraction = c.mem_fraction_static > 0
                              ? c.mem_fraction_static
                              : SglangMemFractionStatic(layout, c);
  if (!(fraction > 0)) {
    // The heuristic's reserve (chunked prefill, CUDA graphs, DP attention)
    // exceeds the GPU: SGLang's static pool would be negative.
    return absl::ResourceExhaustedError(absl::StrCat(
        "sglang: Not enough memory. Please try to increase --mem-fraction-static. (the "
        "memory heuristic gives mem_fraction_static ", fraction, " for cuda_graph_max_bs ",
        c.cuda_graph_max_bs, " and chunked_prefill_size ", c.chunked_prefill_size, ")"));
  }
  KvBudget b;
  b.gpu_capacity_bytes = c.gpu_capacity_bytes;
  b.usable_bytes = static_cast<int64_t>(c.gpu_capacity_bytes * fraction);
  // The target's pool is sized before the EAGLE/MTP draft worker loads: the
  // draft's weights and its one-layer cache (sized to the target's token
  // count, sharing its indices) come out of the memory the heuristic leaves
  // outside the static fraction, +2 GiB for it (model_runner.init_memory_pool,
  // draft_runner_cache_size [U: recalled, not read at v0.5.6.post2]).
  b.weight_bytes = WeightBytesPerGpu(spec, layout, /*with_mtp=*/false);
  if (absl::Status s = CheckWeightsFit("sglang", b.weight_bytes, b.gpu_capacity_bytes); !s.ok()) {
    return s;
  }
  b.terms.push_back({"gpu_capacity", b.gpu_capacity_bytes});
  b.terms.push_back({"mem_fraction_static x 1000",
                     static_cast<int64_t>(std::lround(fraction * 1000))});
  b.terms.push_back({"usable (x mem_fraction_static)", b.usable_bytes});
  b.terms.push_back({"weights", -b.weight_bytes});
  // SGLang measures free memory after loading weights, so the CUDA context and
  // NCCL buffers already taken come out of the static pool too.
  b.terms.push_back({"non_torch (CUDA context, NCCL, workspaces) [U]",
                     -c.runtime_overhead_bytes});
  b.activation_reserve_bytes = c.runtime_overhead_bytes;
  b.kv_pool_bytes =
      b.usable_bytes - b.weight_bytes - b.activation_reserve_bytes;
  if (b.kv_pool_bytes <= 0) {
    return absl::ResourceExhaustedError(
        "sglang: Not enough memory. Please try to increase "
        "--mem-fraction-static.");
  }
  FinishPool(b, KvBytesPerToken(spec, c.kv_dtype, /*with_mtp_layer=*/false), c.page_tokens);
  return b;
}

absl::StatusOr<KvBudget> TrtllmKvBudget(const ModelSpec& spec,
                                        const ParallelLayout& layout,
                                        const TrtllmMemoryConfig& c) {
  if (c.free_gpu_memory_fraction <= 0 || c.free_gpu_memory_fraction > 1 ||
      c.max_num_tokens <= 0 || c.tokens_per_block <= 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "trtllm: --kv_cache_free_gpu_memory_fraction: must be in (0, 1], got ",
        c.free_gpu_memory_fraction));
  }
  KvBudget b;
  b.gpu_capacity_bytes = c.gpu_capacity_bytes;
  b.weight_bytes = WeightBytesPerGpu(spec, layout, c.with_mtp);
  const PeakParts p =
      ForwardPeakParts(spec, layout, c.max_num_tokens, c.moe_chunk_tokens);
  const int64_t sampler = c.max_batch_size * spec.vocab_size() * kFp32Bytes;
  b.activation_reserve_bytes = p.attention_live + p.moe_workspace + p.moe_io +
                               sampler + c.runtime_overhead_bytes;
  const int64_t free_bytes =
      c.gpu_capacity_bytes - b.weight_bytes - b.activation_reserve_bytes;
  if (absl::Status s =
          CheckWeightsFit("trtllm", b.weight_bytes + b.activation_reserve_bytes,
                          c.gpu_capacity_bytes);
      !s.ok()) {
    return s;
  }
  b.usable_bytes = c.gpu_capacity_bytes;
  b.terms.push_back({"gpu_capacity", b.gpu_capacity_bytes});
  b.terms.push_back({"weights", -b.weight_bytes});
  b.terms.push_back({"forward_peak.attention_live_set", -p.attention_live});
  b.terms.push_back({"forward_peak.moe_workspace", -p.moe_workspace});
  b.terms.push_back({"forward_peak.moe_gathered_io", -p.moe_io});
  b.terms.push_back({"logits (max_batch_size x vocab fp32)", -sampler});
  b.terms.push_back({"non_torch (CUDA context, NCCL, workspaces) [U]",
                     -c.runtime_overhead_bytes});
  b.terms.push_back({"free_after_weights_and_buffers", free_bytes});
  b.kv_pool_bytes =
      static_cast<int64_t>(free_bytes * c.free_gpu_memory_fraction);
  b.terms.push_back(
      {"x free_gpu_memory_fraction", b.kv_pool_bytes - free_bytes});
  FinishPool(b, KvBytesPerToken(spec, c.kv_dtype, c.with_mtp),
             c.tokens_per_block);
  return b;
}

}  // namespace servesim::models
