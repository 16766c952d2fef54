// Measurement harness of the calibration program: checked CUDA calls, random
// device data, a memory arena with rotating buffer sets, graph-replay timing
// with percentiles, and the profile being recorded.
#ifndef SERVESIM_CALIBRATION_CUDA_HARNESS_H_
#define SERVESIM_CALIBRATION_CUDA_HARNESS_H_

#include <cuda_runtime.h>
#include <cublasLt.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

#include "calibration/profile_text_writer.h"

// Every CUDA / cuBLAS call is checked; a failure is fatal with its location
// (a sticky CUDA error poisons every later measurement).
#define CUDA_CHECK(expr)                                                                    \
  do {                                                                                      \
    cudaError_t servesim_e_ = (expr);                                                       \
    if (servesim_e_ != cudaSuccess) {                                                       \
      std::fprintf(stderr, "servesim_calibrate: %s:%d: %s failed: %s\n", __FILE__, __LINE__, \
                   #expr, cudaGetErrorString(servesim_e_));                                 \
      std::exit(1);                                                                         \
    }                                                                                       \
  } while (0)

#define CUBLAS_CHECK(expr)                                                                  \
  do {                                                                                      \
    cublasStatus_t servesim_s_ = (expr);                                                    \
    if (servesim_s_ != CUBLAS_STATUS_SUCCESS) {                                             \
      std::fprintf(stderr, "servesim_calibrate: %s:%d: %s failed: cublas status %d\n",      \
                   __FILE__, __LINE__, #expr, static_cast<int>(servesim_s_));               \
      std::exit(1);                                                                         \
    }                                                                                       \
  } while (0)

#define LAUNCH_CHECK() CUDA_CHECK(cudaGetLastError())

namespace servesim::calibration::cuda {

struct Stats {
  double median_us = 0;
  double p10_us = 0;
  double p90_us = 0;
  int samples = 0;
};

// Global run settings.
struct RunConfig {
  bool quick = false;
  int repeats = 25;           // timed graph replays per point (>= 20)
  double replay_target_us = 200;  // each replay holds enough launches to last about this long
  int64_t l2_bytes = 60 << 20;
  // Time every FP8 GEMM with per-tensor scaling (SCALAR_32F), not DeepSeek's
  // block scaling where cuBLASLt offers it (single GEMMs at m >= 4; the
  // batched ones of the grouped tables get none and are per-tensor anyway):
  // one kernel family at every m, as the engines' DeepGEMM is
  // (docs/calibration.md).
  bool fp8_per_tensor = false;
};

// Bump allocator over one cudaMalloc; sub-allocations are 256-byte aligned.
class Arena {
 public:
  void Init(size_t bytes);
  void* Alloc(size_t bytes);
  void Reset() { used_ = 0; }
  size_t Free() const { return size_ - used_; }

 private:
  char* base_ = nullptr;
  size_t size_ = 0;
  size_t used_ = 0;
};

// Random non-zero values, deterministic in `seed`.
void FillBf16(void* p, size_t n, uint64_t seed, float scale, cudaStream_t s);
void FillFp8(void* p, size_t n, uint64_t seed, float scale, cudaStream_t s);
void FillF32(void* p, size_t n, uint64_t seed, float lo, float hi, cudaStream_t s);
void FillI32Mod(int32_t* p, size_t n, uint64_t seed, int32_t modulo, cudaStream_t s);

// Blocks for a grid-stride loop over `work` items, `per_block` per block:
// enough to cover the work, at most 16 per SM of the H200's 132.
inline int Grid(size_t work, int per_block) {
  return static_cast<int>(std::min<size_t>((work + per_block - 1) / per_block, 132 * 16));
}

// How many rotating copies of a working set of `set_bytes` keep the total
// above three L2 sizes (capped at `max_sets`).
int RotatingSets(size_t set_bytes, const RunConfig& cfg, int max_sets = 32);

// Times `enqueue(i)`, which enqueues one launch on `stream` using rotating
// buffer set i. Launches are captured back to back into a CUDA graph (so
// launch latency stays out); each replay is one sample of (replay time /
// launches in it). Warm-up replays come first. Returns percentiles.
Stats TimeLaunches(cudaStream_t stream, const std::function<void(int)>& enqueue, const RunConfig& cfg);

// Relative L2 error ||a - b|| / ||b||.
double RelError(const std::vector<double>& a, const std::vector<double>& b);

// Collects tables; prints each point as it is measured.
class Recorder {
 public:
  explicit Recorder(ProfileRecord* profile) : profile_(profile) {}
  // Starts (or continues) the table (kind, key); returns its index.
  int Table(const std::string& kind, std::vector<std::pair<std::string, int64_t>> key, const std::string& x_name,
            const std::string& note = "");
  void SetNote(int table, const std::string& note);
  // Adds a point; `flops` and `bytes` are the useful work (0 when unknown).
  void Add(int table, double x, const Stats& st, double flops, double bytes);
  ProfileRecord* profile() { return profile_; }

 private:
  ProfileRecord* profile_;
};

}  // namespace servesim::calibration::cuda

#endif  // SERVESIM_CALIBRATION_CUDA_HARNESS_H_
