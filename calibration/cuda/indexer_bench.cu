// The lightning indexer of DeepSeek-V3.2 (64 heads x 128, FP8 q and keys with
// one fp32 scale per key, score = scale_k * sum_h w_h ReLU(q_h . k)) for
// decode and causal prefill, and the top-k selection over its scores.
#include <cuda_bf16.h>
#include <cuda_fp8.h>
#include <mma.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "calibration/cuda/fp8_convert.cuh"
#include "calibration/cuda/kernels.h"
#include "calibration/cuda/suites.h"

namespace servesim::calibration::cuda {
namespace {

constexpr int kHeads = 64, kDim = 128, kKeyTile = 64, kTilesPerBlock = 4, kThreads = 256;
constexpr int kLd = kDim + 8;   // bf16 smem rows
constexpr int kLs = kKeyTile + 4;

// Block (key chunk, query). Keys of query qi are rows [key_base(qi), +n_keys)
// of the key cache. Decode: key_base = qi * ctx, n_keys = ctx. Causal prefill
// (one sequence): key_base = 0, n_keys = qi + 1 + causal_offset.
// FP8 is widened to BF16 in shared memory and multiplied on BF16 tensor cores.
__global__ void __launch_bounds__(kThreads) IndexerKernel(const uint8_t* q, const float* w, const uint8_t* keys,
                                                          const float* kscale, float* scores, int ctx,
                                                          int causal, int causal_offset, int score_stride) {
  using namespace nvcuda;
  // 52.5 KB: over the 48 KB static limit, so dynamic (raised in RunIndexer).
  extern __shared__ __align__(128) unsigned char smem[];
  __nv_bfloat16* sQ = reinterpret_cast<__nv_bfloat16*>(smem);
  __nv_bfloat16* sK = sQ + kHeads * kLd;
  float* sS = reinterpret_cast<float*>(sK + kKeyTile * kLd);
  float* sW = sS + kHeads * kLs;
  const int qi = blockIdx.y, tid = threadIdx.x, warp = tid / 32;
  const size_t key_base = causal ? 0 : static_cast<size_t>(qi) * ctx;
  const int n_keys = causal ? min(ctx, qi + 1 + causal_offset) : ctx;
  const int chunk0 = blockIdx.x * kKeyTile * kTilesPerBlock;
  if (chunk0 >= n_keys) return;
  for (int i = tid; i < kHeads * kDim / 16; i += kThreads) {
    const int h = i / (kDim / 16), c = i % (kDim / 16);
    const uint4 raw = reinterpret_cast<const uint4*>(q + (static_cast<size_t>(qi) * kHeads + h) * kDim)[c];
    Fp8x16ToBf16(raw, sQ + h * kLd + 16 * c, 1.0f);
  }
  if (tid < kHeads) sW[tid] = w[static_cast<size_t>(qi) * kHeads + tid];
  for (int tile = 0; tile < kTilesPerBlock; ++tile) {
    const int key0 = chunk0 + tile * kKeyTile;
    if (key0 >= n_keys) break;
    const int count = min(kKeyTile, n_keys - key0);
    __syncthreads();
    for (int i = tid; i < kKeyTile * kDim / 16; i += kThreads) {
      const int r = i / (kDim / 16), c = i % (kDim / 16);
      if (r < count) {
        const uint4 raw = reinterpret_cast<const uint4*>(keys + (key_base + key0 + r) * kDim)[c];
        Fp8x16ToBf16(raw, sK + r * kLd + 16 * c, 1.0f);
      } else {
        reinterpret_cast<uint4*>(sK + r * kLd + 16 * c)[0] = make_uint4(0, 0, 0, 0);
        reinterpret_cast<uint4*>(sK + r * kLd + 16 * c)[1] = make_uint4(0, 0, 0, 0);
      }
    }
    __syncthreads();
    for (int f = warp; f < (kHeads / 16) * (kKeyTile / 16); f += kThreads / 32) {
      const int rt = f / (kKeyTile / 16), ct = f % (kKeyTile / 16);
      wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc;
      wmma::fill_fragment(acc, 0.f);
#pragma unroll
      for (int kk = 0; kk < kDim; kk += 16) {
        wmma::fragment<wmma::matrix_a, 16, 16, 16, __nv_bfloat16, wmma::row_major> a;
        wmma::fragment<wmma::matrix_b, 16, 16, 16, __nv_bfloat16, wmma::col_major> b;
        wmma::load_matrix_sync(a, sQ + rt * 16 * kLd + kk, kLd);
        wmma::load_matrix_sync(b, sK + ct * 16 * kLd + kk, kLd);
        wmma::mma_sync(acc, a, b, acc);
      }
      wmma::store_matrix_sync(sS + rt * 16 * kLs + ct * 16, acc, kLs, wmma::mem_row_major);
    }
    __syncthreads();
    // 4 threads per key, 16 heads each.
    const int key = tid / 4, part = tid % 4;
    float sum = 0.f;
#pragma unroll
    for (int h = part * 16; h < part * 16 + 16; ++h) sum += sW[h] * fmaxf(sS[h * kLs + key], 0.f);
    sum += __shfl_xor_sync(0xffffffffu, sum, 1);
    sum += __shfl_xor_sync(0xffffffffu, sum, 2);
    if (part == 0 && key < count) {
      scores[static_cast<size_t>(qi) * score_stride + key0 + key] = sum * kscale[key_base + key0 + key];
    }
  }
}

// Order-preserving map of a float to an unsigned key (larger float, larger key).
__device__ __forceinline__ uint32_t FloatKey(float f) {
  const uint32_t u = __float_as_uint(f);
  return (u & 0x80000000u) ? ~u : (u | 0x80000000u);
}

// One block per row: radix select of the k largest (4 passes of 8 bits over
// the row), then one pass writing their indices (unordered, as the sparse
// attention needs no order).
__global__ void __launch_bounds__(1024) TopKKernel(const float* scores, int len, int k, int32_t* out) {
  __shared__ uint32_t hist[256];
  __shared__ uint32_t s_prefix, s_remaining;
  __shared__ int s_gt, s_eq;
  const float* row = scores + static_cast<size_t>(blockIdx.x) * len;
  int32_t* dst = out + static_cast<size_t>(blockIdx.x) * k;
  if (len <= k) {
    for (int i = threadIdx.x; i < k; i += blockDim.x) dst[i] = i < len ? i : -1;
    return;
  }
  uint32_t prefix = 0, mask = 0, remaining = k;
  for (int shift = 24; shift >= 0; shift -= 8) {
    for (int i = threadIdx.x; i < 256; i += blockDim.x) hist[i] = 0;
    __syncthreads();
    for (int i = threadIdx.x * 4; i < len; i += blockDim.x * 4) {
      const float4 v = *reinterpret_cast<const float4*>(row + i);
      const float vals[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
      for (int j = 0; j < 4; ++j) {
        const uint32_t u = FloatKey(vals[j]);
        if ((u & mask) == prefix) atomicAdd(&hist[(u >> shift) & 255u], 1u);
      }
    }
    __syncthreads();
    if (threadIdx.x == 0) {
      uint32_t above = 0;
      int bin = 255;
      for (; bin > 0; --bin) {
        if (above + hist[bin] >= remaining) break;
        above += hist[bin];
      }
      s_prefix = prefix | (static_cast<uint32_t>(bin) << shift);
      s_remaining = remaining - above;
    }
    __syncthreads();
    prefix = s_prefix;
    remaining = s_remaining;
    mask |= 255u << shift;
  }
  if (threadIdx.x == 0) {
    s_gt = 0;
    s_eq = 0;
  }
  __syncthreads();
  const int n_gt = k - static_cast<int>(remaining);
  for (int i = threadIdx.x; i < len; i += blockDim.x) {
    const uint32_t u = FloatKey(row[i]);
    if (u > prefix) {
      dst[atomicAdd(&s_gt, 1)] = i;
    } else if (u == prefix) {
      const int e = atomicAdd(&s_eq, 1);
      if (e < static_cast<int>(remaining)) dst[n_gt + e] = i;
    }
  }
}

// vLLM's decode-indexer logits clean pass: row blockIdx.y's entries
// [context[row], width) become -inf, the rest is left alone. Scalar stores up
// to a 16-B boundary of the buffer, float4 stores after, scalar stores for
// the tail.
constexpr int kCleanColumnBlocks = 16;  // blocks per row: 125 rows still fill 132 SMs
constexpr int kCleanThreads = 256;

__global__ void CleanLogitsKernel(float* logits, const int32_t* context, int width) {
  const size_t row_start = static_cast<size_t>(blockIdx.y) * width;
  const size_t begin = row_start + min(context[blockIdx.y], width);
  const size_t end = row_start + width;
  const size_t aligned = min((begin + 3) / 4 * 4, end);
  const size_t vectors = (end - aligned) / 4;
  const float neg_inf = -INFINITY;
  const size_t tid = blockIdx.x * blockDim.x + threadIdx.x;
  const size_t stride = gridDim.x * blockDim.x;
  for (size_t c = begin + tid; c < aligned; c += stride) logits[c] = neg_inf;
  const float4 v = make_float4(neg_inf, neg_inf, neg_inf, neg_inf);
  float4* q = reinterpret_cast<float4*>(logits + aligned);  // cudaMalloc'd: 16-B aligned base
  for (size_t i = tid; i < vectors; i += stride) q[i] = v;
  for (size_t c = aligned + vectors * 4 + tid; c < end; c += stride) logits[c] = neg_inf;
}

void RunIndexer(const uint8_t* q, const float* w, const uint8_t* keys, const float* ks, float* scores, int nq,
                int ctx, bool causal, int causal_offset, int score_stride, cudaStream_t s) {
  constexpr size_t kSmem = size_t{2} * (kHeads + kKeyTile) * kLd + size_t{4} * (kHeads * kLs + kHeads);
  static bool configured = false;
  if (!configured) {
    CUDA_CHECK(cudaFuncSetAttribute(IndexerKernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(kSmem)));
    configured = true;
  }
  const int chunks = (ctx + kKeyTile * kTilesPerBlock - 1) / (kKeyTile * kTilesPerBlock);
  IndexerKernel<<<dim3(chunks, nq), kThreads, kSmem, s>>>(q, w, keys, ks, scores, ctx, causal ? 1 : 0, causal_offset,
                                                     score_stride);
  LAUNCH_CHECK();
}

void CheckIndexer(Context& ctx, bool causal) {
  const int nq = causal ? 200 : 3, c = causal ? 200 : 700;
  ctx.arena->Reset();
  const size_t n_keys_total = causal ? c : size_t(nq) * c;
  auto* q = static_cast<uint8_t*>(ctx.arena->Alloc(size_t(nq) * kHeads * kDim));
  auto* w = static_cast<float*>(ctx.arena->Alloc(4 * size_t(nq) * kHeads));
  auto* keys = static_cast<uint8_t*>(ctx.arena->Alloc(n_keys_total * kDim));
  auto* ks = static_cast<float*>(ctx.arena->Alloc(4 * n_keys_total));
  auto* sc = static_cast<float*>(ctx.arena->Alloc(4 * size_t(nq) * c));
  FillFp8(q, size_t(nq) * kHeads * kDim, 501, 1.0f, ctx.stream);
  FillF32(w, size_t(nq) * kHeads, 502, -1.0f, 1.0f, ctx.stream);
  FillFp8(keys, n_keys_total * kDim, 503, 1.0f, ctx.stream);
  FillF32(ks, n_keys_total, 504, 0.5f, 1.5f, ctx.stream);
  CUDA_CHECK(cudaMemsetAsync(sc, 0xff, 4 * size_t(nq) * c, ctx.stream));
  RunIndexer(q, w, keys, ks, sc, nq, c, causal, 0, c, ctx.stream);
  CUDA_CHECK(cudaStreamSynchronize(ctx.stream));
  std::vector<uint8_t> hq(size_t(nq) * kHeads * kDim), hk(n_keys_total * kDim);
  std::vector<float> hw(size_t(nq) * kHeads), hks(n_keys_total), hs(size_t(nq) * c);
  CUDA_CHECK(cudaMemcpy(hq.data(), q, hq.size(), cudaMemcpyDeviceToHost));
  CUDA_CHECK(cudaMemcpy(hk.data(), keys, hk.size(), cudaMemcpyDeviceToHost));
  CUDA_CHECK(cudaMemcpy(hw.data(), w, hw.size() * 4, cudaMemcpyDeviceToHost));
  CUDA_CHECK(cudaMemcpy(hks.data(), ks, hks.size() * 4, cudaMemcpyDeviceToHost));
  CUDA_CHECK(cudaMemcpy(hs.data(), sc, hs.size() * 4, cudaMemcpyDeviceToHost));
  auto f8 = [](uint8_t b) {
    __nv_fp8_e4m3 f;
    f.__x = b;
    return static_cast<double>(static_cast<float>(f));
  };
  std::vector<double> got, want;
  for (int qi = 0; qi < nq; ++qi) {
    const int n = causal ? qi + 1 : c;
    const size_t base = causal ? 0 : size_t(qi) * c;
    for (int j = 0; j < n; ++j) {
      double total = 0;
      for (int h = 0; h < kHeads; ++h) {
        double dot = 0;
        for (int d = 0; d < kDim; ++d) dot += f8(hq[(size_t(qi) * kHeads + h) * kDim + d]) * f8(hk[(base + j) * kDim + d]);
        total += hw[size_t(qi) * kHeads + h] * std::max(dot, 0.0);
      }
      want.push_back(total * hks[base + j]);
      got.push_back(hs[size_t(qi) * c + j]);
    }
  }
  const double err = RelError(got, want);
  const bool pass = err < 1e-3;  // FP8 values are exact in BF16; FP32 accumulation
  if (!pass) ++ctx.failures;
  std::printf("check indexer_%s: rel err %.3e %s\n", causal ? "prefill (causal)" : "decode", err,
              pass ? "ok" : "FAIL");
  ctx.arena->Reset();
}

void CheckTopK(Context& ctx) {
  const int rows = 3, len = 10000, k = 2048;
  ctx.arena->Reset();
  auto* sc = static_cast<float*>(ctx.arena->Alloc(4 * size_t(rows) * len));
  auto* idx = static_cast<int32_t*>(ctx.arena->Alloc(4 * size_t(rows) * k));
  FillF32(sc, size_t(rows) * len, 601, -3.0f, 3.0f, ctx.stream);
  CUDA_CHECK(cudaMemsetAsync(idx, 0xff, 4 * size_t(rows) * k, ctx.stream));
  TopKKernel<<<rows, 1024, 0, ctx.stream>>>(sc, len, k, idx);
  LAUNCH_CHECK();
  CUDA_CHECK(cudaStreamSynchronize(ctx.stream));
  std::vector<float> hs(size_t(rows) * len);
  std::vector<int32_t> hi(size_t(rows) * k);
  CUDA_CHECK(cudaMemcpy(hs.data(), sc, hs.size() * 4, cudaMemcpyDeviceToHost));
  CUDA_CHECK(cudaMemcpy(hi.data(), idx, hi.size() * 4, cudaMemcpyDeviceToHost));
  bool pass = true;
  for (int r = 0; r < rows; ++r) {
    std::vector<float> row(hs.begin() + size_t(r) * len, hs.begin() + size_t(r + 1) * len);
    std::vector<float> sorted = row;
    std::nth_element(sorted.begin(), sorted.begin() + (k - 1), sorted.end(), std::greater<float>());
    const float kth = sorted[k - 1];
    std::vector<char> seen(len, 0);
    double sel_sum = 0, want_sum = 0;
    for (int j = 0; j < k; ++j) {
      const int i = hi[size_t(r) * k + j];
      if (i < 0 || i >= len || seen[i]) {
        pass = false;
        break;
      }
      seen[i] = 1;
      if (row[i] < kth) pass = false;
      sel_sum += row[i];
    }
    std::sort(row.begin(), row.end(), std::greater<float>());
    for (int j = 0; j < k; ++j) want_sum += row[j];
    if (std::fabs(sel_sum - want_sum) > 1e-6 * std::fabs(want_sum) + 1e-3) pass = false;
  }
  if (!pass) ++ctx.failures;
  std::printf("check topk (k=2048 of 10000, 3 rows): %s\n", pass ? "exact set ok" : "FAIL");
  ctx.arena->Reset();
}

}  // namespace

void RunIndexerSuite(Context& ctx) {
  CheckIndexer(ctx, false);
  CheckIndexer(ctx, true);
  CheckTopK(ctx);
  // indexer_decode: batch x context, keys of each sequence contiguous (a
  // paged cache reads the same bytes in 64-token pages).
  {
    const int t = ctx.rec->Table("indexer_decode", {{"heads", kHeads}}, "sum_context_keys",
                                 "servesim kernel: FP8 q/k widened to BF16 in shared memory, WMMA, weighted ReLU "
                                 "sum over 64 heads x 128; achieved_gbps counts 132 B per key");
    const std::pair<int, int> shapes[] = {{1, 512},    {1, 4096},  {1, 16384}, {1, 65536}, {8, 2048},
                                          {8, 8192},   {8, 32768}, {32, 4096}, {32, 16384}, {64, 65536},
                                          {128, 8192}, {256, 16384}};
    std::vector<std::pair<double, std::pair<int, int>>> by_x;
    for (auto s : shapes) by_x.push_back({double(s.first) * s.second, s});
    std::sort(by_x.begin(), by_x.end());
    double last_x = -1;
    for (auto& [x, s] : by_x) {
      if (x == last_x) continue;  // one point per x
      last_x = x;
      const int batch = s.first, c = s.second;
      if (ctx.cfg.quick && !(batch == 8 && c == 8192)) continue;
      ctx.arena->Reset();
      const size_t nk = size_t(batch) * c;
      const int sets = RotatingSets(nk * 132, ctx.cfg, 16);
      auto* q = static_cast<uint8_t*>(ctx.arena->Alloc(size_t(batch) * kHeads * kDim));
      auto* w = static_cast<float*>(ctx.arena->Alloc(4 * size_t(batch) * kHeads));
      auto* keys = static_cast<uint8_t*>(ctx.arena->Alloc(nk * kDim * sets));
      auto* ks = static_cast<float*>(ctx.arena->Alloc(4 * nk * sets));
      auto* sc = static_cast<float*>(ctx.arena->Alloc(4 * nk * sets));
      FillFp8(q, size_t(batch) * kHeads * kDim, 701, 1.0f, ctx.stream);
      FillF32(w, size_t(batch) * kHeads, 702, -1.0f, 1.0f, ctx.stream);
      FillFp8(keys, nk * kDim * sets, 703, 1.0f, ctx.stream);
      FillF32(ks, nk * sets, 704, 0.5f, 1.5f, ctx.stream);
      Stats st = TimeLaunches(
          ctx.stream,
          [&](int it) {
            const int s2 = it % sets;
            RunIndexer(q, w, keys + s2 * nk * kDim, ks + s2 * nk, sc + s2 * nk, batch, c, false, 0, c, ctx.stream);
          },
          ctx.cfg);
      ctx.rec->Add(t, x, st, 2.0 * kHeads * kDim * nk, 132.0 * nk + 4.0 * nk);
    }
  }
  // indexer_prefill: one prompt of S tokens scoring its causal prefix.
  {
    const int t = ctx.rec->Table("indexer_prefill", {{"heads", kHeads}}, "causal_pairs",
                                 "same kernel as indexer_decode, one sequence of S tokens, query i scores keys 0..i; "
                                 "x = S(S+1)/2");
    for (int seq = 512; seq <= 16384; seq *= 2) {
      if (ctx.cfg.quick && seq != 2048) continue;
      ctx.arena->Reset();
      auto* q = static_cast<uint8_t*>(ctx.arena->Alloc(size_t(seq) * kHeads * kDim));
      auto* w = static_cast<float*>(ctx.arena->Alloc(4 * size_t(seq) * kHeads));
      auto* keys = static_cast<uint8_t*>(ctx.arena->Alloc(size_t(seq) * kDim));
      auto* ks = static_cast<float*>(ctx.arena->Alloc(4 * size_t(seq)));
      auto* sc = static_cast<float*>(ctx.arena->Alloc(4 * size_t(seq) * seq));
      FillFp8(q, size_t(seq) * kHeads * kDim, 711, 1.0f, ctx.stream);
      FillF32(w, size_t(seq) * kHeads, 712, -1.0f, 1.0f, ctx.stream);
      FillFp8(keys, size_t(seq) * kDim, 713, 1.0f, ctx.stream);
      FillF32(ks, seq, 714, 0.5f, 1.5f, ctx.stream);
      Stats st = TimeLaunches(
          ctx.stream, [&](int) { RunIndexer(q, w, keys, ks, sc, seq, seq, true, 0, seq, ctx.stream); }, ctx.cfg);
      const double pairs = 0.5 * seq * (seq + 1.0);
      ctx.rec->Add(t, pairs, st, 2.0 * kHeads * kDim * pairs, 0);
    }
  }
  // topk: rows of indexer scores, k = 2048. Both tables time `rows` rows of
  // `len` scores each, one block a row, on rotating copies of the scores.
  const int k = 2048;
  auto time_topk = [&](int rows, int len, uint64_t seed) {
    ctx.arena->Reset();
    const size_t n = size_t(rows) * len;
    const int sets = RotatingSets(n * 4, ctx.cfg, 16);
    auto* sc = static_cast<float*>(ctx.arena->Alloc(4 * n * sets));
    auto* idx = static_cast<int32_t*>(ctx.arena->Alloc(4 * size_t(rows) * k * sets));
    FillF32(sc, n * sets, seed, -3.0f, 3.0f, ctx.stream);
    return TimeLaunches(
        ctx.stream,
        [&](int it) {
          const int s2 = it % sets;
          TopKKernel<<<rows, 1024, 0, ctx.stream>>>(sc + s2 * n, len, k, idx + s2 * size_t(rows) * k);
          LAUNCH_CHECK();
        },
        ctx.cfg);
  };
  {
    // Several rows at every sum: one row alone is topk_row's (below), and a
    // sum reached by one long row there would price several short ones as
    // that row (8 x 16384 keys took 32 us, 64 x 4096 26 us).
    const int t = ctx.rec->Table("topk", {{"k", k}}, "sum_scored_keys",
                                 "servesim radix select, one 1024-thread block per row, 4 histogram passes + 1 "
                                 "gather pass; 2..1024 rows of 4096..65536 fp32 scores; achieved_gbps counts one "
                                 "read");
    const std::pair<int, int> shapes[] = {{2, 4096},   {8, 8192},   {32, 4096},    {64, 4096},
                                          {64, 65536}, {256, 8192}, {1024, 16384}, {4096, 4096}};
    std::vector<std::pair<double, std::pair<int, int>>> by_x;
    for (auto s : shapes) by_x.push_back({double(s.first) * s.second, s});
    std::sort(by_x.begin(), by_x.end());
    double last_x = -1;
    for (auto& [x, s] : by_x) {
      if (x == last_x) continue;
      last_x = x;
      const int rows = s.first, len = s.second;
      if (ctx.cfg.quick && !(rows == 64 && len == 4096)) continue;
      const Stats st = time_topk(rows, len, 801);
      ctx.rec->Add(t, x, st, 0, 4.0 * rows * len + 4.0 * rows * k);
    }
  }
  // topk_row: one row alone, by its length. One block selects each row, so an
  // op is no faster than its longest row, however few keys the others have:
  // the table above, keyed by the sum, cannot say that (one 65536-key row
  // takes longer there than eight rows of 16384).
  {
    const int t = ctx.rec->Table("topk_row", {{"k", k}}, "row_keys",
                                 "servesim radix select, one row in one 1024-thread block; the floor of a "
                                 "topk op whose longest row has this many keys; achieved_gbps counts one read");
    for (const int len : {4096, 8192, 16384, 32768, 65536, 131072, 163840, 262144}) {
      if (ctx.cfg.quick && len != 65536) continue;
      const Stats st = time_topk(1, len, 802);
      ctx.rec->Add(t, len, st, 0, 4.0 * len + 4.0 * k);
    }
  }
  ctx.arena->Reset();
}


// Exported launch functions (kernels.h).
void EnqueueIndexer(const uint8_t* q, const float* w, const uint8_t* keys, const float* kscale, float* scores, int nq,
                    int ctx, bool causal, int causal_offset, int score_stride, cudaStream_t s) {
  RunIndexer(q, w, keys, kscale, scores, nq, ctx, causal, causal_offset, score_stride, s);
}

void EnqueueTopK(const float* scores, int rows, int len, int k, int32_t* out, cudaStream_t s) {
  TopKKernel<<<rows, 1024, 0, s>>>(scores, len, k, out);
  LAUNCH_CHECK();
}

void EnqueueCleanLogits(float* logits, const int32_t* context, int rows, int width, cudaStream_t s) {
  CleanLogitsKernel<<<dim3(kCleanColumnBlocks, rows), kCleanThreads, 0, s>>>(logits, context, width);
  LAUNCH_CHECK();
}

}  // namespace servesim::calibration::cuda
