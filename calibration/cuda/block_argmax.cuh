// Device helpers shared by the sampling and routing kernels: a counter-based
// uniform draw and warp- and block-wide argmax.
#ifndef SERVESIM_CALIBRATION_CUDA_BLOCK_ARGMAX_CUH_
#define SERVESIM_CALIBRATION_CUDA_BLOCK_ARGMAX_CUH_

#include <cstddef>
#include <cstdint>

namespace servesim::calibration::cuda {

// Uniform in (0, 1) from (seed, i): splitmix64, 24 bits.
__device__ __forceinline__ float HashUniform(uint64_t seed, size_t i) {
  uint64_t z = seed * 0x9e3779b97f4a7c15ull + i;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  z ^= z >> 31;
  return ((z >> 40) + 0.5f) * (1.0f / 16777216.0f);
}

// The warp's largest `best` and its index (ties: the smaller index), left in
// every lane. Every lane of the warp must call it.
__device__ __forceinline__ void WarpArgmax(float& best, int& best_i) {
  for (int o = 16; o > 0; o /= 2) {
    const float ob = __shfl_xor_sync(0xffffffffu, best, o);
    const int oi = __shfl_xor_sync(0xffffffffu, best_i, o);
    if (ob > best || (ob == best && oi < best_i)) {
      best = ob;
      best_i = oi;
    }
  }
}

// The index of the block's largest `value` (ties: the smaller index), given
// each thread's own best. Valid in thread 0; every thread must call it.
__device__ __forceinline__ int BlockArgmax(float best, int best_i) {
  __shared__ float sv[32];
  __shared__ int si[32];
  WarpArgmax(best, best_i);
  __syncthreads();
  if (threadIdx.x % 32 == 0) {
    sv[threadIdx.x / 32] = best;
    si[threadIdx.x / 32] = best_i;
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    for (int w = 1; w < blockDim.x / 32; ++w) {
      if (sv[w] > sv[0] || (sv[w] == sv[0] && si[w] < si[0])) {
        sv[0] = sv[w];
        si[0] = si[w];
      }
    }
  }
  return si[0];
}

}  // namespace servesim::calibration::cuda

#endif  // SERVESIM_CALIBRATION_CUDA_BLOCK_ARGMAX_CUH_
