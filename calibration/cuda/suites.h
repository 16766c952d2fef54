// The measurement suites of servesim_calibrate, one per source file. Each
// checks its kernels against a CPU reference first (printing the relative
// error), then times them into the recorder's tables.
#ifndef SERVESIM_CALIBRATION_CUDA_SUITES_H_
#define SERVESIM_CALIBRATION_CUDA_SUITES_H_

#include <cublasLt.h>
#include <cuda_runtime.h>

#include "calibration/cuda/harness.h"

namespace servesim::calibration::cuda {

// What every suite gets: the stream, a cuBLASLt handle with its workspace,
// the data arena, the run settings and the recorder.
struct Context {
  cudaStream_t stream = nullptr;
  cublasLtHandle_t lt = nullptr;
  void* workspace = nullptr;
  size_t workspace_bytes = 0;
  Arena* arena = nullptr;
  RunConfig cfg;
  Recorder* rec = nullptr;
  int failures = 0;  // correctness checks that failed
};

// copy_d2d table and the copy ceiling (GB/s, bytes read + written).
double RunCopySuite(Context& ctx);
// BF16 and FP8 8192^3 ceilings (TFLOP/s).
void RunGemmCeilings(Context& ctx, double* bf16_tflops, double* fp8_tflops);
// gemm_fp8, gemm_bf16, batched_gemm_bf16 tables.
void RunGemmSuite(Context& ctx);
// grouped_gemm_fp8 tables.
void RunGroupedGemmSuite(Context& ctx);
// sparse_mla_decode, sparse_mla_prefill, dense_mha_prefill.
void RunAttentionSuite(Context& ctx);
// indexer_decode, indexer_prefill, topk.
void RunIndexerSuite(Context& ctx);
// rmsnorm, rope, silu_mul, router_topk, sampling.
void RunSmallOpsSuite(Context& ctx);
// sampling_top_p: vLLM's PyTorch-native top-p sampler.
void RunSamplerSuite(Context& ctx);
// NCCL collectives (skipped with a message on one GPU or without NCCL).
void RunCollectivesSuite(Context& ctx);

}  // namespace servesim::calibration::cuda

#endif  // SERVESIM_CALIBRATION_CUDA_SUITES_H_
