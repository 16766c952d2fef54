// The calibration's launch functions, exported so that other programs (the
// iteration check, iteration_bench.cu) enqueue exactly the kernels the
// benchmark suites time. Each is a thin wrapper over the suite's own launch.
#ifndef SERVESIM_CALIBRATION_CUDA_KERNELS_H_
#define SERVESIM_CALIBRATION_CUDA_KERNELS_H_

#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <string>

#include "calibration/cuda/suites.h"

namespace servesim::calibration::cuda {

// A cuBLASLt matmul D[m,n] = X[m,k] W[n,k]^T (strided-batched when batch > 1),
// FP8 e4m3 in / BF16 out (scaling mode: the first of block, vec128, per-tensor
// that cuBLASLt accepts, as TimeGemm picks it) or BF16 in / BF16 out.
struct GemmPlanHandle;
// Builds the plan and runs it once on the given pointers (not capturable: it
// synchronizes). Returns nullptr when no mode has an algorithm; `mode` names
// the mode used.
GemmPlanHandle* CreateGemmPlan(Context& ctx, bool fp8, int64_t m, int64_t n, int64_t k, int batch,
                               const float* w_scale, const float* x_scale, const void* W, const void* X, void* D,
                               std::string* mode);
void EnqueueGemm(Context& ctx, const GemmPlanHandle* plan, const void* W, const void* X, void* D);
void DestroyGemmPlan(GemmPlanHandle* plan);

// Sparse MLA (attention_bench.cu): nq queries x heads over `topk` gathered
// rows each of a BF16 (1152 B) or FP8 (656 B) latent cache.
int SparseMlaSplits(int heads, int nq, int topk);
void EnqueueSparseMla(bool kv_fp8, const __nv_bfloat16* q, const void* cache, const int32_t* idx, int nq, int heads,
                      int topk, int splits, __nv_bfloat16* out, float* part_o, float* part_ml, cudaStream_t s);
// Causal dense MHA prefill (d_qk 192, d_v 128).
void EnqueueDenseMha(const __nv_bfloat16* q, const __nv_bfloat16* k, const __nv_bfloat16* v, __nv_bfloat16* out,
                     int batch, int seq, int heads, cudaStream_t s);
void FillMlaFp8Cache(void* cache, size_t entries, uint64_t seed, cudaStream_t s);
constexpr size_t kMlaBf16EntryBytes = 1152;
constexpr size_t kMlaFp8EntryBytes = 656;

// Indexer (indexer_bench.cu): scores of nq queries (64 heads x 128, FP8) over
// `ctx` keys each (decode: keys of query i at rows [i * ctx, +ctx); causal:
// one sequence, query i sees i + 1 + causal_offset keys).
void EnqueueIndexer(const uint8_t* q, const float* w, const uint8_t* keys, const float* kscale, float* scores, int nq,
                    int ctx, bool causal, int causal_offset, int score_stride, cudaStream_t s);
// Top-k indices of each of `rows` rows of `len` fp32 scores (rows contiguous;
// `len` a multiple of 4 and `scores` 16-byte aligned: the kernel reads float4).
void EnqueueTopK(const float* scores, int rows, int len, int k, int32_t* out, cudaStream_t s);
// vLLM's decode-indexer logits clean pass (DeepGEMM's clean_logits): row r of
// `rows` rows of `width` fp32 logits becomes -inf from entry context[r] on.
// A write-only pass; servesim_logits_clean_check times it against the copy
// that prices it.
void EnqueueCleanLogits(float* logits, const int32_t* context, int rows, int width, cudaStream_t s);

// Small ops (small_ops_bench.cu), launched as the suite launches them.
void EnqueueRmsNorm(const __nv_bfloat16* x, const __nv_bfloat16* w, __nv_bfloat16* y, int64_t tokens, int hidden,
                    cudaStream_t s);
void EnqueueSiluMul(const __nv_bfloat16* in, __nv_bfloat16* out, int64_t tokens, int width, cudaStream_t s);
// In place on `dim` rope dims of `rows` rows (row_stride elements apart).
void EnqueueRope(__nv_bfloat16* x, const int32_t* pos, int64_t rows, int heads, int dim, int row_stride,
                 cudaStream_t s);
void EnqueueRouterTopK(const float* logits, const float* bias, int tokens, int32_t* idx, float* wts, cudaStream_t s);
void EnqueueSampling(const float* logits, int rows, int vocab, float inv_t, uint64_t seed, int32_t* out,
                     cudaStream_t s);

// vLLM v0.13's PyTorch-native top-p sampler (sampler_bench.cu), op for op, on
// `rows` rows of BF16 logits over DeepSeek's 129,280-token vocabulary: the
// kernels the sampling_top_p table times, CUB sorts included. Its buffers:
struct TopPSampler {
  int rows = 0;
  size_t n = 0;                    // rows x vocabulary
  float* logits = nullptr;         // fp32 logits (also the scatter target)
  float* sorted = nullptr;         // logits_sort
  float* probs = nullptr;          // probs_sort / cumsum, then the final probs
  float* q = nullptr;              // exponential noise
  int64_t* idx_in = nullptr;       // arange
  int64_t* idx_sorted = nullptr;   // logits_idx
  int64_t* flat_a = nullptr;       // below 128 rows (two full sorts): flat indices
  int64_t* flat_b = nullptr;
  int32_t* row_a = nullptr;
  int32_t* row_b = nullptr;
  int* offsets = nullptr;          // rows + 1 segment offsets
  bool* mask = nullptr;
  int64_t* out = nullptr;          // the sampled token ids, one per row
  void* cub_temp = nullptr;        // the CUB sorts' temporary storage
  size_t cub_temp_bytes = 0;
};
// Device bytes a sampler of `rows` rows takes, its sort's temporary storage
// included (buffers 256-byte aligned).
size_t TopPSamplerBytes(int rows);
// Lays the buffers out in `mem` (TopPSamplerBytes(rows) bytes, 256-byte
// aligned). No device work; a null `mem` gives null buffers.
TopPSampler LayOutTopPSampler(void* mem, int rows);
// Writes the sort's segment offsets: once before the first enqueue
// (synchronous, so outside stream capture).
void InitTopPSampler(const TopPSampler& b);
// The whole sampler on `logits` [rows, vocabulary]; token ids into b.out. No
// allocation and no synchronization: capturable in a CUDA graph, as the
// sampler suite times it.
void EnqueueTopPSampling(const TopPSampler& b, const __nv_bfloat16* logits, float top_p, uint64_t seed,
                         cudaStream_t s);

}  // namespace servesim::calibration::cuda

#endif  // SERVESIM_CALIBRATION_CUDA_KERNELS_H_
