// Attention kernels of DeepSeek-V3.2 on the H200, written for calibration:
// sparse MLA (MQA over the 576-wide latent, gathered top-k entries, BF16 or
// the 656-byte FP8 cache) for decode and prefill, and causal dense MHA
// prefill (d_qk 192, d_v 128). Checked against CPU references, then timed.
#include <cuda_bf16.h>
#include <cuda_fp8.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "calibration/cuda/flash_tile.cuh"
#include "calibration/cuda/fp8_convert.cuh"
#include "calibration/cuda/kernels.h"
#include "calibration/cuda/suites.h"

namespace servesim::calibration::cuda {
namespace {

constexpr int kLatent = 576, kNope = 512, kRope = 64, kTopK = 2048;
constexpr int kFp8EntryBytes = 656;  // 512 e4m3 + 4 fp32 scales + 64 bf16 (reference §4.1)
constexpr float kLog2e = 1.4426950408889634f;

__device__ __forceinline__ void CopyRow16(__nv_bfloat16* dst, const __nv_bfloat16* src, int chunk) {
  reinterpret_cast<uint4*>(dst)[chunk] = reinterpret_cast<const uint4*>(src)[chunk];
}

template <bool kFp8>
struct MlaProblem {
  static constexpr int kRows = 32, kKeyTile = 64, kDqk = kLatent, kDv = kNope;
  static constexpr bool kVInK = true;  // MQA: V is the first 512 latent dims of K
  static constexpr float kScaleLog2 = 0.07216878364870322f * kLog2e;  // 1/sqrt(192): DeepSeek's qk head dim

  const __nv_bfloat16* q;   // [nq][heads][576]
  const void* cache;        // BF16 [pool][576] or FP8 [pool][656 bytes]
  const int32_t* idx;       // [nq][topk] pool rows
  int heads, topk, splits;
  __nv_bfloat16* out;       // [nq][heads][512] (splits == 1)
  float* part_o;            // [nq][splits][heads][512]
  float* part_ml;           // [nq][splits][heads][2]
  int qi, h0, split, kb, ke;

  __device__ bool Begin() {
    h0 = blockIdx.x * kRows;
    split = blockIdx.y;
    qi = blockIdx.z;
    const int chunk = ((topk + splits - 1) / splits + kKeyTile - 1) / kKeyTile * kKeyTile;
    kb = split * chunk;
    ke = min(topk, kb + chunk);
    return true;
  }
  __device__ void LoadQ(__nv_bfloat16* sQ, int lq) const {
    constexpr int kChunks = kLatent / 8;
    for (int i = threadIdx.x; i < kRows * kChunks; i += kFlashThreads) {
      const int r = i / kChunks, c = i % kChunks;
      CopyRow16(sQ + r * lq, q + (static_cast<size_t>(qi) * heads + h0 + r) * kLatent, c);
    }
  }
  __device__ void KeyRange(int* b, int* e) const {
    *b = kb;
    *e = ke;
  }
  __device__ void LoadKV(int key0, int count, __nv_bfloat16* sK, int lk, __nv_bfloat16*, int) const {
    const int32_t* rows = idx + static_cast<size_t>(qi) * topk + key0;
    if constexpr (!kFp8) {
      constexpr int kChunks = kLatent / 8;
      const __nv_bfloat16* base = static_cast<const __nv_bfloat16*>(cache);
      for (int i = threadIdx.x; i < kKeyTile * kChunks; i += kFlashThreads) {
        const int r = i / kChunks, c = i % kChunks;
        if (r < count) {
          CopyRow16(sK + r * lk, base + static_cast<size_t>(rows[r]) * kLatent, c);
        } else {
          reinterpret_cast<uint4*>(sK + r * lk)[c] = make_uint4(0, 0, 0, 0);
        }
      }
    } else {
      // 32 chunks of 16 e4m3 values (dequantized with their 128-group's
      // scale) and 8 chunks of 8 BF16 rope values per entry.
      constexpr int kTasks = 40;
      const unsigned char* base = static_cast<const unsigned char*>(cache);
      for (int i = threadIdx.x; i < kKeyTile * kTasks; i += kFlashThreads) {
        const int r = i / kTasks, t = i % kTasks;
        __nv_bfloat16* dst = sK + r * lk;
        if (r >= count) {
          if (t < 32) {
            reinterpret_cast<uint4*>(dst)[2 * t] = make_uint4(0, 0, 0, 0);
            reinterpret_cast<uint4*>(dst)[2 * t + 1] = make_uint4(0, 0, 0, 0);
          } else {
            reinterpret_cast<uint4*>(dst + kNope)[t - 32] = make_uint4(0, 0, 0, 0);
          }
          continue;
        }
        const unsigned char* entry = base + static_cast<size_t>(rows[r]) * kFp8EntryBytes;
        if (t < 32) {
          const float scale = reinterpret_cast<const float*>(entry + kNope)[t / 8];
          Fp8x16ToBf16(reinterpret_cast<const uint4*>(entry)[t], dst + 16 * t, scale);
        } else {
          const uint4* rope = reinterpret_cast<const uint4*>(entry + kNope + 16);
          reinterpret_cast<uint4*>(dst + kNope)[t - 32] = rope[t - 32];
        }
      }
    }
  }
  __device__ bool Valid(int, int) const { return true; }
  __device__ void Store(const float* sO, int lo, const float* sM, const float* sL) const {
    for (int i = threadIdx.x; i < kRows * kNope; i += kFlashThreads) {
      const int r = i / kNope, c = i % kNope;
      const size_t row = static_cast<size_t>(qi) * heads + h0 + r;
      if (splits == 1) {
        const float l = sL[r];
        out[row * kNope + c] = __float2bfloat16(l > 0 ? sO[r * lo + c] / l : 0.f);
      } else {
        const size_t prow = (static_cast<size_t>(qi) * splits + split) * heads + h0 + r;
        part_o[prow * kNope + c] = sO[r * lo + c];
        if (c == 0) {
          part_ml[prow * 2] = sM[r];
          part_ml[prow * 2 + 1] = sL[r];
        }
      }
    }
  }
};

// Merges split-KV partials: weights 2^(m_s - max m).
__global__ void MlaCombineKernel(const float* part_o, const float* part_ml, int heads, int splits,
                                 __nv_bfloat16* out) {
  const int h = blockIdx.x, qi = blockIdx.y;
  float m = -INFINITY;
  for (int s = 0; s < splits; ++s) m = fmaxf(m, part_ml[((static_cast<size_t>(qi) * splits + s) * heads + h) * 2]);
  float acc[4] = {0, 0, 0, 0}, l = 0;
  for (int s = 0; s < splits; ++s) {
    const size_t prow = (static_cast<size_t>(qi) * splits + s) * heads + h;
    const float ms = part_ml[prow * 2];
    const float w = (ms == -INFINITY) ? 0.f : exp2f(ms - m);
    l += w * part_ml[prow * 2 + 1];
#pragma unroll
    for (int j = 0; j < 4; ++j) acc[j] += w * part_o[prow * kNope + threadIdx.x + 128 * j];
  }
#pragma unroll
  for (int j = 0; j < 4; ++j) {
    out[(static_cast<size_t>(qi) * heads + h) * kNope + threadIdx.x + 128 * j] =
        __float2bfloat16(l > 0 ? acc[j] / l : 0.f);
  }
}

struct MhaProblem {
  static constexpr int kRows = 64, kKeyTile = 64, kDqk = 192, kDv = 128;
  static constexpr bool kVInK = false;
  static constexpr float kScaleLog2 = 0.07216878364870322f * kLog2e;

  const __nv_bfloat16* q;  // [batch][seq][heads][192]
  const __nv_bfloat16* k;  // [batch][seq][heads][192]
  const __nv_bfloat16* v;  // [batch][seq][heads][128]
  __nv_bfloat16* out;      // [batch][seq][heads][128]
  int seq, heads;
  int qt, h, b;

  __device__ size_t Row(int tok) const { return (static_cast<size_t>(b) * seq + tok) * heads + h; }
  __device__ bool Begin() {
    qt = gridDim.x - 1 - blockIdx.x;  // the longest (diagonal-far) tiles first
    h = blockIdx.y;
    b = blockIdx.z;
    return true;
  }
  __device__ void LoadQ(__nv_bfloat16* sQ, int lq) const {
    for (int i = threadIdx.x; i < kRows * 24; i += kFlashThreads) {
      const int r = i / 24, c = i % 24, tok = qt * kRows + r;
      if (tok < seq) {
        CopyRow16(sQ + r * lq, q + Row(tok) * kDqk, c);
      } else {
        reinterpret_cast<uint4*>(sQ + r * lq)[c] = make_uint4(0, 0, 0, 0);
      }
    }
  }
  __device__ void KeyRange(int* kb, int* ke) const {
    *kb = 0;
    *ke = min(seq, (qt + 1) * kRows);
  }
  __device__ void LoadKV(int key0, int count, __nv_bfloat16* sK, int lk, __nv_bfloat16* sV, int lv) const {
    for (int i = threadIdx.x; i < kKeyTile * 40; i += kFlashThreads) {
      const int r = i / 40, t = i % 40;
      const bool ok = r < count;
      if (t < 24) {
        if (ok) CopyRow16(sK + r * lk, k + Row(key0 + r) * kDqk, t);
        else reinterpret_cast<uint4*>(sK + r * lk)[t] = make_uint4(0, 0, 0, 0);
      } else {
        if (ok) CopyRow16(sV + r * lv, v + Row(key0 + r) * kDv, t - 24);
        else reinterpret_cast<uint4*>(sV + r * lv)[t - 24] = make_uint4(0, 0, 0, 0);
      }
    }
  }
  __device__ bool Valid(int row, int key) const { return key <= qt * kRows + row; }
  __device__ void Store(const float* sO, int lo, const float*, const float* sL) const {
    for (int i = threadIdx.x; i < kRows * kDv; i += kFlashThreads) {
      const int r = i / kDv, c = i % kDv, tok = qt * kRows + r;
      if (tok >= seq) continue;
      const float l = sL[r];
      out[Row(tok) * kDv + c] = __float2bfloat16(l > 0 ? sO[r * lo + c] / l : 0.f);
    }
  }
};

// Fills an FP8 MLA cache: per entry 512 e4m3, 4 positive fp32 scales, 64 bf16.
__global__ void FillMlaFp8CacheKernel(unsigned char* cache, size_t entries, uint64_t seed) {
  const size_t words = entries * (kFp8EntryBytes / 4);
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < words; i += (size_t)gridDim.x * blockDim.x) {
    const size_t e = i / (kFp8EntryBytes / 4);
    const int w = static_cast<int>(i % (kFp8EntryBytes / 4));
    uint64_t z = seed * 0x9e3779b97f4a7c15ull + i;
    z = (z ^ (z >> 31)) * 0xbf58476d1ce4e5b9ull;
    z ^= z >> 29;
    auto u = [&](int s) { return (((z >> (8 * s)) & 0xff) + 1) / 257.0f; };  // (0, 1)
    unsigned char* p = cache + e * kFp8EntryBytes + 4 * w;
    if (w < 128) {
      for (int j = 0; j < 4; ++j) {
        __nv_fp8_e4m3 f(((z >> (60 - j)) & 1 ? 1.f : -1.f) * (0.05f + 2.0f * u(j)));
        p[j] = f.__x;
      }
    } else if (w < 132) {
      *reinterpret_cast<float*>(p) = 0.25f + 0.5f * u(0);
    } else {
      __nv_bfloat16* b = reinterpret_cast<__nv_bfloat16*>(p);
      b[0] = __float2bfloat16(u(0) - 0.5f + 0.01f);
      b[1] = __float2bfloat16(0.5f - u(1) - 0.01f);
    }
  }
}

template <class P>
void Launch(const P& p, dim3 grid, cudaStream_t s) {
  static bool configured = false;
  if (!configured) {
    CUDA_CHECK(cudaFuncSetAttribute(FlashTileKernel<P>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                    static_cast<int>(FlashSmem<P>::kBytes)));
    configured = true;
  }
  FlashTileKernel<P><<<grid, kFlashThreads, FlashSmem<P>::kBytes, s>>>(p);
  LAUNCH_CHECK();
}

int ChooseSplits(int heads, int nq, int topk, int sms) {
  int splits = 1;
  while ((heads / 32) * nq * splits < 2 * sms && splits < 32 && topk / (splits * 2) >= 64) splits *= 2;
  return splits;
}

// Runs sparse MLA for nq queries; the split-KV partials go through `part_*`.
template <bool kFp8>
void RunMla(const __nv_bfloat16* q, const void* cache, const int32_t* idx, int nq, int heads, int topk, int splits,
            __nv_bfloat16* out, float* part_o, float* part_ml, cudaStream_t s) {
  MlaProblem<kFp8> p{};
  p.q = q;
  p.cache = cache;
  p.idx = idx;
  p.heads = heads;
  p.topk = topk;
  p.splits = splits;
  p.out = out;
  p.part_o = part_o;
  p.part_ml = part_ml;
  Launch(p, dim3(heads / 32, splits, nq), s);
  if (splits > 1) {
    MlaCombineKernel<<<dim3(heads, nq), 128, 0, s>>>(part_o, part_ml, heads, splits, out);
    LAUNCH_CHECK();
  }
}

void RunMha(const __nv_bfloat16* q, const __nv_bfloat16* k, const __nv_bfloat16* v, __nv_bfloat16* out, int batch,
            int seq, int heads, cudaStream_t s) {
  MhaProblem p{};
  p.q = q;
  p.k = k;
  p.v = v;
  p.out = out;
  p.seq = seq;
  p.heads = heads;
  Launch(p, dim3((seq + 63) / 64, heads, batch), s);
}

std::vector<float> ToHost(const void* d, size_t n_bf16) {
  std::vector<__nv_bfloat16> h(n_bf16);
  CUDA_CHECK(cudaMemcpy(h.data(), d, n_bf16 * 2, cudaMemcpyDeviceToHost));
  std::vector<float> f(n_bf16);
  for (size_t i = 0; i < n_bf16; ++i) f[i] = __bfloat162float(h[i]);
  return f;
}

// Dequantized latent of one cache entry, as the kernel sees it (BF16-rounded).
std::vector<double> HostEntry(const std::vector<unsigned char>& cache, bool fp8, int row) {
  std::vector<double> e(kLatent);
  if (!fp8) {
    for (int j = 0; j < kLatent; ++j) {
      __nv_bfloat16 b;
      std::memcpy(&b, &cache[(static_cast<size_t>(row) * kLatent + j) * 2], 2);
      e[j] = __bfloat162float(b);
    }
    return e;
  }
  const unsigned char* p = &cache[static_cast<size_t>(row) * kFp8EntryBytes];
  for (int j = 0; j < kNope; ++j) {
    __nv_fp8_e4m3 f;
    f.__x = p[j];
    float scale;
    std::memcpy(&scale, p + kNope + 4 * (j / 128), 4);
    e[j] = __bfloat162float(__float2bfloat16(static_cast<float>(f) * scale));
  }
  for (int j = 0; j < kRope; ++j) {
    __nv_bfloat16 b;
    std::memcpy(&b, p + kNope + 16 + 2 * j, 2);
    e[kNope + j] = __bfloat162float(b);
  }
  return e;
}

void CheckMla(Context& ctx, bool fp8, int splits) {
  const int nq = 3, heads = 64, topk = 320, pool = 4096;
  const size_t entry = fp8 ? kFp8EntryBytes : kLatent * 2;
  ctx.arena->Reset();
  auto* q = static_cast<__nv_bfloat16*>(ctx.arena->Alloc(size_t{2} * nq * heads * kLatent));
  void* cache = ctx.arena->Alloc(entry * pool);
  auto* idx = static_cast<int32_t*>(ctx.arena->Alloc(4 * nq * topk));
  auto* out = static_cast<__nv_bfloat16*>(ctx.arena->Alloc(size_t{2} * nq * heads * kNope));
  auto* part_o = static_cast<float*>(ctx.arena->Alloc(size_t{4} * nq * splits * heads * kNope));
  auto* part_ml = static_cast<float*>(ctx.arena->Alloc(size_t{8} * nq * splits * heads));
  FillBf16(q, size_t{nq} * heads * kLatent, 101 + splits, 1.0f, ctx.stream);
  if (fp8) {
    FillMlaFp8CacheKernel<<<1024, 256, 0, ctx.stream>>>(static_cast<unsigned char*>(cache), pool, 102);
    LAUNCH_CHECK();
  } else {
    FillBf16(cache, size_t{pool} * kLatent, 102, 1.0f, ctx.stream);
  }
  FillI32Mod(idx, size_t{nq} * topk, 103, pool, ctx.stream);
  CUDA_CHECK(cudaMemsetAsync(out, 0xff, size_t{2} * nq * heads * kNope, ctx.stream));
  if (fp8) RunMla<true>(q, cache, idx, nq, heads, topk, splits, out, part_o, part_ml, ctx.stream);
  else RunMla<false>(q, cache, idx, nq, heads, topk, splits, out, part_o, part_ml, ctx.stream);
  CUDA_CHECK(cudaStreamSynchronize(ctx.stream));
  std::vector<float> hq = ToHost(q, size_t{nq} * heads * kLatent), hout = ToHost(out, size_t{nq} * heads * kNope);
  std::vector<unsigned char> hc(entry * pool);
  std::vector<int32_t> hidx(nq * topk);
  CUDA_CHECK(cudaMemcpy(hc.data(), cache, hc.size(), cudaMemcpyDeviceToHost));
  CUDA_CHECK(cudaMemcpy(hidx.data(), idx, hidx.size() * 4, cudaMemcpyDeviceToHost));
  std::vector<double> got(hout.begin(), hout.end()), want;
  const double scale = 1.0 / std::sqrt(192.0);
  for (int qi = 0; qi < nq; ++qi) {
    std::vector<std::vector<double>> keys;
    for (int t = 0; t < topk; ++t) keys.push_back(HostEntry(hc, fp8, hidx[qi * topk + t]));
    for (int h = 0; h < heads; ++h) {
      const float* qv = &hq[(static_cast<size_t>(qi) * heads + h) * kLatent];
      std::vector<double> s(topk);
      double mx = -1e300;
      for (int t = 0; t < topk; ++t) {
        double acc = 0;
        for (int j = 0; j < kLatent; ++j) acc += qv[j] * keys[t][j];
        s[t] = acc * scale;
        mx = std::max(mx, s[t]);
      }
      double l = 0;
      for (double& x : s) l += (x = std::exp(x - mx));
      for (int c = 0; c < kNope; ++c) {
        double o = 0;
        for (int t = 0; t < topk; ++t) o += s[t] * keys[t][c];
        want.push_back(o / l);
      }
    }
  }
  const double err = RelError(got, want);
  const bool pass = err < 2e-2;
  if (!pass) ++ctx.failures;
  std::printf("check sparse_mla %s cache, splits %d: rel err %.3e %s\n", fp8 ? "fp8" : "bf16", splits, err,
              pass ? "ok" : "FAIL");
  ctx.arena->Reset();
}

void CheckMha(Context& ctx) {
  const int batch = 2, seq = 160, heads = 2;
  ctx.arena->Reset();
  const size_t nqk = size_t{batch} * seq * heads * 192, nv = size_t{batch} * seq * heads * 128;
  auto* q = static_cast<__nv_bfloat16*>(ctx.arena->Alloc(2 * nqk));
  auto* k = static_cast<__nv_bfloat16*>(ctx.arena->Alloc(2 * nqk));
  auto* v = static_cast<__nv_bfloat16*>(ctx.arena->Alloc(2 * nv));
  auto* out = static_cast<__nv_bfloat16*>(ctx.arena->Alloc(2 * nv));
  FillBf16(q, nqk, 201, 1.0f, ctx.stream);
  FillBf16(k, nqk, 202, 1.0f, ctx.stream);
  FillBf16(v, nv, 203, 1.0f, ctx.stream);
  CUDA_CHECK(cudaMemsetAsync(out, 0xff, 2 * nv, ctx.stream));
  RunMha(q, k, v, out, batch, seq, heads, ctx.stream);
  CUDA_CHECK(cudaStreamSynchronize(ctx.stream));
  auto hq = ToHost(q, nqk), hk = ToHost(k, nqk), hv = ToHost(v, nv), ho = ToHost(out, nv);
  std::vector<double> got(ho.begin(), ho.end()), want(nv);
  const double scale = 1.0 / std::sqrt(192.0);
  for (int b = 0; b < batch; ++b) {
    for (int h = 0; h < heads; ++h) {
      for (int i = 0; i < seq; ++i) {
        const size_t qr = (static_cast<size_t>(b) * seq + i) * heads + h;
        std::vector<double> s(i + 1);
        double mx = -1e300;
        for (int j = 0; j <= i; ++j) {
          const size_t kr = (static_cast<size_t>(b) * seq + j) * heads + h;
          double acc = 0;
          for (int d = 0; d < 192; ++d) acc += hq[qr * 192 + d] * hk[kr * 192 + d];
          s[j] = acc * scale;
          mx = std::max(mx, s[j]);
        }
        double l = 0;
        for (double& x : s) l += (x = std::exp(x - mx));
        for (int d = 0; d < 128; ++d) {
          double o = 0;
          for (int j = 0; j <= i; ++j) o += s[j] * hv[((static_cast<size_t>(b) * seq + j) * heads + h) * 128 + d];
          want[qr * 128 + d] = o / l;
        }
      }
    }
  }
  const double err = RelError(got, want);
  const bool pass = err < 2e-2;
  if (!pass) ++ctx.failures;
  std::printf("check dense_mha_prefill (causal, d_qk 192, d_v 128): rel err %.3e %s\n", err, pass ? "ok" : "FAIL");
  ctx.arena->Reset();
}

int SmCount() {
  int dev = 0, sms = 0;
  CUDA_CHECK(cudaGetDevice(&dev));
  CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
  return sms;
}

// Times sparse MLA over `nq` queries (decode: sequences; prefill: tokens).
// Decode gathers from a large pool with a fresh index set per rotation;
// prefill gathers within one sequence's cache of `prefill_ctx` entries.
void TimeMla(Context& ctx, int t, bool fp8, int heads, int nq, bool prefill, int prefill_ctx) {
  const size_t entry = fp8 ? kFp8EntryBytes : kLatent * 2;
  const size_t touched = entry * kTopK * static_cast<size_t>(nq);
  const int sets = prefill ? 2 : RotatingSets(touched, ctx.cfg);
  const size_t pool = prefill ? static_cast<size_t>(prefill_ctx) : size_t{1} << 21;  // 2M entries: 1.3-2.4 GB
  const int splits = prefill ? 1 : ChooseSplits(heads, nq, kTopK, SmCount());
  ctx.arena->Reset();
  void* cache = ctx.arena->Alloc(entry * pool);
  auto* q = static_cast<__nv_bfloat16*>(ctx.arena->Alloc(size_t{2} * sets * nq * heads * kLatent));
  auto* idx = static_cast<int32_t*>(ctx.arena->Alloc(size_t{4} * sets * nq * kTopK));
  auto* out = static_cast<__nv_bfloat16*>(ctx.arena->Alloc(size_t{2} * sets * nq * heads * kNope));
  auto* part_o = static_cast<float*>(ctx.arena->Alloc(size_t{4} * nq * splits * heads * kNope));
  auto* part_ml = static_cast<float*>(ctx.arena->Alloc(size_t{8} * nq * splits * heads));
  if (fp8) {
    FillMlaFp8CacheKernel<<<4096, 256, 0, ctx.stream>>>(static_cast<unsigned char*>(cache), pool, 301);
    LAUNCH_CHECK();
  } else {
    FillBf16(cache, pool * kLatent, 301, 1.0f, ctx.stream);
  }
  FillBf16(q, size_t{2} * 0 + size_t(sets) * nq * heads * kLatent, 302, 1.0f, ctx.stream);
  FillI32Mod(idx, size_t(sets) * nq * kTopK, 303, static_cast<int32_t>(pool), ctx.stream);
  Stats st = TimeLaunches(
      ctx.stream,
      [&](int it) {
        const int s = it % sets;
        const __nv_bfloat16* qs = q + size_t(s) * nq * heads * kLatent;
        const int32_t* is = idx + size_t(s) * nq * kTopK;
        __nv_bfloat16* os = out + size_t(s) * nq * heads * kNope;
        if (fp8) RunMla<true>(qs, cache, is, nq, heads, kTopK, splits, os, part_o, part_ml, ctx.stream);
        else RunMla<false>(qs, cache, is, nq, heads, kTopK, splits, os, part_o, part_ml, ctx.stream);
      },
      ctx.cfg);
  const double flops = 2.0 * nq * heads * kTopK * (kLatent + kNope);  // FlashMLA's convention (reference §1.1)
  const double bytes = static_cast<double>(nq) * (kTopK * (entry + 4) + heads * (kLatent + kNope) * 2.0);
  ctx.rec->Add(t, static_cast<double>(nq) * kTopK, st, flops, prefill ? 0 : bytes);
}

}  // namespace

void RunAttentionSuite(Context& ctx) {
  CheckMla(ctx, false, 1);
  CheckMla(ctx, false, 4);
  CheckMla(ctx, true, 1);
  CheckMla(ctx, true, 8);
  CheckMha(ctx);
  const int sms = SmCount();
  for (int heads : {64, 128}) {
    for (int fp8 : {0, 1}) {
      const int t = ctx.rec->Table(
          "sparse_mla_decode", {{"heads", heads}, {"kv_fp8", fp8}}, "sum_gathered_entries",
          std::string("servesim WMMA kernel (BF16 mma.sync via WMMA, FP32 online softmax, 32 heads per block, "
                      "split-KV + combine when blocks < 2 x SMs); top-2048 gathered per sequence, x = batch x 2048; ") +
              (fp8 ? "FP8 656-B cache dequantized in the kernel" : "BF16 1152-B cache") +
              "; achieved_gbps counts cache entries + indices + q + out once");
      for (int b = 1; b <= 1024; b *= 2) {
        if (ctx.cfg.quick && b != 1 && b != 64) continue;
        TimeMla(ctx, t, fp8, heads, b, false, 0);
      }
    }
    const int t = ctx.rec->Table("sparse_mla_prefill", {{"heads", heads}}, "query_tokens_x_2048",
                                 "same kernel as sparse_mla_decode, BF16 cache, one query token's heads per block, "
                                 "top-2048 gathered within one sequence of 16384 cached entries (L2-resident reuse)");
    for (int tokens = 64; tokens <= 4096; tokens *= 4) {
      if (ctx.cfg.quick && tokens != 256) continue;
      TimeMla(ctx, t, false, heads, tokens, true, 16384);
    }
  }
  (void)sms;
  for (int heads : {128, 16}) {
    const int t = ctx.rec->Table("dense_mha_prefill", {{"heads", heads}}, "causal_pairs",
                                 "servesim WMMA causal flash kernel, d_qk 192, d_v 128, one sequence, 64 query "
                                 "tokens x 64 keys per tile; x = S(S+1)/2");
    for (int seq = 128; seq <= 8192; seq *= 2) {
      if (ctx.cfg.quick && seq != 1024) continue;
      ctx.arena->Reset();
      const size_t nqk = size_t(seq) * heads * 192, nv = size_t(seq) * heads * 128;
      const int sets = RotatingSets(2 * (2 * nqk + 2 * nv), ctx.cfg, 8);
      auto* q = static_cast<__nv_bfloat16*>(ctx.arena->Alloc(2 * nqk * sets));
      auto* k = static_cast<__nv_bfloat16*>(ctx.arena->Alloc(2 * nqk * sets));
      auto* v = static_cast<__nv_bfloat16*>(ctx.arena->Alloc(2 * nv * sets));
      auto* o = static_cast<__nv_bfloat16*>(ctx.arena->Alloc(2 * nv * sets));
      FillBf16(q, nqk * sets, 401, 1.0f, ctx.stream);
      FillBf16(k, nqk * sets, 402, 1.0f, ctx.stream);
      FillBf16(v, nv * sets, 403, 1.0f, ctx.stream);
      Stats st = TimeLaunches(
          ctx.stream,
          [&](int it) {
            const int s = it % sets;
            RunMha(q + s * nqk, k + s * nqk, v + s * nv, o + s * nv, 1, seq, heads, ctx.stream);
          },
          ctx.cfg);
      const double pairs = 0.5 * seq * (seq + 1.0);
      ctx.rec->Add(t, pairs, st, 2.0 * heads * pairs * (192 + 128), 2.0 * (2 * nqk + 2 * nv));
    }
  }
  ctx.arena->Reset();
}


// Exported launch functions (kernels.h).
int SparseMlaSplits(int heads, int nq, int topk) { return ChooseSplits(heads, nq, topk, SmCount()); }

void EnqueueSparseMla(bool kv_fp8, const __nv_bfloat16* q, const void* cache, const int32_t* idx, int nq, int heads,
                      int topk, int splits, __nv_bfloat16* out, float* part_o, float* part_ml, cudaStream_t s) {
  if (kv_fp8) RunMla<true>(q, cache, idx, nq, heads, topk, splits, out, part_o, part_ml, s);
  else RunMla<false>(q, cache, idx, nq, heads, topk, splits, out, part_o, part_ml, s);
}

void EnqueueDenseMha(const __nv_bfloat16* q, const __nv_bfloat16* k, const __nv_bfloat16* v, __nv_bfloat16* out,
                     int batch, int seq, int heads, cudaStream_t s) {
  RunMha(q, k, v, out, batch, seq, heads, s);
}

void FillMlaFp8Cache(void* cache, size_t entries, uint64_t seed, cudaStream_t s) {
  FillMlaFp8CacheKernel<<<4096, 256, 0, s>>>(static_cast<unsigned char*>(cache), entries, seed);
  LAUNCH_CHECK();
}

}  // namespace servesim::calibration::cuda
