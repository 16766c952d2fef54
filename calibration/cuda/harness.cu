#include "calibration/cuda/harness.h"

#include <cuda_bf16.h>
#include <cuda_fp8.h>

#include <algorithm>
#include <cmath>

namespace servesim::calibration::cuda {
namespace {

// splitmix64: a counter-based generator, so every element is independent of
// launch geometry and the data is the same on every run.
__device__ __forceinline__ uint64_t Mix(uint64_t z) {
  z += 0x9e3779b97f4a7c15ull;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

// Uniform in [-1, -1/64] U [1/64, 1]: never zero (zeros run faster on tensor
// cores and hide unwritten outputs).
__device__ __forceinline__ float SignedNonZero(uint64_t seed, size_t i) {
  const uint64_t r = Mix(seed * 0x100000001b3ull + i);
  const float u = (r >> 40) * (1.0f / 16777216.0f);
  const float mag = 1.0f / 64 + u * (1.0f - 1.0f / 64);
  return (r & 1) ? mag : -mag;
}

__global__ void FillBf16Kernel(__nv_bfloat16* p, size_t n, uint64_t seed, float scale) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
    p[i] = __float2bfloat16(scale * SignedNonZero(seed, i));
  }
}

__global__ void FillFp8Kernel(__nv_fp8_e4m3* p, size_t n, uint64_t seed, float scale) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
    p[i] = __nv_fp8_e4m3(scale * SignedNonZero(seed, i));
  }
}

__global__ void FillF32Kernel(float* p, size_t n, uint64_t seed, float lo, float hi) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
    const float u = 0.5f * (SignedNonZero(seed, i) + 1.0f);
    p[i] = lo + (hi - lo) * u;
  }
}

__global__ void FillI32ModKernel(int32_t* p, size_t n, uint64_t seed, int32_t modulo) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
    p[i] = static_cast<int32_t>(Mix(seed * 0x100000001b3ull + i) % static_cast<uint64_t>(modulo));
  }
}

constexpr int kFillBlocks = 4096;

}  // namespace

void Arena::Init(size_t bytes) {
  CUDA_CHECK(cudaMalloc(&base_, bytes));
  size_ = bytes;
  used_ = 0;
}

void* Arena::Alloc(size_t bytes) {
  const size_t aligned = (bytes + 255) & ~size_t{255};
  if (used_ + aligned > size_) {
    std::fprintf(stderr, "servesim_calibrate: arena exhausted (%zu + %zu > %zu bytes)\n", used_, aligned, size_);
    std::exit(1);
  }
  void* p = base_ + used_;
  used_ += aligned;
  return p;
}

void FillBf16(void* p, size_t n, uint64_t seed, float scale, cudaStream_t s) {
  FillBf16Kernel<<<kFillBlocks, 256, 0, s>>>(static_cast<__nv_bfloat16*>(p), n, seed, scale);
  LAUNCH_CHECK();
}
void FillFp8(void* p, size_t n, uint64_t seed, float scale, cudaStream_t s) {
  FillFp8Kernel<<<kFillBlocks, 256, 0, s>>>(static_cast<__nv_fp8_e4m3*>(p), n, seed, scale);
  LAUNCH_CHECK();
}
void FillF32(void* p, size_t n, uint64_t seed, float lo, float hi, cudaStream_t s) {
  FillF32Kernel<<<kFillBlocks, 256, 0, s>>>(static_cast<float*>(p), n, seed, lo, hi);
  LAUNCH_CHECK();
}
void FillI32Mod(int32_t* p, size_t n, uint64_t seed, int32_t modulo, cudaStream_t s) {
  FillI32ModKernel<<<kFillBlocks, 256, 0, s>>>(p, n, seed, modulo);
  LAUNCH_CHECK();
}

int RotatingSets(size_t set_bytes, const RunConfig& cfg, int max_sets) {
  const double want = 3.0 * static_cast<double>(cfg.l2_bytes);
  const int sets = static_cast<int>(std::ceil(want / std::max<double>(1.0, static_cast<double>(set_bytes))));
  return std::clamp(sets, 1, max_sets);
}

namespace {

cudaGraphExec_t Capture(cudaStream_t stream, const std::function<void(int)>& enqueue, int first, int count) {
  cudaGraph_t graph;
  CUDA_CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
  for (int i = 0; i < count; ++i) enqueue(first + i);
  CUDA_CHECK(cudaStreamEndCapture(stream, &graph));
  cudaGraphExec_t exec;
  CUDA_CHECK(cudaGraphInstantiate(&exec, graph, 0));
  CUDA_CHECK(cudaGraphDestroy(graph));
  return exec;
}

double Percentile(std::vector<double> v, double q) {
  std::sort(v.begin(), v.end());
  const double pos = q * (v.size() - 1);
  const size_t lo = static_cast<size_t>(std::floor(pos));
  const size_t hi = std::min(v.size() - 1, lo + 1);
  return v[lo] + (pos - lo) * (v[hi] - v[lo]);
}

}  // namespace

Stats TimeLaunches(cudaStream_t stream, const std::function<void(int)>& enqueue, const RunConfig& cfg) {
  cudaEvent_t start, stop;
  CUDA_CHECK(cudaEventCreate(&start));
  CUDA_CHECK(cudaEventCreate(&stop));
  // Warm-up outside any graph: module load, cuBLASLt kernel selection.
  for (int i = 0; i < 2; ++i) enqueue(i);
  LAUNCH_CHECK();
  CUDA_CHECK(cudaStreamSynchronize(stream));

  // Estimate one launch's time from a short graph to size the real one.
  constexpr int kProbe = 4;
  cudaGraphExec_t probe = Capture(stream, enqueue, 0, kProbe);
  CUDA_CHECK(cudaGraphLaunch(probe, stream));
  CUDA_CHECK(cudaEventRecord(start, stream));
  CUDA_CHECK(cudaGraphLaunch(probe, stream));
  CUDA_CHECK(cudaEventRecord(stop, stream));
  CUDA_CHECK(cudaEventSynchronize(stop));
  float probe_ms = 0;
  CUDA_CHECK(cudaEventElapsedTime(&probe_ms, start, stop));
  CUDA_CHECK(cudaGraphExecDestroy(probe));
  const double per_launch_us = std::max(1e-3, 1000.0 * probe_ms / kProbe);
  const int inner = std::clamp(static_cast<int>(std::ceil(cfg.replay_target_us / per_launch_us)), 1, 64);

  cudaGraphExec_t exec = Capture(stream, enqueue, 0, inner);
  for (int w = 0; w < 2; ++w) CUDA_CHECK(cudaGraphLaunch(exec, stream));
  std::vector<double> samples;
  samples.reserve(cfg.repeats);
  for (int r = 0; r < cfg.repeats; ++r) {
    CUDA_CHECK(cudaEventRecord(start, stream));
    CUDA_CHECK(cudaGraphLaunch(exec, stream));
    CUDA_CHECK(cudaEventRecord(stop, stream));
    CUDA_CHECK(cudaEventSynchronize(stop));
    float ms = 0;
    CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
    samples.push_back(1000.0 * ms / inner);
  }
  CUDA_CHECK(cudaGraphExecDestroy(exec));
  CUDA_CHECK(cudaEventDestroy(start));
  CUDA_CHECK(cudaEventDestroy(stop));
  Stats st;
  st.median_us = Percentile(samples, 0.5);
  st.p10_us = Percentile(samples, 0.1);
  st.p90_us = Percentile(samples, 0.9);
  st.samples = static_cast<int>(samples.size());
  return st;
}

double RelError(const std::vector<double>& a, const std::vector<double>& b) {
  double num = 0, den = 0;
  for (size_t i = 0; i < a.size() && i < b.size(); ++i) {
    if (!std::isfinite(a[i])) return INFINITY;
    num += (a[i] - b[i]) * (a[i] - b[i]);
    den += b[i] * b[i];
  }
  if (a.size() != b.size()) return INFINITY;
  return std::sqrt(num / std::max(den, 1e-300));
}

int Recorder::Table(const std::string& kind, std::vector<std::pair<std::string, int64_t>> key,
                    const std::string& x_name, const std::string& note) {
  std::sort(key.begin(), key.end());
  auto& tables = profile_->tables;
  for (size_t i = 0; i < tables.size(); ++i) {
    auto k = tables[i].key;
    std::sort(k.begin(), k.end());
    if (tables[i].kind == kind && k == key) return static_cast<int>(i);
  }
  TableRecord t;
  t.kind = kind;
  t.key = std::move(key);
  t.x_name = x_name;
  t.note = note;
  tables.push_back(std::move(t));
  return static_cast<int>(tables.size() - 1);
}

void Recorder::SetNote(int table, const std::string& note) { profile_->tables[table].note = note; }

void Recorder::Add(int table, double x, const Stats& st, double flops, double bytes) {
  PointRecord p;
  p.x = x;
  p.median_us = st.median_us;
  p.p10_us = st.p10_us;
  p.p90_us = st.p90_us;
  p.samples = st.samples;
  p.achieved_tflops = flops > 0 ? flops / (st.median_us * 1e-6) / 1e12 : 0;
  p.achieved_gbps = bytes > 0 ? bytes / (st.median_us * 1e-6) / 1e9 : 0;
  TableRecord& t = profile_->tables[table];
  t.points.push_back(p);
  std::string key;
  for (const auto& [n, v] : t.key) key += " " + n + "=" + std::to_string(v);
  std::printf("  %-20s%-28s x=%-12.6g %10.2f us [p10 %.2f p90 %.2f]  %8.1f TFLOP/s %8.1f GB/s\n", t.kind.c_str(),
              key.c_str(), x, st.median_us, st.p10_us, st.p90_us, p.achieved_tflops, p.achieved_gbps);
  std::fflush(stdout);
}

}  // namespace servesim::calibration::cuda
