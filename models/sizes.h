// Element sizes and integer helpers shared by the model's byte counts (weights,
// KV, activations, op-graph traffic), so every file counts bytes the same way.
#ifndef SERVESIM_MODELS_SIZES_H_
#define SERVESIM_MODELS_SIZES_H_

#include <cstdint>

namespace servesim::models {

inline constexpr int64_t kBf16Bytes = 2;
inline constexpr int64_t kFp32Bytes = 4;
// DeepGEMM / vLLM quantise activations per 1x128 group with an FP32 scale, and
// DeepEP's FP8 dispatch does the same (model-and-kernels.md §1, §3).
inline constexpr int64_t kActivationQuantGroup = 128;

inline constexpr int64_t CeilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }
inline constexpr int64_t RoundUp(int64_t a, int64_t m) { return CeilDiv(a, m) * m; }

}  // namespace servesim::models

#endif  // SERVESIM_MODELS_SIZES_H_
