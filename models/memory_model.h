// Per-GPU memory of a replica: weight bytes for a layout, and each engine's
// rule for the KV-cache pool that is left (with a named breakdown).
#ifndef SERVESIM_MODELS_MEMORY_MODEL_H_
#define SERVESIM_MODELS_MEMORY_MODEL_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "models/model_spec.h"
#include "models/parallel_layout.h"

namespace servesim::models {

inline constexpr int64_t kMiB = int64_t{1} << 20;
inline constexpr int64_t kGiB = int64_t{1} << 30;
// H200 memory as the engines see it: 143,771 MiB (nvidia-smi;
// model-and-kernels.md §2).
inline constexpr int64_t kH200CapacityBytes = int64_t{143771} * kMiB;

// Weight bytes one GPU holds (the GPU holding the most when shards are uneven:
// never the case for valid layouts). `with_mtp` adds the MTP modules.
int64_t WeightBytesPerGpu(const ModelSpec& spec, const ParallelLayout& layout,
                          bool with_mtp);

struct KvBudget {
  int64_t gpu_capacity_bytes = 0;
  int64_t usable_bytes = 0;  // what the engine's fraction lets it plan with
  int64_t weight_bytes = 0;
  int64_t activation_reserve_bytes =
      0;  // everything else taken before the KV pool
  int64_t kv_pool_bytes = 0;
  // What one token's KV takes in this pool: the MTP modules' layers add theirs
  // when the engine runs them.
  int64_t kv_bytes_per_token = 0;
  int64_t kv_capacity_tokens =
      0;  // tokens of one KV pool (one per attention-DP rank)
  // Named breakdown for `explain`, in the order the engine applies it; bytes
  // (negative for deductions) or, where the name says so, another unit.
  std::vector<std::pair<std::string, int64_t>> terms;
};

// Non-PyTorch memory every engine process holds on its GPU: the CUDA context
// (~0.5 GiB on Hopper with lazy module loading), NCCL communicator buffers for
// the TP/DP/EP/world groups (~0.25 GiB each at NCCL_BUFFSIZE 4 MiB x channels)
// and cuBLAS/custom-all-reduce workspaces. An estimate, not a measurement [U].
inline constexpr int64_t kDefaultRuntimeOverheadBytes = 3 * kGiB / 2;

struct VllmMemoryConfig {
  int64_t gpu_capacity_bytes = kH200CapacityBytes;
  double gpu_memory_utilization =
      0.9;  // fraction of TOTAL memory (vLLM default 0.9)
  int64_t max_num_batched_tokens =
      8192;  // per engine (per DP rank); H200 API-server default
  int64_t max_num_seqs = 1024;
  int64_t max_model_len =
      0;  // required (the model default is max_position_embeddings)
  int64_t kv_block_tokens = 64;  // forced to 64 for FlashMLA sparse
  KvCacheDtype kv_dtype = KvCacheDtype::kBf16;
  bool with_mtp =
      false;  // MTP speculative decoding: draft weights + draft-layer KV
  // VLLM_FUSED_MOE_CHUNK_SIZE: tokens per fused-MoE chunk, which sizes the MoE
  // workspaces of the profile run [U: 32768 read in older vllm/envs.py; other
  // versions use 65536 or 16384].
  int64_t fused_moe_chunk_tokens = 32768;
  int64_t runtime_overhead_bytes = kDefaultRuntimeOverheadBytes;
  int64_t cuda_graph_max_tokens = 512;  // largest captured decode batch
  // v0.13 captures CUDA graphs after the KV cache is allocated, so their pool
  // comes out of the (1 - utilization) headroom, not out of the budget [U].
  bool cuda_graphs_in_budget = false;
};

// vLLM: capacity x utilization - weights - profile-run activation peak -
// non-torch memory - max_model_len-sized buffers [- CUDA graphs] = KV pool.
// ResourceExhausted when weights or the pool do not fit.
absl::StatusOr<KvBudget> VllmKvBudget(const ModelSpec& spec,
                                      const ParallelLayout& layout,
                                      const VllmMemoryConfig& config);

// vLLM's start-up check that the pool holds one max_model_len sequence;
// ResourceExhausted with vLLM's message otherwise.
absl::Status VllmCheckMaxModelLen(const ModelSpec& spec,
                                  const VllmMemoryConfig& config,
                                  const KvBudget& budget);

struct SglangMemoryConfig {
  int64_t gpu_capacity_bytes = kH200CapacityBytes;
  double mem_fraction_static = 0;  // 0 = derive with SglangMemFractionStatic
  int64_t chunked_prefill_size =
      8192;  // BEFORE the per-DP-rank division (H200 default)
  int cuda_graph_max_bs = 512;  // H200 default for tp >= 4
  int pp_size = 1;
  bool speculative = false;  // EAGLE/MTP: +2 GiB reserve for the draft, outside the pool
  KvCacheDtype kv_dtype = KvCacheDtype::kBf16;
  int64_t page_tokens = 64;
  int64_t runtime_overhead_bytes = kDefaultRuntimeOverheadBytes;
};

// server_args._handle_gpu_memory_settings (engine-defaults.md §C2):
// reserved_mb = 512 + max(chunked_prefill, 2048)*1.5 + cuda_graph_max_bs*2 +
// tp*pp/8*1024 [+ DP attention: bs*dp*3 (+ bs*dp*1.5 if bs > 300)], at least
// 10240, + 2048 with speculative decoding; fraction = round((mem -
// reserved)/mem, 3).
double SglangMemFractionStatic(const ParallelLayout& layout,
                               const SglangMemoryConfig& config);

// SGLang: pool = capacity x mem_fraction_static - weights - runtime overhead,
// one pool per GPU (per DP rank under DP attention).
absl::StatusOr<KvBudget> SglangKvBudget(const ModelSpec& spec,
                                        const ParallelLayout& layout,
                                        const SglangMemoryConfig& config);

struct TrtllmMemoryConfig {
  int64_t gpu_capacity_bytes = kH200CapacityBytes;
  double free_gpu_memory_fraction =
      0.9;  // of the memory FREE after weights and buffers
  int64_t max_num_tokens = 8192;
  int64_t max_batch_size = 2048;
  KvCacheDtype kv_dtype = KvCacheDtype::kBf16;
  int64_t tokens_per_block = 32;
  bool with_mtp = false;
  int64_t runtime_overhead_bytes = kDefaultRuntimeOverheadBytes;
  int64_t moe_chunk_tokens =
      8192;  // TRT-LLM sizes MoE workspaces by max_num_tokens [U]
};

// TRT-LLM: (capacity - weights - forward peak - overhead) x
// free_gpu_memory_fraction.
absl::StatusOr<KvBudget> TrtllmKvBudget(const ModelSpec& spec,
                                        const ParallelLayout& layout,
                                        const TrtllmMemoryConfig& config);

// Peak activation bytes of one forward pass of `tokens_per_rank` tokens on a
// rank (the engines' profile run): the MLA live set per token, the fused-MoE
// workspaces sized for the worst case of tokens x top-k routed pairs (capped
// at `moe_chunk_tokens` tokens per chunk), and the gathered MoE input/output.
int64_t ForwardPeakActivationBytes(const ModelSpec& spec,
                                   const ParallelLayout& layout,
                                   int64_t tokens_per_rank,
                                   int64_t moe_chunk_tokens);

}  // namespace servesim::models

#endif  // SERVESIM_MODELS_MEMORY_MODEL_H_
