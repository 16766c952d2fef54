// GEMM suites: cuBLASLt FP8 (block-scaled where cuBLASLt accepts it on SM90)
// and BF16, per-head batched BF16 for the absorbed MLA projections, MoE
// expert GEMMs as one strided-batched call, and the GEMM ceilings.
#include <cuda_bf16.h>
#include <cuda_fp8.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "calibration/cuda/kernels.h"
#include "calibration/cuda/suites.h"

namespace servesim::calibration::cuda {
namespace {

// FP8 scaling modes, tried in order. cuBLAS is column-major: its "A" is our
// weight W[n,k] (transposed), its "B" our activation X[m,k].
enum class Scaling { kBlock, kVec128, kTensor, kNone };

const char* ScalingName(Scaling s) {
  switch (s) {
    case Scaling::kBlock: return "block (weights BLK128x128_32F, activations VEC128_32F: DeepSeek's)";
    case Scaling::kVec128: return "vec128 (weights and activations VEC128_32F)";
    case Scaling::kTensor: return "per-tensor SCALAR_32F";
    case Scaling::kNone: return "bf16";
  }
  return "?";
}

struct Plan {
  cublasLtMatmulDesc_t op = nullptr;
  cublasLtMatrixLayout_t a = nullptr, b = nullptr, d = nullptr;
  cublasLtMatmulAlgo_t algo{};
};

void Destroy(Plan& p) {
  if (p.op) CUBLAS_CHECK(cublasLtMatmulDescDestroy(p.op));
  if (p.a) CUBLAS_CHECK(cublasLtMatrixLayoutDestroy(p.a));
  if (p.b) CUBLAS_CHECK(cublasLtMatrixLayoutDestroy(p.b));
  if (p.d) CUBLAS_CHECK(cublasLtMatrixLayoutDestroy(p.d));
  p = Plan{};
}

cublasLtMatrixLayout_t Layout(cudaDataType_t t, int64_t rows, int64_t cols, int64_t ld, int batch, int64_t stride) {
  cublasLtMatrixLayout_t l;
  CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&l, t, rows, cols, ld));
  if (batch > 1) {
    CUBLAS_CHECK(cublasLtMatrixLayoutSetAttribute(l, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &batch, sizeof(batch)));
    CUBLAS_CHECK(
        cublasLtMatrixLayoutSetAttribute(l, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &stride, sizeof(stride)));
  }
  return l;
}

// Builds D[n x m] (column-major; = row-major C[m,n]) = W[n,k] . X[m,k]^T.
// Returns false (and leaves nothing allocated) when cuBLASLt offers no
// algorithm for this mode, or a trial run on the given pointers fails.
bool MakePlan(Context& ctx, Scaling sc, int64_t m, int64_t n, int64_t k, int batch, const float* w_scale,
              const float* x_scale, const void* W, const void* X, void* D, Plan* out) {
  const bool fp8 = sc != Scaling::kNone;
  const cudaDataType_t in_t = fp8 ? CUDA_R_8F_E4M3 : CUDA_R_16BF;
  Plan p;
  CUBLAS_CHECK(cublasLtMatmulDescCreate(&p.op, CUBLAS_COMPUTE_32F, CUDA_R_32F));
  const cublasOperation_t ta = CUBLAS_OP_T, tb = CUBLAS_OP_N;
  CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(p.op, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof(ta)));
  CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(p.op, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof(tb)));
  if (fp8) {
    int32_t a_mode = CUBLASLT_MATMUL_MATRIX_SCALE_SCALAR_32F, b_mode = CUBLASLT_MATMUL_MATRIX_SCALE_SCALAR_32F;
    if (sc == Scaling::kBlock) {
      a_mode = CUBLASLT_MATMUL_MATRIX_SCALE_BLK128x128_32F;
      b_mode = CUBLASLT_MATMUL_MATRIX_SCALE_VEC128_32F;
    } else if (sc == Scaling::kVec128) {
      a_mode = b_mode = CUBLASLT_MATMUL_MATRIX_SCALE_VEC128_32F;
    }
    if (sc != Scaling::kTensor) {
      if (cublasLtMatmulDescSetAttribute(p.op, CUBLASLT_MATMUL_DESC_A_SCALE_MODE, &a_mode, sizeof(a_mode)) !=
              CUBLAS_STATUS_SUCCESS ||
          cublasLtMatmulDescSetAttribute(p.op, CUBLASLT_MATMUL_DESC_B_SCALE_MODE, &b_mode, sizeof(b_mode)) !=
              CUBLAS_STATUS_SUCCESS) {
        Destroy(p);
        return false;
      }
    }
    CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(p.op, CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, &w_scale, sizeof(w_scale)));
    CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(p.op, CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, &x_scale, sizeof(x_scale)));
  }
  p.a = Layout(in_t, k, n, k, batch, n * k);
  p.b = Layout(in_t, k, m, k, batch, m * k);
  p.d = Layout(CUDA_R_16BF, n, m, n, batch, m * n);
  cublasLtMatmulPreference_t pref;
  CUBLAS_CHECK(cublasLtMatmulPreferenceCreate(&pref));
  CUBLAS_CHECK(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                                                    &ctx.workspace_bytes, sizeof(ctx.workspace_bytes)));
  cublasLtMatmulHeuristicResult_t result{};
  int found = 0;
  const cublasStatus_t hs =
      cublasLtMatmulAlgoGetHeuristic(ctx.lt, p.op, p.a, p.b, p.d, p.d, pref, 1, &result, &found);
  CUBLAS_CHECK(cublasLtMatmulPreferenceDestroy(pref));
  if (hs != CUBLAS_STATUS_SUCCESS || found == 0) {
    Destroy(p);
    return false;
  }
  p.algo = result.algo;
  const float alpha = 1.0f, beta = 0.0f;
  const cublasStatus_t rs = cublasLtMatmul(ctx.lt, p.op, &alpha, W, p.a, X, p.b, &beta, D, p.d, D, p.d, &p.algo,
                                           ctx.workspace, ctx.workspace_bytes, ctx.stream);
  if (rs != CUBLAS_STATUS_SUCCESS) {
    Destroy(p);
    return false;
  }
  CUDA_CHECK(cudaStreamSynchronize(ctx.stream));
  *out = p;
  return true;
}

void Run(Context& ctx, const Plan& p, const void* W, const void* X, void* D) {
  const float alpha = 1.0f, beta = 0.0f;
  CUBLAS_CHECK(cublasLtMatmul(ctx.lt, p.op, &alpha, W, p.a, X, p.b, &beta, D, p.d, D, p.d, &p.algo, ctx.workspace,
                              ctx.workspace_bytes, ctx.stream));
}

// Device regions shared by the GEMM suites.
struct Regions {
  char* x = nullptr;  // activations
  char* w = nullptr;  // weights
  char* d = nullptr;  // outputs
  float* w_scale = nullptr;
  float* x_scale = nullptr;
  size_t x_bytes = 0, w_bytes = 0, d_bytes = 0;
};

constexpr size_t kScaleFloats = size_t{16} << 20;  // 64 MB of scales covers every shape here.

Regions AllocRegions(Context& ctx, bool fp8) {
  Regions r;
  r.x_bytes = size_t{4} << 30;
  r.w_bytes = size_t{4} << 30;
  r.d_bytes = size_t{9} << 30;
  r.x = static_cast<char*>(ctx.arena->Alloc(r.x_bytes));
  r.w = static_cast<char*>(ctx.arena->Alloc(r.w_bytes));
  r.d = static_cast<char*>(ctx.arena->Alloc(r.d_bytes));
  r.w_scale = static_cast<float*>(ctx.arena->Alloc(kScaleFloats * 4));
  r.x_scale = static_cast<float*>(ctx.arena->Alloc(kScaleFloats * 4));
  if (fp8) {
    FillFp8(r.x, r.x_bytes, 11, 1.0f, ctx.stream);
    FillFp8(r.w, r.w_bytes, 12, 1.0f, ctx.stream);
  } else {
    FillBf16(r.x, r.x_bytes / 2, 11, 1.0f, ctx.stream);
    FillBf16(r.w, r.w_bytes / 2, 12, 1.0f, ctx.stream);
  }
  FillF32(r.w_scale, kScaleFloats, 13, 0.5f, 0.5f, ctx.stream);
  FillF32(r.x_scale, kScaleFloats, 14, 2.0f, 2.0f, ctx.stream);
  CUDA_CHECK(cudaStreamSynchronize(ctx.stream));
  return r;
}

// One measured GEMM point: picks the first scaling mode cuBLASLt accepts,
// rotates buffer sets through the regions, times. Returns the mode used
// (kNone for BF16) through `used`; false when no mode worked.
bool TimeGemm(Context& ctx, const Regions& r, bool fp8, int64_t m, int64_t n, int64_t k, int batch, Stats* st,
              Scaling* used) {
  const size_t es = fp8 ? 1 : 2;
  const size_t xb = static_cast<size_t>(batch) * m * k * es, wb = static_cast<size_t>(batch) * n * k * es,
               db = static_cast<size_t>(batch) * m * n * 2;
  if (xb > r.x_bytes || wb > r.w_bytes || db > r.d_bytes) return false;
  auto align = [](size_t b) { return (b + 255) & ~size_t{255}; };
  int sets = RotatingSets(xb + wb + db, ctx.cfg);
  sets = std::min<int>(sets, static_cast<int>(std::min({r.x_bytes / align(xb), r.w_bytes / align(wb), r.d_bytes / align(db)})));
  sets = std::max(sets, 1);
  const Scaling order_fp8[] = {Scaling::kBlock, Scaling::kVec128, Scaling::kTensor};
  const Scaling order_bf16[] = {Scaling::kNone};
  const Scaling* order = fp8 ? (ctx.cfg.fp8_per_tensor ? order_fp8 + 2 : order_fp8) : order_bf16;
  const int n_modes = fp8 ? (ctx.cfg.fp8_per_tensor ? 1 : 3) : 1;
  for (int i = 0; i < n_modes; ++i) {
    Plan plan;
    if (!MakePlan(ctx, order[i], m, n, k, batch, r.w_scale, r.x_scale, r.w, r.x, r.d, &plan)) continue;
    *st = TimeLaunches(
        ctx.stream,
        [&](int it) {
          const int s = it % sets;
          Run(ctx, plan, r.w + s * align(wb), r.x + s * align(xb), r.d + s * align(db));
        },
        ctx.cfg);
    Destroy(plan);
    *used = order[i];
    return true;
  }
  return false;
}

// Checks one small GEMM against a double-precision CPU product. Scales are
// constants 0.5 (weights) and 2 (activations), so the product is unscaled
// whatever the scale tensor layout.
void CheckGemm(Context& ctx, const Regions& r, bool fp8, int batch) {
  const int64_t m = 96, n = 256, k = 512;
  Scaling used = Scaling::kNone;
  const size_t es = fp8 ? 1 : 2;
  CUDA_CHECK(cudaMemset(r.d, 0xff, batch * m * n * 2));  // poison: NaN in bf16
  Plan plan;
  bool ok = false;
  const Scaling order[] = {Scaling::kBlock, Scaling::kVec128, Scaling::kTensor};
  for (Scaling sc : order) {
    const Scaling mode = fp8 ? sc : Scaling::kNone;
    if (MakePlan(ctx, mode, m, n, k, batch, r.w_scale, r.x_scale, r.w, r.x, r.d, &plan)) {
      ok = true;
      used = mode;
      break;
    }
    if (!fp8) break;
  }
  if (!ok) {
    std::printf("check gemm %s batch %d: no cuBLASLt algorithm\n", fp8 ? "fp8" : "bf16", batch);
    ++ctx.failures;
    return;
  }
  Destroy(plan);
  CUDA_CHECK(cudaStreamSynchronize(ctx.stream));
  std::vector<unsigned char> hw(batch * n * k * es), hx(batch * m * k * es);
  std::vector<__nv_bfloat16> hd(batch * m * n);
  CUDA_CHECK(cudaMemcpy(hw.data(), r.w, hw.size(), cudaMemcpyDeviceToHost));
  CUDA_CHECK(cudaMemcpy(hx.data(), r.x, hx.size(), cudaMemcpyDeviceToHost));
  CUDA_CHECK(cudaMemcpy(hd.data(), r.d, hd.size() * 2, cudaMemcpyDeviceToHost));
  auto val = [&](const std::vector<unsigned char>& v, size_t i) -> double {
    if (fp8) {
      __nv_fp8_e4m3 f;
      f.__x = v[i];
      return static_cast<float>(f);
    }
    __nv_bfloat16 b;
    std::memcpy(&b, &v[2 * i], 2);
    return __bfloat162float(b);
  };
  std::vector<double> got, want;
  for (int bt = 0; bt < batch; ++bt) {
    for (int64_t i = 0; i < m; ++i) {
      for (int64_t j = 0; j < n; ++j) {
        double acc = 0;
        for (int64_t kk = 0; kk < k; ++kk) {
          acc += val(hw, bt * n * k + j * k + kk) * val(hx, bt * m * k + i * k + kk);
        }
        want.push_back(acc);
        got.push_back(__bfloat162float(hd[bt * m * n + i * n + j]));
      }
    }
  }
  const double err = RelError(got, want);
  const bool pass = err < 1e-2;
  if (!pass) ++ctx.failures;
  std::printf("check gemm %s (%s) batch %d m=%lld n=%lld k=%lld: rel err %.3e %s\n", fp8 ? "fp8" : "bf16",
              ScalingName(used), batch, (long long)m, (long long)n, (long long)k, err, pass ? "ok" : "FAIL");
}

// "mode A at m = 1 2 4; mode B at m = 8 16": which points used which scaling.
std::string ModesNote(const std::map<std::string, std::string>& modes, const char* x_name) {
  std::string note;
  for (const auto& [mode, xs] : modes) {
    if (!note.empty()) note += "; ";
    note += mode + (modes.size() > 1 ? std::string(" at ") + x_name + " =" + xs : std::string());
  }
  return note;
}

struct Shape {
  int64_t n, k;
  const char* what;
};

std::vector<int64_t> MGrid(const RunConfig& cfg, int64_t max_m) {
  std::vector<int64_t> ms;
  for (int64_t m = 1; m <= max_m; m *= 2) {
    if (cfg.quick && m != 1 && m != 64 && m != 4096) continue;
    ms.push_back(m);
  }
  return ms;
}

void GemmTables(Context& ctx, const Regions& r, bool fp8, const std::vector<Shape>& shapes, int64_t max_m_default) {
  for (const Shape& s : shapes) {
    const int64_t max_m = (s.n > 60000) ? std::min<int64_t>(8192, max_m_default) : max_m_default;
    const int t = ctx.rec->Table(fp8 ? "gemm_fp8" : "gemm_bf16", {{"n", s.n}, {"k", s.k}}, "m_tokens");
    std::map<std::string, std::string> modes;  // mode -> the m it was used at
    std::string missing;
    for (int64_t m : MGrid(ctx.cfg, max_m)) {
      Stats st;
      Scaling used;
      if (!TimeGemm(ctx, r, fp8, m, s.n, s.k, 1, &st, &used)) {
        missing += " " + std::to_string(m);
        continue;
      }
      modes[ScalingName(used)] += " " + std::to_string(m);
      ctx.rec->Add(t, m, st, 2.0 * m * s.n * s.k, (fp8 ? 1.0 : 2.0) * (m * s.k + s.n * s.k) + 2.0 * m * s.n);
    }
    std::string note = std::string(s.what) + "; cuBLASLt " + (fp8 ? "FP8 e4m3 in, BF16 out, scaling: " : "BF16: ");
    note += ModesNote(modes, "m");
    if (!missing.empty()) note += "; no algorithm at m =" + missing;
    ctx.rec->SetNote(t, note);
  }
}

}  // namespace

void RunGemmCeilings(Context& ctx, double* bf16_tflops, double* fp8_tflops) {
  const int64_t n = 8192;
  const double flops = 2.0 * n * n * n;
  *bf16_tflops = 0;
  *fp8_tflops = 0;
  for (bool fp8 : {false, true}) {
    ctx.arena->Reset();
    Regions r = AllocRegions(ctx, fp8);
    const Scaling modes[] = {Scaling::kTensor, Scaling::kBlock};
    for (Scaling sc : modes) {
      const Scaling mode = fp8 ? sc : Scaling::kNone;
      Plan plan;
      if (!MakePlan(ctx, mode, n, n, n, 1, r.w_scale, r.x_scale, r.w, r.x, r.d, &plan)) {
        std::printf("ceiling gemm %s: no algorithm\n", ScalingName(mode));
        continue;
      }
      const size_t b = static_cast<size_t>(n) * n * (fp8 ? 1 : 2);
      Stats st = TimeLaunches(
          ctx.stream,
          [&](int it) {
            const int s = it % 2;
            Run(ctx, plan, r.w + s * b, r.x + s * b, r.d + s * size_t{n} * n * 2);
          },
          ctx.cfg);
      Destroy(plan);
      const double tf = flops / (st.median_us * 1e-6) / 1e12;
      std::printf("ceiling gemm 8192^3 %s: %.1f us, %.1f TFLOP/s\n", ScalingName(mode), st.median_us, tf);
      double& ceiling = fp8 ? *fp8_tflops : *bf16_tflops;
      ceiling = std::max(ceiling, tf);
      if (!fp8) break;
    }
  }
  ctx.arena->Reset();
}

void RunGemmSuite(Context& ctx) {
  // FP8 layers: every (N, K) of DeepSeek-V3.2 (reference §1) and its TP shards.
  std::vector<Shape> fp8_shapes = {
      {2112, 7168, "fused q_a + kv_a (replicated)"},
      {24576, 1536, "q_b TP1"}, {12288, 1536, "q_b TP2"}, {6144, 1536, "q_b TP4"}, {3072, 1536, "q_b TP8"},
      {32768, 512, "kv_b TP1 (MHA-mode prefill)"}, {16384, 512, "kv_b TP2"}, {8192, 512, "kv_b TP4"},
      {4096, 512, "kv_b TP8"},
      {8192, 1536, "indexer wq_b"}, {128, 7168, "indexer wk"},
      {7168, 16384, "o_proj TP1"}, {7168, 8192, "o_proj TP2"}, {7168, 4096, "o_proj TP4"},
      {7168, 2048, "o_proj TP8 / expert down"},
      {36864, 7168, "dense gate+up TP1"}, {18432, 7168, "dense gate+up TP2"}, {9216, 7168, "dense gate+up TP4"},
      {4608, 7168, "dense gate+up TP8"},
      {7168, 18432, "dense down TP1"}, {7168, 9216, "dense down TP2"}, {7168, 4608, "dense down TP4"},
      {7168, 2304, "dense down TP8"},
      {4096, 7168, "shared expert gate+up TP1 / expert gate+up"}, {2048, 7168, "shared expert gate+up TP2"},
      {1024, 7168, "shared expert gate+up TP4"}, {512, 7168, "shared expert gate+up TP8"},
      {7168, 1024, "shared expert down TP2"}, {7168, 512, "shared expert down TP4"},
      {7168, 256, "shared expert down TP8"},
  };
  std::vector<Shape> bf16_shapes = {
      {64, 7168, "indexer weights_proj"}, {256, 7168, "router gate"},
      {129280, 7168, "LM head TP1"}, {64640, 7168, "LM head TP2"}, {32320, 7168, "LM head TP4"},
      {16160, 7168, "LM head TP8"},
  };
  if (ctx.cfg.quick) {
    fp8_shapes = {fp8_shapes[0], fp8_shapes[14]};
    bf16_shapes = {bf16_shapes[1]};
  }
  ctx.arena->Reset();
  {
    Regions r = AllocRegions(ctx, true);
    CheckGemm(ctx, r, true, 1);
    CheckGemm(ctx, r, true, 4);
    GemmTables(ctx, r, true, fp8_shapes, 32768);
  }
  ctx.arena->Reset();
  {
    Regions r = AllocRegions(ctx, false);
    CheckGemm(ctx, r, false, 1);
    GemmTables(ctx, r, false, bf16_shapes, 32768);
    // Absorbed MLA per-head projections: q_nope . W_UK (128 -> 512) and
    // o_latent . W_UV (512 -> 128), one strided-batched call over heads.
    const int head_counts[] = {128, 64, 32, 16};
    for (int heads : head_counts) {
      if (ctx.cfg.quick && heads != 128) continue;
      for (auto [n, k] : {std::pair<int64_t, int64_t>{512, 128}, {128, 512}}) {
        const int t = ctx.rec->Table("batched_gemm_bf16", {{"batch", heads}, {"n", n}, {"k", k}}, "m_tokens",
                                     n == 512 ? "absorbed W_UK per head (q_nope 128 -> latent 512), cuBLASLt "
                                                "strided-batched BF16, batch = heads"
                                              : "absorbed W_UV per head (latent 512 -> v 128), cuBLASLt "
                                                "strided-batched BF16, batch = heads");
        for (int64_t m : MGrid(ctx.cfg, 16384)) {
          Stats st;
          Scaling used;
          if (!TimeGemm(ctx, r, false, m, n, k, heads, &st, &used)) continue;
          ctx.rec->Add(t, m, st, 2.0 * heads * m * n * k, 2.0 * heads * (m * k + n * k + m * n));
        }
      }
    }
  }
  ctx.arena->Reset();
}

void RunGroupedGemmSuite(Context& ctx) {
  ctx.arena->Reset();
  Regions r = AllocRegions(ctx, true);
  struct G {
    int experts;
    int64_t n, k;
    const char* what;
  };
  const G groups[] = {{32, 4096, 7168, "EP8: 32 local experts, gate+up"},
                      {32, 7168, 2048, "EP8: 32 local experts, down"},
                      {256, 512, 7168, "TP8: 256 experts at 1/8 width, gate+up"},
                      {256, 7168, 256, "TP8: 256 experts at 1/8 width, down"}};
  for (const G& g : groups) {
    const int t = ctx.rec->Table("grouped_gemm_fp8", {{"experts", g.experts}, {"n", g.n}, {"k", g.k}},
                                 "total_routed_tokens");
    std::map<std::string, std::string> modes;
    for (int64_t x = 8; x <= 65536; x *= 2) {
      if (ctx.cfg.quick && x != 8 && x != 4096) continue;
      // Uniform routing: min(experts, x) active experts with ceil(x / active)
      // tokens each, as one strided-batched cuBLASLt call (a masked grouped
      // GEMM pads every group to the largest the same way).
      const int batch = static_cast<int>(std::min<int64_t>(g.experts, x));
      const int64_t m = (x + batch - 1) / batch;
      Stats st;
      Scaling used;
      if (!TimeGemm(ctx, r, true, m, g.n, g.k, batch, &st, &used)) continue;
      modes[ScalingName(used)] += " " + std::to_string(x);
      ctx.rec->Add(t, x, st, 2.0 * x * g.n * g.k, 1.0 * batch * (m * g.k + g.n * g.k) + 2.0 * batch * m * g.n);
    }
    std::string note = std::string(g.what) +
                       "; one cuBLASLt strided-batched FP8 matmul, batch = active experts = min(experts, x), "
                       "m = ceil(x / batch) per expert (uniform routing); scaling: ";
    note += ModesNote(modes, "x");
    ctx.rec->SetNote(t, note);
  }
  ctx.arena->Reset();
}


// Exported launch functions (kernels.h).
struct GemmPlanHandle {
  Plan plan;
};

GemmPlanHandle* CreateGemmPlan(Context& ctx, bool fp8, int64_t m, int64_t n, int64_t k, int batch,
                               const float* w_scale, const float* x_scale, const void* W, const void* X, void* D,
                               std::string* mode) {
  const Scaling order_fp8[] = {Scaling::kBlock, Scaling::kVec128, Scaling::kTensor};
  const Scaling order_bf16[] = {Scaling::kNone};
  // As the tables: --fp8-per-tensor takes per-tensor scaling alone.
  const Scaling* order = fp8 ? (ctx.cfg.fp8_per_tensor ? order_fp8 + 2 : order_fp8) : order_bf16;
  const int n_modes = fp8 ? (ctx.cfg.fp8_per_tensor ? 1 : 3) : 1;
  for (int i = 0; i < n_modes; ++i) {
    Plan p;
    if (!MakePlan(ctx, order[i], m, n, k, batch, w_scale, x_scale, W, X, D, &p)) continue;
    if (mode) *mode = ScalingName(order[i]);
    return new GemmPlanHandle{p};
  }
  return nullptr;
}

void EnqueueGemm(Context& ctx, const GemmPlanHandle* plan, const void* W, const void* X, void* D) {
  Run(ctx, plan->plan, W, X, D);
}

void DestroyGemmPlan(GemmPlanHandle* plan) {
  if (!plan) return;
  Destroy(plan->plan);
  delete plan;
}

}  // namespace servesim::calibration::cuda
