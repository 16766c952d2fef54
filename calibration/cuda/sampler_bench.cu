// vLLM v0.13's PyTorch-native top-p sampler, op for op, on the H200.
//
// vLLM v1 samples on the GPU outside the model's CUDA graph. With top-p set
// (DeepSeek-V3.2's generation_config.json asks for top_p 0.95, and vLLM
// applies it to requests that set none) and FlashInfer's sampler off (opt-in
// through VLLM_USE_FLASHINFER_SAMPLER=1 in this version [U]), the sampler is
// vllm/v1/sample/ops/topk_topp_sampler.py `forward_native` +
// `apply_top_k_top_p` + `random_sample`, i.e. these PyTorch ops on
// [rows, vocab] logits:
//   logits.to(float32); logits.div_(temperature)
//   logits_sort, logits_idx = logits.sort(dim=-1)        <- the costly one
//   probs_sort = logits_sort.softmax(-1); torch.cumsum(probs_sort, -1, out=probs_sort)
//   mask = probs_sort <= 1 - p; mask[:, -1] = False; logits_sort.masked_fill_(mask, -inf)
//   logits = logits.scatter(-1, logits_idx, logits_sort)
//   probs = logits.softmax(-1); q = empty_like(probs).exponential_(); probs.div_(q).argmax(-1)
// torch.sort along a last dimension this long runs CUB: a segmented radix
// sort (float keys, int64 indices) from 128 rows up, below that two
// device-wide radix sorts, by value and then stably by row
// (ATen/native/cuda/Sort.cu, `segmented_sort_pairs` and
// `segmented_sort_pairs_by_full_sort`) [U: read in PyTorch 2.x source, not
// pinned to the build vLLM v0.13 ships]. Every other op is one pass over the
// rows, written here with the bytes PyTorch's kernel moves.
#include <cub/cub.cuh>
#include <cuda_bf16.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <vector>

#include "calibration/cuda/block_argmax.cuh"
#include "calibration/cuda/kernels.h"
#include "calibration/cuda/suites.h"

namespace servesim::calibration::cuda {
namespace {

constexpr int kVocab = 129280;  // DeepSeek-V3 / V3.2
constexpr int kRowThreads = 1024;

__global__ void Bf16ToF32Kernel(const __nv_bfloat16* in, float* out, size_t n) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
    out[i] = __bfloat162float(in[i]);
}

__global__ void ScaleKernel(float* x, size_t n, float inv_t) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
    x[i] *= inv_t;
}

// torch.arange(vocab).expand(rows, vocab) made contiguous: the sort's input
// indices.
__global__ void IotaKernel(int64_t* idx, size_t n, int vocab) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
    idx[i] = static_cast<int64_t>(i % vocab);
}

__device__ float BlockReduce(float v, bool is_max, float* scratch) {
  for (int o = 16; o > 0; o /= 2) {
    const float w = __shfl_xor_sync(0xffffffffu, v, o);
    v = is_max ? fmaxf(v, w) : v + w;
  }
  __syncthreads();
  if (threadIdx.x % 32 == 0) scratch[threadIdx.x / 32] = v;
  __syncthreads();
  if (threadIdx.x < 32) {
    v = threadIdx.x < blockDim.x / 32 ? scratch[threadIdx.x] : (is_max ? -INFINITY : 0.f);
    for (int o = 16; o > 0; o /= 2) {
      const float w = __shfl_xor_sync(0xffffffffu, v, o);
      v = is_max ? fmaxf(v, w) : v + w;
    }
    if (threadIdx.x == 0) scratch[0] = v;
  }
  __syncthreads();
  return scratch[0];
}

// PyTorch's softmax over a long last dimension: one block per row, a max
// pass, a sum pass and a write pass.
__global__ void __launch_bounds__(kRowThreads) RowSoftmaxKernel(const float* in, float* out, int vocab) {
  __shared__ float scratch[32];
  const float* row = in + static_cast<size_t>(blockIdx.x) * vocab;
  float* orow = out + static_cast<size_t>(blockIdx.x) * vocab;
  float m = -INFINITY;
  for (int i = threadIdx.x; i < vocab; i += blockDim.x) m = fmaxf(m, row[i]);
  m = BlockReduce(m, true, scratch);
  float s = 0;
  for (int i = threadIdx.x; i < vocab; i += blockDim.x) s += __expf(row[i] - m);
  s = BlockReduce(s, false, scratch);
  const float inv = 1.f / s;
  for (int i = threadIdx.x; i < vocab; i += blockDim.x) orow[i] = __expf(row[i] - m) * inv;
}

// Inclusive scan of each row in place, one block per row, in tiles of
// kRowThreads elements.
__global__ void __launch_bounds__(kRowThreads) RowCumsumKernel(float* x, int vocab) {
  using Scan = cub::BlockScan<float, kRowThreads>;
  __shared__ typename Scan::TempStorage tmp;
  __shared__ float carry;
  if (threadIdx.x == 0) carry = 0;
  __syncthreads();
  float* row = x + static_cast<size_t>(blockIdx.x) * vocab;
  for (int base = 0; base < vocab; base += kRowThreads) {
    const int i = base + threadIdx.x;
    const float v = i < vocab ? row[i] : 0.f;
    float incl, total;
    Scan(tmp).InclusiveSum(v, incl, total);
    if (i < vocab) row[i] = incl + carry;
    __syncthreads();
    if (threadIdx.x == 0) carry += total;
    __syncthreads();
  }
}

__global__ void TopPMaskKernel(const float* cum, bool* mask, size_t n, int vocab, float one_minus_p) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
    mask[i] = (i % vocab != static_cast<size_t>(vocab - 1)) && cum[i] <= one_minus_p;
}

__global__ void MaskedFillKernel(float* x, const bool* mask, size_t n) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
    if (mask[i]) x[i] = -INFINITY;
}

// out[row, idx[row, j]] = src[row, j]
__global__ void ScatterKernel(const float* src, const int64_t* idx, float* out, size_t n, int vocab) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
    out[(i / vocab) * vocab + idx[i]] = src[i];
}

__global__ void ExponentialKernel(float* q, size_t n, uint64_t seed) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
    q[i] = -__logf(HashUniform(seed, i));
}

__global__ void DivKernel(float* p, const float* q, size_t n) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
    p[i] /= q[i];
}

__global__ void __launch_bounds__(kRowThreads) RowArgmaxKernel(const float* x, int vocab, int64_t* out) {
  const float* row = x + static_cast<size_t>(blockIdx.x) * vocab;
  float best = -INFINITY;
  int best_i = 0;
  for (int i = threadIdx.x; i < vocab; i += blockDim.x) {
    if (row[i] > best) {
      best = row[i];
      best_i = i;
    }
  }
  const int winner = BlockArgmax(best, best_i);
  if (threadIdx.x == 0) out[blockIdx.x] = winner;
}

// Row r's segment id of each flat index, for the second (by-row) sort.
__global__ void RowOfIndexKernel(const int64_t* flat, int32_t* row, size_t n, int vocab) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
    row[i] = static_cast<int32_t>(flat[i] / vocab);
}

// After the by-row sort: keys gathered by flat index, indices made
// row-relative.
__global__ void GatherKeysKernel(const float* keys, const int64_t* flat, float* keys_out, int64_t* idx_out, size_t n,
                                 int vocab) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
    keys_out[i] = keys[flat[i]];
    idx_out[i] = flat[i] % vocab;
  }
}

bool UseSegmentedSort(int rows) { return rows >= 128; }

size_t CubTempBytes(int rows, size_t n) {
  size_t a = 0, b = 0;
  if (UseSegmentedSort(rows)) {
    cub::DeviceSegmentedRadixSort::SortPairs(nullptr, a, (const float*)nullptr, (float*)nullptr,
                                             (const int64_t*)nullptr, (int64_t*)nullptr, static_cast<int64_t>(n), rows,
                                             (const int*)nullptr, (const int*)nullptr);
  } else {
    cub::DeviceRadixSort::SortPairs(nullptr, a, (const float*)nullptr, (float*)nullptr, (const int64_t*)nullptr,
                                    (int64_t*)nullptr, static_cast<int64_t>(n));
    cub::DeviceRadixSort::SortPairs(nullptr, b, (const int32_t*)nullptr, (int32_t*)nullptr,
                                    (const int64_t*)nullptr, (int64_t*)nullptr, static_cast<int64_t>(n));
  }
  return std::max(a, b);
}

// The sampler's buffers laid out from `base` (null: sizes only); `bytes`
// gets their total. One layout serves TopPSamplerBytes and LayOutTopPSampler.
TopPSampler LayOut(char* base, int rows, size_t* bytes) {
  TopPSampler b;
  b.rows = rows;
  b.n = size_t(rows) * kVocab;
  size_t used = 0;
  auto take = [&](size_t size) {
    char* p = base ? base + used : nullptr;
    used += (size + 255) & ~size_t{255};
    return p;
  };
  b.logits = reinterpret_cast<float*>(take(b.n * 4));
  b.sorted = reinterpret_cast<float*>(take(b.n * 4));
  b.probs = reinterpret_cast<float*>(take(b.n * 4));
  b.q = reinterpret_cast<float*>(take(b.n * 4));
  b.idx_in = reinterpret_cast<int64_t*>(take(b.n * 8));
  b.idx_sorted = reinterpret_cast<int64_t*>(take(b.n * 8));
  if (!UseSegmentedSort(rows)) {
    b.flat_a = reinterpret_cast<int64_t*>(take(b.n * 8));
    b.flat_b = reinterpret_cast<int64_t*>(take(b.n * 8));
    b.row_a = reinterpret_cast<int32_t*>(take(b.n * 4));
    b.row_b = reinterpret_cast<int32_t*>(take(b.n * 4));
  }
  b.offsets = reinterpret_cast<int*>(take(size_t(rows + 1) * 4));
  b.mask = reinterpret_cast<bool*>(take(b.n));
  b.out = reinterpret_cast<int64_t*>(take(size_t(rows) * 8));
  b.cub_temp_bytes = CubTempBytes(rows, b.n);
  b.cub_temp = take(b.cub_temp_bytes);
  *bytes = used;
  return b;
}

TopPSampler AllocTopP(Arena& arena, int rows) {
  TopPSampler b = LayOutTopPSampler(arena.Alloc(TopPSamplerBytes(rows)), rows);
  InitTopPSampler(b);
  return b;
}

// `logits.sort(dim=-1)` as PyTorch runs it: keys `in` -> b.sorted, indices
// -> b.idx_sorted.
void EnqueueSort(const TopPSampler& b, const float* in, cudaStream_t s) {
  const size_t n = b.n;
  if (UseSegmentedSort(b.rows)) {
    IotaKernel<<<Grid(n, 256), 256, 0, s>>>(b.idx_in, n, kVocab);
    size_t bytes = b.cub_temp_bytes;
    CUDA_CHECK(cub::DeviceSegmentedRadixSort::SortPairs(b.cub_temp, bytes, in, b.sorted, b.idx_in, b.idx_sorted,
                                                        static_cast<int64_t>(n), b.rows, b.offsets, b.offsets + 1,
                                                        0, 32, s));
    return;
  }
  // Fewer rows: sort every element by value with its flat index, then
  // stably by row, and gather the keys back.
  IotaKernel<<<Grid(n, 256), 256, 0, s>>>(b.idx_in, n, static_cast<int>(std::min<size_t>(n, INT32_MAX)));
  size_t bytes = b.cub_temp_bytes;
  CUDA_CHECK(cub::DeviceRadixSort::SortPairs(b.cub_temp, bytes, in, b.sorted, b.idx_in, b.flat_a,
                                             static_cast<int64_t>(n), 0, 32, s));
  RowOfIndexKernel<<<Grid(n, 256), 256, 0, s>>>(b.flat_a, b.row_a, n, kVocab);
  int row_bits = 1;
  while ((1 << row_bits) < b.rows) ++row_bits;
  bytes = b.cub_temp_bytes;
  CUDA_CHECK(cub::DeviceRadixSort::SortPairs(b.cub_temp, bytes, b.row_a, b.row_b, b.flat_a, b.flat_b,
                                             static_cast<int64_t>(n), 0, row_bits, s));
  GatherKeysKernel<<<Grid(n, 256), 256, 0, s>>>(in, b.flat_b, b.sorted, b.idx_sorted, n, kVocab);
}

// CPU reference on a few rows: the sort is ascending with matching indices,
// and every sampled token lies in its row's nucleus (the smallest set of
// largest probabilities whose sum reaches top_p).
bool CheckTopP(Context& ctx, int rows) {
  ctx.arena->Reset();
  TopPSampler b = AllocTopP(*ctx.arena, rows);
  auto* in = static_cast<__nv_bfloat16*>(ctx.arena->Alloc(b.n * 2));
  FillBf16(in, b.n, 1501, 4.0f, ctx.stream);
  const float top_p = 0.95f;
  EnqueueTopPSampling(b, in, top_p, 7, ctx.stream);
  CUDA_CHECK(cudaStreamSynchronize(ctx.stream));
  std::vector<__nv_bfloat16> h_in(b.n);
  std::vector<float> h_sorted(b.n);
  std::vector<int64_t> h_idx(b.n), h_out(rows);
  CUDA_CHECK(cudaMemcpy(h_in.data(), in, b.n * 2, cudaMemcpyDeviceToHost));
  CUDA_CHECK(cudaMemcpy(h_idx.data(), b.idx_sorted, b.n * 8, cudaMemcpyDeviceToHost));
  CUDA_CHECK(cudaMemcpy(h_out.data(), b.out, rows * 8, cudaMemcpyDeviceToHost));
  bool ok = true;
  for (int r = 0; r < rows && ok; ++r) {
    std::vector<float> row(kVocab);
    for (int i = 0; i < kVocab; ++i) row[i] = __bfloat162float(h_in[size_t(r) * kVocab + i]);
    // Ascending by value through the returned indices.
    for (int i = 1; i < kVocab && ok; ++i)
      ok = row[h_idx[size_t(r) * kVocab + i - 1]] <= row[h_idx[size_t(r) * kVocab + i]];
    // Nucleus: walk from the largest probability down.
    const float m = *std::max_element(row.begin(), row.end());
    double z = 0;
    for (float v : row) z += std::exp(double(v) - m);
    const float picked = row[h_out[r]];
    double mass_above = 0;
    for (float v : row)
      if (v > picked) mass_above += std::exp(double(v) - m) / z;
    ok = ok && mass_above < top_p + 1e-3;
  }
  std::printf("check sampling_top_p (%d rows): %s\n", rows, ok ? "ok" : "FAILED");
  ctx.arena->Reset();
  return ok;
}

}  // namespace

void RunSamplerSuite(Context& ctx) {
  if (!CheckTopP(ctx, 3)) ++ctx.failures;
  if (!CheckTopP(ctx, 130)) ++ctx.failures;
  const int t = ctx.rec->Table(
      "sampling_top_p", {{"vocab", kVocab}}, "sequences",
      "vLLM v0.13 PyTorch-native top-p sampler op for op (bf16->fp32, /T, sort by CUB: segmented radix sort from "
      "128 rows, two full radix sorts below, softmax, cumsum, mask, masked_fill, scatter, softmax, exponential, div, "
      "argmax); top_p 0.95");
  for (int64_t rows : {1, 8, 32, 64, 127, 128, 256, 512, 1024}) {
    if (ctx.cfg.quick && rows != 64 && rows != 256) continue;
    ctx.arena->Reset();
    TopPSampler b = AllocTopP(*ctx.arena, static_cast<int>(rows));
    const int sets = RotatingSets(b.n * 2, ctx.cfg, 8);
    auto* in = static_cast<__nv_bfloat16*>(ctx.arena->Alloc(b.n * 2 * sets));
    FillBf16(in, b.n * sets, 1502, 4.0f, ctx.stream);
    Stats st = TimeLaunches(
        ctx.stream, [&](int it) { EnqueueTopPSampling(b, in + (it % sets) * b.n, 0.95f, 99 + it, ctx.stream); },
        ctx.cfg);
    // Useful bytes: what the passes other than the sort read and write
    // (about 90 B per logit) plus the sort's keys and indices in and out.
    ctx.rec->Add(t, static_cast<double>(rows), st, 0, 114.0 * b.n);
  }
  ctx.arena->Reset();
}

// Exported launch functions (kernels.h).
size_t TopPSamplerBytes(int rows) {
  size_t bytes = 0;
  LayOut(nullptr, rows, &bytes);
  return bytes;
}

TopPSampler LayOutTopPSampler(void* mem, int rows) {
  size_t bytes = 0;
  return LayOut(static_cast<char*>(mem), rows, &bytes);
}

void InitTopPSampler(const TopPSampler& b) {
  std::vector<int> off(b.rows + 1);
  for (int r = 0; r <= b.rows; ++r) off[r] = r * kVocab;
  CUDA_CHECK(cudaMemcpy(b.offsets, off.data(), off.size() * 4, cudaMemcpyHostToDevice));
}

// The whole sampler on bf16 logits `in_bf16` (the LM head's output).
void EnqueueTopPSampling(const TopPSampler& b, const __nv_bfloat16* in_bf16, float top_p, uint64_t seed,
                         cudaStream_t s) {
  const size_t n = b.n;
  const unsigned rows = static_cast<unsigned>(b.rows);
  Bf16ToF32Kernel<<<Grid(n, 256), 256, 0, s>>>(in_bf16, b.logits, n);
  ScaleKernel<<<Grid(n, 256), 256, 0, s>>>(b.logits, n, 1.0f);
  EnqueueSort(b, b.logits, s);
  RowSoftmaxKernel<<<rows, kRowThreads, 0, s>>>(b.sorted, b.probs, kVocab);
  RowCumsumKernel<<<rows, kRowThreads, 0, s>>>(b.probs, kVocab);
  TopPMaskKernel<<<Grid(n, 256), 256, 0, s>>>(b.probs, b.mask, n, kVocab, 1.f - top_p);
  MaskedFillKernel<<<Grid(n, 256), 256, 0, s>>>(b.sorted, b.mask, n);
  ScatterKernel<<<Grid(n, 256), 256, 0, s>>>(b.sorted, b.idx_sorted, b.logits, n, kVocab);
  RowSoftmaxKernel<<<rows, kRowThreads, 0, s>>>(b.logits, b.probs, kVocab);
  ExponentialKernel<<<Grid(n, 256), 256, 0, s>>>(b.q, n, seed);
  DivKernel<<<Grid(n, 256), 256, 0, s>>>(b.probs, b.q, n);
  RowArgmaxKernel<<<rows, kRowThreads, 0, s>>>(b.probs, kVocab, b.out);
  LAUNCH_CHECK();
}

}  // namespace servesim::calibration::cuda
