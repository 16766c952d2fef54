// A tiled online-softmax attention core on tensor cores (WMMA, BF16 in, FP32
// accumulate), shared by the sparse MLA and dense MHA kernels. A Problem type
// says where the query rows and the key/value tiles come from.
#ifndef SERVESIM_CALIBRATION_CUDA_FLASH_TILE_CUH_
#define SERVESIM_CALIBRATION_CUDA_FLASH_TILE_CUH_

#include <cuda_bf16.h>
#include <mma.h>

namespace servesim::calibration::cuda {

constexpr int kFlashThreads = 256;  // 8 warps

// Shared-memory layout for a Problem P (row pads keep WMMA ldm a multiple of
// 8 elements and spread rows over banks).
template <class P>
struct FlashSmem {
  static constexpr int R = P::kRows, KT = P::kKeyTile, DQK = P::kDqk, DV = P::kDv;
  static constexpr int LQ = DQK + 8, LK = DQK + 8, LV = P::kVInK ? LK : DV + 8;
  static constexpr int LS = KT + 4, LP = KT + 8, LO = DV + 4;
  static constexpr size_t kQ = size_t{2} * R * LQ;
  static constexpr size_t kK = size_t{2} * KT * LK;
  static constexpr size_t kV = P::kVInK ? 0 : size_t{2} * KT * LV;
  static constexpr size_t kS = size_t{4} * R * LS;
  static constexpr size_t kP = size_t{2} * R * LP;
  static constexpr size_t kO = size_t{4} * R * LO;
  static constexpr size_t kStats = size_t{4} * 3 * R;
  static constexpr size_t kBytes = kQ + kK + kV + kS + kP + kO + kStats;
};

// One block: R query rows against keys [begin, end) of its problem instance.
// P provides: Begin(), LoadQ(sQ, LQ), KeyRange(&begin, &end), LoadKV(key0,
// count, sK, LK, sV, LV) (zero-filling rows past count), Valid(row, key),
// Store(sO, LO, m, l), and kScaleLog2 (softmax scale * log2 e).
template <class P>
__global__ void __launch_bounds__(kFlashThreads, 1) FlashTileKernel(P p) {
  using namespace nvcuda;
  using L = FlashSmem<P>;
  constexpr int R = L::R, KT = L::KT, DQK = L::DQK, DV = L::DV;
  extern __shared__ __align__(128) unsigned char smem[];
  __nv_bfloat16* sQ = reinterpret_cast<__nv_bfloat16*>(smem);
  __nv_bfloat16* sK = reinterpret_cast<__nv_bfloat16*>(smem + L::kQ);
  __nv_bfloat16* sV = P::kVInK ? sK : reinterpret_cast<__nv_bfloat16*>(smem + L::kQ + L::kK);
  float* sS = reinterpret_cast<float*>(smem + L::kQ + L::kK + L::kV);
  __nv_bfloat16* sP = reinterpret_cast<__nv_bfloat16*>(smem + L::kQ + L::kK + L::kV + L::kS);
  float* sO = reinterpret_cast<float*>(smem + L::kQ + L::kK + L::kV + L::kS + L::kP);
  float* sM = sO + R * L::LO;
  float* sL = sM + R;
  float* sAlpha = sL + R;
  const int tid = threadIdx.x, warp = tid / 32;

  if (!p.Begin()) return;
  p.LoadQ(sQ, L::LQ);
  for (int i = tid; i < R * L::LO; i += kFlashThreads) sO[i] = 0.f;
  for (int i = tid; i < R; i += kFlashThreads) {
    sM[i] = -INFINITY;
    sL[i] = 0.f;
  }
  int begin = 0, end = 0;
  p.KeyRange(&begin, &end);
  for (int key0 = begin; key0 < end; key0 += KT) {
    const int count = min(KT, end - key0);
    p.LoadKV(key0, count, sK, L::LK, sV, L::LV);
    __syncthreads();
    // S = Q K^T, one 16x16 tile per warp step.
    for (int f = warp; f < (R / 16) * (KT / 16); f += kFlashThreads / 32) {
      const int rt = f / (KT / 16), ct = f % (KT / 16);
      wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc;
      wmma::fill_fragment(acc, 0.f);
#pragma unroll 4
      for (int kk = 0; kk < DQK; kk += 16) {
        wmma::fragment<wmma::matrix_a, 16, 16, 16, __nv_bfloat16, wmma::row_major> a;
        wmma::fragment<wmma::matrix_b, 16, 16, 16, __nv_bfloat16, wmma::col_major> b;
        wmma::load_matrix_sync(a, sQ + rt * 16 * L::LQ + kk, L::LQ);
        wmma::load_matrix_sync(b, sK + ct * 16 * L::LK + kk, L::LK);
        wmma::mma_sync(acc, a, b, acc);
      }
      wmma::store_matrix_sync(sS + rt * 16 * L::LS + ct * 16, acc, L::LS, wmma::mem_row_major);
    }
    __syncthreads();
    // Online softmax: TPR threads per row, contiguous lanes.
    {
      constexpr int TPR = kFlashThreads / R, CPT = KT / TPR;
      const int row = tid / TPR, c0 = (tid % TPR) * CPT;
      float mx = -INFINITY;
      float v[CPT];
#pragma unroll
      for (int c = 0; c < CPT; ++c) {
        const int key = key0 + c0 + c;
        const bool ok = (c0 + c < count) && p.Valid(row, key);
        v[c] = ok ? sS[row * L::LS + c0 + c] * P::kScaleLog2 : -INFINITY;
        mx = fmaxf(mx, v[c]);
      }
#pragma unroll
      for (int o = TPR / 2; o > 0; o /= 2) mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, o));
      const float m_old = sM[row];
      const float m_new = fmaxf(m_old, mx);
      float sum = 0.f;
#pragma unroll
      for (int c = 0; c < CPT; ++c) {
        const float e = (m_new == -INFINITY) ? 0.f : exp2f(v[c] - m_new);
        sum += e;
        sP[row * L::LP + c0 + c] = __float2bfloat16(e);
      }
#pragma unroll
      for (int o = TPR / 2; o > 0; o /= 2) sum += __shfl_xor_sync(0xffffffffu, sum, o);
      __syncwarp();
      if (tid % TPR == 0) {
        const float alpha = (m_old == -INFINITY) ? 0.f : exp2f(m_old - m_new);
        sAlpha[row] = alpha;
        sM[row] = m_new;
        sL[row] = sL[row] * alpha + sum;
      }
    }
    __syncthreads();
    for (int i = tid; i < R * DV; i += kFlashThreads) {
      const int row = i / DV, col = i % DV;
      sO[row * L::LO + col] *= sAlpha[row];
    }
    __syncthreads();
    // O += P V.
    for (int f = warp; f < (R / 16) * (DV / 16); f += kFlashThreads / 32) {
      const int rt = f / (DV / 16), ct = f % (DV / 16);
      wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc;
      wmma::load_matrix_sync(acc, sO + rt * 16 * L::LO + ct * 16, L::LO, wmma::mem_row_major);
#pragma unroll
      for (int kk = 0; kk < KT; kk += 16) {
        wmma::fragment<wmma::matrix_a, 16, 16, 16, __nv_bfloat16, wmma::row_major> a;
        wmma::fragment<wmma::matrix_b, 16, 16, 16, __nv_bfloat16, wmma::row_major> b;
        wmma::load_matrix_sync(a, sP + rt * 16 * L::LP + kk, L::LP);
        wmma::load_matrix_sync(b, sV + kk * L::LV + ct * 16, L::LV);
        wmma::mma_sync(acc, a, b, acc);
      }
      wmma::store_matrix_sync(sO + rt * 16 * L::LO + ct * 16, acc, L::LO, wmma::mem_row_major);
    }
    __syncthreads();
  }
  p.Store(sO, L::LO, sM, sL);
}

}  // namespace servesim::calibration::cuda

#endif  // SERVESIM_CALIBRATION_CUDA_FLASH_TILE_CUH_
