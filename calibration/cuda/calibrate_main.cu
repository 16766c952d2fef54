// servesim_calibrate: measures the kernels and collectives DeepSeek-V3.2 runs
// on this GPU and writes the calibration profile (calibration/profile.proto,
// text format) that servesim's cost model reads.
//
//   servesim_calibrate --out PATH.textproto [--quick] [--suites a,b,...]
//
// Suites: copy, ceilings, small, sampler, attention, indexer, gemm, grouped, collectives.
// The profile is rewritten after every suite, so a run cut short keeps what
// it measured.
#include <cublasLt.h>
#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <set>
#include <sstream>
#include <string>

#include "calibration/cuda/suites.h"
#include "calibration/profile_text_writer.h"

#ifdef SERVESIM_HAVE_NCCL
#include <nccl.h>
#endif

namespace sc = servesim::calibration;
namespace scc = servesim::calibration::cuda;

namespace {

bool WriteProfile(const std::string& path, const sc::ProfileRecord& profile) {
  std::ofstream out(path, std::ios::trunc);
  out << sc::ProfileToText(profile);
  out.close();
  if (!out) {
    std::fprintf(stderr, "servesim_calibrate: --out: cannot write %s\n", path.c_str());
    return false;
  }
  return true;
}

std::string Version(int v) { return std::to_string(v / 1000) + "." + std::to_string((v % 1000) / 10); }

int Usage(const char* msg) {
  std::fprintf(stderr,
               "servesim_calibrate: %s\nusage: servesim_calibrate --out PATH.textproto [--quick] "
               "[--suites copy,ceilings,small,sampler,attention,indexer,gemm,grouped,collectives] "
               "[--fp8-per-tensor]\n",
               msg);
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  // Before anything can create an NCCL communicator (device notes: NVLink
  // multicast can take a shared host's GPUs out of service).
  setenv("NCCL_NVLS_ENABLE", "0", 1);
  std::string out_path;
  bool quick = false;
  bool fp8_per_tensor = false;
  std::set<std::string> suites = {"copy", "ceilings", "small", "sampler", "attention", "indexer", "gemm", "grouped",
                                  "collectives"};
  std::string command_line;
  for (int i = 0; i < argc; ++i) command_line += (i ? " " : "") + std::string(argv[i]);
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--out" && i + 1 < argc) {
      out_path = argv[++i];
    } else if (a == "--quick") {
      quick = true;
    } else if (a == "--fp8-per-tensor") {
      fp8_per_tensor = true;
    } else if (a == "--suites" && i + 1 < argc) {
      std::set<std::string> chosen;
      std::stringstream ss(argv[++i]);
      std::string s;
      while (std::getline(ss, s, ',')) {
        if (!suites.count(s)) return Usage(("--suites: unknown suite '" + s + "'").c_str());
        chosen.insert(s);
      }
      suites = chosen;
    } else {
      return Usage(("unknown or incomplete argument '" + a + "'").c_str());
    }
  }
  if (out_path.empty()) return Usage("--out: required");
  const bool text = out_path.size() > 10 && (out_path.rfind(".textproto") == out_path.size() - 10 ||
                                             out_path.rfind(".txtpb") == out_path.size() - 6);
  if (!text) return Usage("--out: must end in .textproto or .txtpb");

  int dev = 0, gpus = 0;
  CUDA_CHECK(cudaGetDeviceCount(&gpus));
  if (gpus < 1) {
    std::fprintf(stderr, "servesim_calibrate: no CUDA device visible\n");
    return 1;
  }
  CUDA_CHECK(cudaSetDevice(dev));
  cudaDeviceProp prop{};
  CUDA_CHECK(cudaGetDeviceProperties(&prop, dev));
  int driver = 0, runtime = 0, sm_clock_khz = 0, mem_clock_khz = 0;
  CUDA_CHECK(cudaDriverGetVersion(&driver));
  CUDA_CHECK(cudaRuntimeGetVersion(&runtime));
  CUDA_CHECK(cudaDeviceGetAttribute(&sm_clock_khz, cudaDevAttrClockRate, dev));
  CUDA_CHECK(cudaDeviceGetAttribute(&mem_clock_khz, cudaDevAttrMemoryClockRate, dev));

  sc::ProfileRecord profile;
  profile.schema_version = 1;
  sc::DeviceRecord& d = profile.device;
  d.name = prop.name;
  d.sm_count = prop.multiProcessorCount;
  d.sm_clock_mhz = sm_clock_khz / 1000;
  d.memory_clock_mhz = mem_clock_khz / 1000;
  d.memory_bytes = static_cast<int64_t>(prop.totalGlobalMem);
  d.l2_bytes = prop.l2CacheSize;
  d.driver = Version(driver);
  d.cuda_runtime = Version(runtime);
  const size_t lt_version = cublasLtGetVersion();
  d.cublas = std::to_string(lt_version / 10000) + "." + std::to_string((lt_version / 100) % 100) + "." +
             std::to_string(lt_version % 100);
#ifdef SERVESIM_HAVE_NCCL
  int nccl_version = 0;
  ncclGetVersion(&nccl_version);
  d.nccl = std::to_string(nccl_version / 10000) + "." + std::to_string((nccl_version / 100) % 100) + "." +
           std::to_string(nccl_version % 100);
#else
  d.nccl = "absent";
#endif
  char when[32];
  const std::time_t now = std::time(nullptr);
  std::strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
  d.measured_at = when;
  d.command_line = command_line;
  d.gpu_count = gpus;
  std::printf("servesim_calibrate: %s, %d SMs, %d MHz, %.1f GiB, L2 %.0f MB, driver %s, runtime %s, cuBLASLt %s, "
              "NCCL %s, %d GPU(s)%s\n",
              d.name.c_str(), d.sm_count, d.sm_clock_mhz, d.memory_bytes / 1073741824.0, d.l2_bytes / 1e6,
              d.driver.c_str(), d.cuda_runtime.c_str(), d.cublas.c_str(), d.nccl.c_str(), gpus,
              quick ? ", --quick" : "");

  scc::Arena arena;
  arena.Init(size_t{24} << 30);
  scc::Recorder rec(&profile);
  scc::Context ctx;
  ctx.arena = &arena;
  ctx.rec = &rec;
  ctx.cfg.quick = quick;
  ctx.cfg.fp8_per_tensor = fp8_per_tensor;
  ctx.cfg.l2_bytes = prop.l2CacheSize;
  CUDA_CHECK(cudaStreamCreateWithFlags(&ctx.stream, cudaStreamNonBlocking));
  CUBLAS_CHECK(cublasLtCreate(&ctx.lt));
  ctx.workspace_bytes = size_t{64} << 20;
  CUDA_CHECK(cudaMalloc(&ctx.workspace, ctx.workspace_bytes));

  auto run = [&](const char* name, auto fn) {
    if (!suites.count(name)) return;
    std::printf("== %s\n", name);
    std::fflush(stdout);
    cudaEvent_t a, b;
    CUDA_CHECK(cudaEventCreate(&a));
    CUDA_CHECK(cudaEventCreate(&b));
    const std::clock_t c0 = std::clock();
    const std::time_t t0 = std::time(nullptr);
    fn();
    CUDA_CHECK(cudaDeviceSynchronize());
    std::printf("== %s done in %lds wall (%.0fs CPU)\n", name, static_cast<long>(std::time(nullptr) - t0),
                double(std::clock() - c0) / CLOCKS_PER_SEC);
    if (!WriteProfile(out_path, profile)) std::exit(1);
    CUDA_CHECK(cudaEventDestroy(a));
    CUDA_CHECK(cudaEventDestroy(b));
  };
  run("copy", [&] { profile.copy_gbps = scc::RunCopySuite(ctx); });
  run("ceilings", [&] { scc::RunGemmCeilings(ctx, &profile.bf16_gemm_tflops, &profile.fp8_gemm_tflops); });
  run("small", [&] { scc::RunSmallOpsSuite(ctx); });
  run("sampler", [&] { scc::RunSamplerSuite(ctx); });
  run("attention", [&] { scc::RunAttentionSuite(ctx); });
  run("indexer", [&] { scc::RunIndexerSuite(ctx); });
  run("gemm", [&] { scc::RunGemmSuite(ctx); });
  run("grouped", [&] { scc::RunGroupedGemmSuite(ctx); });
  run("collectives", [&] { scc::RunCollectivesSuite(ctx); });
  std::printf("ceilings: copy %.0f GB/s, bf16 GEMM %.0f TFLOP/s, fp8 GEMM %.0f TFLOP/s\n", profile.copy_gbps,
              profile.bf16_gemm_tflops, profile.fp8_gemm_tflops);
  std::printf("tables: %zu; correctness failures: %d; profile written to %s\n", profile.tables.size(), ctx.failures,
              out_path.c_str());
  CUBLAS_CHECK(cublasLtDestroy(ctx.lt));
  return ctx.failures == 0 ? 0 : 3;
}
