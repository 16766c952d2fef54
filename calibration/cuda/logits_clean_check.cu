// Checks the price servesim puts on vLLM's decode-indexer logits clean pass.
//
// vLLM v0.13 asks DeepGEMM's fp8_paged_mqa_logits for FP32 logits of shape
// [decode rows, max_model_len] with clean_logits=True, which writes -inf to
// every entry of a row from its context length on (DeepGEMM's
// smxx_clean_logits; docs/engines.md). servesim has no table for it: the op
// `indexer_logits_clean` is priced by the copy_d2d table at x = bytes
// written / 2, a copy moving the same traffic (docs/profile-tables.md). This
// program times a write-only fill of that shape against the copy that prices
// it, so the stand-in is checked against the pass it stands for.
//
//   servesim_logits_clean_check            prints one line per shape
#include <cuda_runtime.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <vector>

#include "calibration/cuda/harness.h"
#include "calibration/cuda/kernels.h"

namespace scc = servesim::calibration::cuda;

namespace {

// The clean pass as the iteration check runs it (indexer_bench.cu).
void Launch(float* logits, const int* context, int rows, int width, cudaStream_t s) {
  scc::EnqueueCleanLogits(logits, context, rows, width, s);
}

// Fills rows of `width` (an odd width leaves rows unaligned) whose contexts
// are given, then checks every entry: -inf from the row's context on (none
// where the context is at or past the width), 1.0 before it.
bool CheckFill(int width, const std::vector<int>& context, cudaStream_t s) {
  const int rows = static_cast<int>(context.size());
  const size_t n = static_cast<size_t>(rows) * width;
  float* logits = nullptr;
  int* ctx = nullptr;
  CUDA_CHECK(cudaMalloc(&logits, sizeof(float) * n));
  CUDA_CHECK(cudaMalloc(&ctx, sizeof(int) * rows));
  std::vector<float> host(n, 1.0f);
  CUDA_CHECK(cudaMemcpy(logits, host.data(), sizeof(float) * n, cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaMemcpy(ctx, context.data(), sizeof(int) * rows, cudaMemcpyHostToDevice));
  Launch(logits, ctx, rows, width, s);
  CUDA_CHECK(cudaStreamSynchronize(s));
  CUDA_CHECK(cudaMemcpy(host.data(), logits, sizeof(float) * n, cudaMemcpyDeviceToHost));
  size_t wrong = 0;
  for (int r = 0; r < rows; ++r) {
    for (int c = 0; c < width; ++c) {
      const float v = host[static_cast<size_t>(r) * width + c];
      const bool want_inf = c >= context[r];
      if (want_inf ? !(std::isinf(v) && v < 0) : v != 1.0f) ++wrong;
    }
  }
  CUDA_CHECK(cudaFree(logits));
  CUDA_CHECK(cudaFree(ctx));
  std::printf("check clean fill (%d rows x %d): %zu wrong entries %s\n", rows, width, wrong,
              wrong ? "FAIL" : "ok");
  return wrong == 0;
}

// Small rows (one block, a few threads) and a large batch that runs every
// block and several grid-stride passes, contexts from 0 to past the width.
bool CheckFills(cudaStream_t s) {
  std::vector<int> large(1000);
  uint64_t x = 42;
  for (int& c : large) {
    x = x * 6364136223846793005ULL + 1442695040888963407ULL;
    c = static_cast<int>((x >> 33) % 82000);  // some >= the width 81921
  }
  large[0] = 0;
  large[1] = 81921;
  return CheckFill(37, {0, 5, 37}, s) && CheckFill(81921, large, s);
}

}  // namespace

int main() {
  cudaStream_t s;
  CUDA_CHECK(cudaStreamCreate(&s));
  cudaDeviceProp prop;
  CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
  std::printf("device: %s\n", prop.name);
  if (!CheckFills(s)) return 1;

  scc::RunConfig cfg;
  struct Shape {
    int rows, width, context;
  };
  // Decode batches of vLLM TP8 (up to 1024 rows) and of a DP8 rank (125),
  // at the default 163,840, the DP8 run's 81,920 and a 32k context.
  const std::vector<Shape> shapes = {{125, 81920, 400},   {125, 163840, 400}, {512, 163840, 500},
                                     {1000, 32768, 500},  {1000, 163840, 500}};
  std::printf("%6s %7s %7s %12s %10s %14s %12s %8s\n", "rows", "width", "context", "written_MB",
              "fill_us", "fill_GBps", "copy_half_us", "ratio");
  for (const Shape& sh : shapes) {
    const size_t elems = static_cast<size_t>(sh.rows) * sh.width;
    const size_t written = static_cast<size_t>(sh.rows) * (sh.width - sh.context) * sizeof(float);
    float* logits = nullptr;
    int* ctx = nullptr;
    char *src = nullptr, *dst = nullptr;
    CUDA_CHECK(cudaMalloc(&logits, sizeof(float) * elems));
    CUDA_CHECK(cudaMalloc(&ctx, sizeof(int) * sh.rows));
    const std::vector<int> contexts(sh.rows, sh.context);
    CUDA_CHECK(cudaMemcpy(ctx, contexts.data(), sizeof(int) * sh.rows, cudaMemcpyHostToDevice));
    // One buffer, rewritten by every launch: a write-only pass gains little
    // from L2 (rotating 8 buffers moved the 41 MB shape by 3 %, in review).
    const scc::Stats fill =
        scc::TimeLaunches(s, [&](int) { Launch(logits, ctx, sh.rows, sh.width, s); }, cfg);
    // The stand-in: copy_d2d at x = written / 2 (read + written = the fill's traffic).
    const size_t half = written / 2;
    CUDA_CHECK(cudaMalloc(&src, half));
    CUDA_CHECK(cudaMalloc(&dst, half));
    CUDA_CHECK(cudaMemset(src, 0, half));
    const scc::Stats copy = scc::TimeLaunches(
        s, [&](int) { CUDA_CHECK(cudaMemcpyAsync(dst, src, half, cudaMemcpyDeviceToDevice, s)); }, cfg);
    std::printf("%6d %7d %7d %12.1f %10.1f %14.1f %12.1f %8.3f\n", sh.rows, sh.width, sh.context,
                written / 1e6, fill.median_us, written / (fill.median_us * 1e-6) / 1e9, copy.median_us,
                fill.median_us / copy.median_us);
    CUDA_CHECK(cudaFree(logits));
    CUDA_CHECK(cudaFree(ctx));
    CUDA_CHECK(cudaFree(src));
    CUDA_CHECK(cudaFree(dst));
  }
  CUDA_CHECK(cudaStreamDestroy(s));
  return 0;
}
