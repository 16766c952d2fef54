// Device helpers shared by servesim's calibration kernels for FP8 data.
#ifndef SERVESIM_CALIBRATION_CUDA_FP8_CONVERT_CUH_
#define SERVESIM_CALIBRATION_CUDA_FP8_CONVERT_CUH_

#include <cuda_bf16.h>
#include <cuda_fp8.h>

namespace servesim::calibration::cuda {

// 16 E4M3 values (one 16-byte load) to 16 BF16 values times `scale`, stored
// as two 16-byte writes at `dst` (16-byte aligned).
__device__ __forceinline__ void Fp8x16ToBf16(const uint4& raw, __nv_bfloat16* dst, float scale) {
  const __nv_fp8x2_e4m3* pairs = reinterpret_cast<const __nv_fp8x2_e4m3*>(&raw);
  __align__(16) __nv_bfloat162 vals[8];
#pragma unroll
  for (int j = 0; j < 8; ++j) {
    const float2 f = static_cast<float2>(pairs[j]);
    vals[j] = __floats2bfloat162_rn(f.x * scale, f.y * scale);
  }
  reinterpret_cast<uint4*>(dst)[0] = reinterpret_cast<const uint4*>(vals)[0];
  reinterpret_cast<uint4*>(dst)[1] = reinterpret_cast<const uint4*>(vals)[1];
}

}  // namespace servesim::calibration::cuda

#endif  // SERVESIM_CALIBRATION_CUDA_FP8_CONVERT_CUH_
