// servesim_iteration: the forward pass one GPU runs in one iteration of
// DeepSeek-V3.2 (vLLM v0.13 TP8 or DP8+EP8 rank), composed from the
// calibration's own kernels (kernels.h) with random FP8/BF16 weights of the
// true per-GPU shapes, captured in one CUDA graph and timed by graph replay.
//
//   servesim_iteration --csv PATH [--layouts tp8,dp8ep8] [--budget-s S] [--quick]
//                      [--breakdown] [--fp8-per-tensor] [--only BATCH]
//   servesim_iteration --list-ops [--layouts ...] [--quick] [--only BATCH]
//
// The op list mirrors servesim's op graph (models/op_graph.cc) for the same
// batch as calibration/compare_iterations.sh prices it (`servesim explain
// --no-production-factors --collectives-as-copies` on vLLM): every op under
// the op graph's name and kind, in its order, so that measured iteration time
// and the predicted per-op sum compare op for op, and --breakdown (or
// --list-ops, which times nothing) lines up with explain's table. That
// prediction composes servesim's own kernels: sparse MLA walks each row's
// real keys (at most the index top-k), decode rows and prefill rows in
// kernels of their own, and every vLLM v0.13 prefill takes the sparse path.
//
// Stand-ins, by design, each the one servesim prices the op by:
// - collectives are device-to-device copies of the bytes the op graph
//   assigns them (one GPU, no NCCL peers; explain --collectives-as-copies);
// - the FP8 activation quantization before each FP8 GEMM (act_quant_fp8) and
//   the top-k expert reduce (moe_topk_reduce) are device-to-device copies of
//   the op's x bytes, (read + written) / 2: the copy_d2d table prices them
//   (docs/profile-tables.md, "Stand-ins"), and servesim has no kernel of its
//   own for either;
// - GEMM inputs are resident random buffers: activations do not flow from op
//   to op.
#include <cublasLt.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "calibration/cuda/kernels.h"
#include "calibration/cuda/suites.h"
#include "models/attention_keys.h"  // the key counts the op graph prices
#include "models/op.h"              // ExpectedExpertsTouched

namespace servesim::calibration::cuda {
namespace {

using models::CappedPairs;
using models::CausalPairs;
using models::ExpectedExpertsTouched;
using models::KeysOfRowsLongerThan;

// DeepSeek-V3.2 dimensions (models/deepseek_v32.textproto; reference
// model-and-kernels.md §1).
constexpr int64_t kHidden = 7168, kQLora = 1536, kKvLora = 512, kRope = 64, kNope = 128, kVHead = 128;
constexpr int64_t kLatent = kKvLora + kRope;  // 576
constexpr int64_t kIdxHeads = 64, kIdxDim = 128, kIndexTopK = 2048;
constexpr int64_t kExperts = 256, kExpertsPerToken = 8, kExpertInter = 2048, kDenseInter = 18432;
constexpr int64_t kVocab = 129280;
constexpr int kLayers = 61, kDenseLayers = 3;
constexpr int64_t kMlaDecodePoolEntries = int64_t{1} << 21;  // as the attention suite: 2M entries
// DeepSeek's 1x128 activation scaling: one fp32 scale per 128 FP8 values
// (models/sizes.h kActivationQuantGroup).
constexpr int64_t kQuantGroup = 128;
// The decode indexer's FP32 logits are max_model_len wide per row in vLLM
// v0.13 (cleaned to -inf past each row's keys): the --max-model-len that
// calibration/compare_iterations.sh serves both layouts with.
constexpr int64_t kMaxModelLen = 65536;
// DeepSeek-V3.2's generation_config.json, which vLLM applies to requests
// that set no top_p: the sampler sorts every row (the sampling_top_p table).
constexpr float kTopP = 0.95f;
// The sparse MLA kernel walks its keys in tiles of this many
// (attention_bench.cu MlaProblem::kKeyTile); a partial tile costs a whole one.
constexpr int64_t kMlaKeyTile = 64;

int64_t CeilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }
int64_t RoundUp(int64_t a, int64_t m) { return CeilDiv(a, m) * m; }
// The multiple of m nearest to v.
int64_t NearestMultiple(double v, int64_t m) { return std::llround(v / static_cast<double>(m)) * m; }

// One GPU's share of the model under a vLLM layout (models/parallel_layout.cc,
// VllmLayout): TP8 shards heads, experts by width and the dense/shared FFN;
// DP8+EP8 keeps attention and dense whole and holds 32 of 256 experts.
struct Layout {
  std::string name;
  int attn_tp, dp, moe_ep;
  int64_t heads, sparse_heads;  // per GPU; sparse MLA pads to 64 (FlashMLA h_q)
  int64_t local_experts, expert_w, shared_w, dense_w, lm_n;
};

Layout Tp8() { return {"tp8", 8, 1, 1, 16, 64, 256, kExpertInter / 8, kExpertInter / 8, kDenseInter / 8, kVocab / 8}; }
Layout Dp8Ep8() { return {"dp8ep8", 1, 8, 8, 128, 128, 32, kExpertInter, kExpertInter, kDenseInter, kVocab}; }

// One rank's batch: decode_seqs decodes at `context` cached tokens each, plus
// (prefill_tokens > 0) one fresh prompt chunk.
struct Batch {
  int64_t decode_seqs = 0, context = 0, prefill_tokens = 0;
  std::string Name() const {
    std::string s;
    if (decode_seqs > 0) s = "decode_b" + std::to_string(decode_seqs) + "_c" + std::to_string(context);
    if (prefill_tokens > 0) s += (s.empty() ? "" : "+") + std::string("prefill_") + std::to_string(prefill_tokens);
    return s;
  }
};

// kNone: written by a kernel before anything reads it (outputs, scratch), or
// read by a copy, which moves the same bytes whatever they hold. kLogits:
// BF16 logits as the sampler suite draws them (scale 4).
enum class Fill { kNone, kFp8, kBf16, kF32, kScaleW, kScaleX, kIdx, kLogits };

// Named device buffers. Pass 1 (sizing) records the largest request per name;
// pass 2 hands out pointers into one allocation per name. A rotating buffer
// holds `slots` copies and is addressed by layer, so each layer reads memory
// the previous layers did not (as 61 separate layers do): slots = 61 when 61
// copies fit in the budget, else at least 2 (each > L2 then).
struct Rot {
  char* base = nullptr;
  size_t stride = 0;
  int slots = 1;
  char* at(int layer) const { return base + static_cast<size_t>(layer % slots) * stride; }
};

class Registry {
 public:
  bool sizing = true;
  Rot Get(const std::string& name, size_t bytes, Fill fill, int max_slots = 1, size_t budget = 0,
          int32_t idx_mod = 1) {
    const size_t stride = (std::max<size_t>(bytes, 1) + 255) & ~size_t{255};
    int slots = 1;
    if (max_slots > 1) {
      slots = static_cast<int>(std::clamp<size_t>(budget / stride, 2, static_cast<size_t>(max_slots)));
    }
    if (sizing) {
      Entry& e = entries_[name];
      e.bytes = std::max(e.bytes, stride * slots);
      e.fill = fill;
      e.idx_mod = idx_mod;
      return Rot{nullptr, stride, slots};
    }
    const Entry& e = entries_.at(name);
    if (stride * slots > e.bytes) {
      std::fprintf(stderr, "servesim_iteration: buffer %s: %zu > sized %zu bytes\n", name.c_str(), stride * slots,
                   e.bytes);
      std::exit(1);
    }
    return Rot{e.ptr, stride, slots};
  }
  // Allocates and fills every buffer; returns the bytes.
  size_t Allocate(cudaStream_t s) {
    size_t total = 0;
    uint64_t seed = 1;
    for (auto& [name, e] : entries_) {
      CUDA_CHECK(cudaMalloc(&e.ptr, e.bytes));
      total += e.bytes;
      switch (e.fill) {
        case Fill::kNone: break;
        case Fill::kFp8: FillFp8(e.ptr, e.bytes, seed, 1.0f, s); break;
        case Fill::kBf16: FillBf16(e.ptr, e.bytes / 2, seed, 1.0f, s); break;
        case Fill::kF32: FillF32(reinterpret_cast<float*>(e.ptr), e.bytes / 4, seed, -1.0f, 1.0f, s); break;
        case Fill::kScaleW: FillF32(reinterpret_cast<float*>(e.ptr), e.bytes / 4, seed, 0.5f, 0.5f, s); break;
        case Fill::kScaleX: FillF32(reinterpret_cast<float*>(e.ptr), e.bytes / 4, seed, 2.0f, 2.0f, s); break;
        case Fill::kIdx: FillI32Mod(reinterpret_cast<int32_t*>(e.ptr), e.bytes / 4, seed, e.idx_mod, s); break;
        case Fill::kLogits: FillBf16(e.ptr, e.bytes / 2, seed, 4.0f, s); break;
      }
      ++seed;
    }
    CUDA_CHECK(cudaStreamSynchronize(s));
    sizing = false;
    return total;
  }
  void Free() {
    for (auto& [name, e] : entries_) {
      if (e.ptr) CUDA_CHECK(cudaFree(e.ptr));
    }
    entries_.clear();
    sizing = true;
  }

 private:
  struct Entry {
    size_t bytes = 0;
    Fill fill = Fill::kBf16;
    int32_t idx_mod = 1;
    char* ptr = nullptr;
  };
  std::map<std::string, Entry> entries_;
};

// cuBLASLt plans by shape; created on first (eager) use, reused in capture.
class Plans {
 public:
  explicit Plans(Context* ctx) : ctx_(ctx) {}
  ~Plans() {
    for (auto& [k, p] : plans_) DestroyGemmPlan(p);
  }
  void Gemm(bool fp8, int64_t m, int64_t n, int64_t k, int batch, const float* ws, const float* xs, const void* W,
            const void* X, void* D) {
    const auto key = std::make_tuple(fp8, m, n, k, batch);
    auto it = plans_.find(key);
    if (it == plans_.end()) {
      std::string mode;
      GemmPlanHandle* p = CreateGemmPlan(*ctx_, fp8, m, n, k, batch, ws, xs, W, X, D, &mode);
      if (!p) {
        std::fprintf(stderr, "servesim_iteration: no cuBLASLt algorithm for %s m=%lld n=%lld k=%lld batch=%d\n",
                     fp8 ? "fp8" : "bf16", (long long)m, (long long)n, (long long)k, batch);
        std::exit(1);
      }
      it = plans_.emplace(key, p).first;
    }
    EnqueueGemm(*ctx_, it->second, W, X, D);
  }

 private:
  Context* ctx_;
  std::map<std::tuple<bool, int64_t, int64_t, int64_t, int>, GemmPlanHandle*> plans_;
};

// One op of a layer template: servesim's op name and profile kind, the op's
// x (the profile table's key: rows, keys, pairs, bytes) as this bench runs
// it, and its enqueue at a layer.
struct OpStep {
  std::string name, kind;
  double x = 0;
  std::function<void(int layer)> enqueue;
};

// The iteration as servesim's op graph orders it: `pre` once, `attn` in every
// layer, followed by `dense` (3 layers) or `moe` (58 layers), then `head`.
struct Iteration {
  std::vector<OpStep> pre, attn, dense, moe, head;
  // Run once, eagerly, before the first enqueue: the batch's own index
  // patterns and constants, written into buffers that every batch of the
  // layout shares (sized for the largest).
  std::vector<std::function<void()>> setup;
  const int64_t* sampled = nullptr;  // the sampler's token ids, one per sampled row
  int64_t sampled_rows = 0;
  void Enqueue() const {
    for (const auto& o : pre) o.enqueue(0);
    for (int l = 0; l < kLayers; ++l) {
      for (const auto& o : attn) o.enqueue(l);
      for (const auto& o : (l < kDenseLayers ? dense : moe)) o.enqueue(l);
    }
    for (const auto& o : head) o.enqueue(0);
  }
};

constexpr size_t kWeightBudget = size_t{1200} << 20;  // per rotating weight buffer
constexpr size_t kCacheBudget = size_t{3} << 30;      // per rotating KV/index buffer
constexpr size_t kScaleFloats = size_t{16} << 20;

// Builds the op list of `b` on layout `L`, op for op as models/op_graph.cc
// builds vLLM's (SummarizeBatch, Builder) for compare_iterations.sh's
// explain: the ops, their names, kinds and order, and the work each runs
// (OpStep::x). In the sizing pass the pointers are null and only sizes are
// recorded.
Iteration Build(const Layout& L, const Batch& b, Registry& R, Plans& plans, Context& ctx) {
  Iteration it;
  cudaStream_t s = ctx.stream;
  const int64_t N = b.decode_seqs, C = b.context, P = b.prefill_tokens;
  const int64_t t = N + P;
  const int64_t rows = N + (P > 0 ? 1 : 0);  // LM-head and sampled rows: one per sequence
  // Decode rows. A decode at context C scores C + 1 keys (its own token's
  // too). The indexer scores rows of C + 1 rounded up to 4 keys, so that
  // every fp32 score row starts 16-byte aligned for the top-k kernel's float4
  // loads: at most 3 keys a row more than servesim counts.
  const int64_t dec_keys = C + 1;
  const int64_t dec_row = RoundUp(dec_keys, 4);
  // Only a row with more keys than the index top-k runs a selection
  // (KeysOfRowsLongerThan); a shorter row attends every key it has.
  const bool dec_select = N > 0 && dec_keys > kIndexTopK;
  // Sparse MLA decode walks each row's keys, at most the top-k: what explain
  // --no-production-factors charges for servesim's own kernel (FlashMLA's
  // walk of the whole top-k, -1 slots masked, is the production path, off in
  // that comparison). The calibrated kernel loads every index it is given
  // (it has no -1 mask), so its index rows hold only real keys.
  const int64_t dec_attended = std::min(dec_keys, kIndexTopK);
  // The prefill: one fresh prompt (context 0), row i scoring i + 1 keys.
  // vLLM v0.13 sends every prefill through the indexer, the top-k and sparse
  // MLA (no dense-MHA path: sim/runner/vllm_engine_setup.cc sets
  // dense_mha_prefill_max_tokens 0). The top-k kernel takes one length for
  // all its rows, so the prompt's rows past the top-k (keys 2049..P) run at
  // their mean length, a multiple of 4 as above: the keys servesim counts.
  const int64_t pre_sel_rows = std::max<int64_t>(0, P - kIndexTopK);
  const int64_t pre_sel_row =
      pre_sel_rows > 0
          ? std::max(RoundUp(kIndexTopK + 1, 4),
                     NearestMultiple(double(KeysOfRowsLongerThan(P, 0, kIndexTopK)) / double(pre_sel_rows), 4))
          : 0;
  // The sparse MLA kernel, too, walks one key count for every row: the
  // prompt's pairs capped at the top-k per row (CappedPairs: row i walks
  // min(i + 1, 2048)) spread evenly over its rows, in whole key tiles.
  const int64_t pre_attended =
      P > 0 ? std::clamp(NearestMultiple(double(CappedPairs(P, 0, kIndexTopK)) / double(P), kMlaKeyTile),
                         kMlaKeyTile, kIndexTopK)
            : 0;
  // vLLM pads every DP rank's MoE tokens to the largest rank's (this one).
  const int64_t moe_tokens = t * L.dp;
  const int64_t pairs = moe_tokens * kExpertsPerToken / L.moe_ep;
  const int64_t heads = L.heads;
  const float* ws = reinterpret_cast<const float*>(R.Get("scale_w", kScaleFloats * 4, Fill::kScaleW).base);
  const float* xs = reinterpret_cast<const float*>(R.Get("scale_x", kScaleFloats * 4, Fill::kScaleX).base);

  // Generic activations: GEMM inputs (FP8 or BF16), GEMM outputs (BF16).
  auto act8 = [&](size_t bytes) { return R.Get("act_fp8", bytes, Fill::kFp8).base; };
  auto act16 = [&](size_t bytes) { return R.Get("act_bf16", bytes, Fill::kBf16).base; };
  auto out16 = [&](size_t bytes) { return R.Get("gemm_out", bytes, Fill::kNone).base; };
  // A device-to-device copy of `bytes`: a collective's bytes (comm_bytes), or
  // a memory-bound pass's x = (read + written) / 2; the copy_d2d table prices
  // both.
  auto copy = [&](std::vector<OpStep>& ops, const std::string& name, const std::string& kind, size_t bytes) {
    if (bytes == 0) return;
    char* src = R.Get("copy_src", bytes, Fill::kNone).base;
    char* dst = R.Get("copy_dst", bytes, Fill::kNone).base;
    ops.push_back({name, kind, static_cast<double>(bytes),
                   [=](int) { CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, s)); }});
  };
  // The quantization of an FP8 GEMM's [m, k] BF16 input, a pass of its own
  // before the GEMM (op_graph.cc ActivationQuant): BF16 values read, FP8
  // values and one fp32 scale per 128 written.
  auto act_quant = [&](std::vector<OpStep>& ops, const std::string& gemm_name, int64_t m, int64_t k) {
    const int64_t values = m * k, scales = m * CeilDiv(k, kQuantGroup) * 4;
    copy(ops, gemm_name + "_act_quant", "act_quant_fp8", static_cast<size_t>((2 * values + values + scales) / 2));
  };
  // One cuBLASLt matmul of `batch` [m, k] x [k, n] products (strided-batched
  // when batch > 1); x is the op's table x.
  auto matmul = [&](std::vector<OpStep>& ops, const std::string& name, const std::string& kind, bool fp8, int64_t m,
                    int64_t n, int64_t k, int batch, const std::string& wname, int layers_of_kind, double x) {
    const size_t es = fp8 ? 1 : 2;
    Rot w = R.Get(wname, size_t(batch) * n * k * es, fp8 ? Fill::kFp8 : Fill::kBf16, layers_of_kind, kWeightBudget);
    char* in = fp8 ? act8(size_t(batch) * m * k) : act16(size_t(batch) * m * k * 2);
    char* d = out16(size_t(batch) * m * n * 2);
    Plans* pl = &plans;
    ops.push_back({name, kind, x, [=](int l) { pl->Gemm(fp8, m, n, k, batch, ws, xs, w.at(l), in, d); }});
  };
  // A linear layer: FP8, its input quantized first, or BF16 where the
  // checkpoint leaves the weight unquantized.
  auto gemm = [&](std::vector<OpStep>& ops, const std::string& name, bool fp8, int64_t m, int64_t n, int64_t k,
                  const std::string& wname, int layers_of_kind) {
    if (m <= 0) return;
    if (fp8) act_quant(ops, name, m, k);
    matmul(ops, name, fp8 ? "gemm_fp8" : "gemm_bf16", fp8, m, n, k, 1, wname, layers_of_kind, double(m));
  };
  // Per-head batched BF16 GEMMs of MLA's weight absorption (torch.bmm in
  // vLLM, W_UK / W_UV kept in BF16).
  auto bmm = [&](std::vector<OpStep>& ops, const std::string& name, int64_t m, int64_t n, int64_t k,
                 const std::string& wname) {
    if (m <= 0) return;
    matmul(ops, name, "batched_gemm_bf16", false, m, n, k, static_cast<int>(heads), wname, kLayers, double(m));
  };
  auto norm = [&](std::vector<OpStep>& ops, const std::string& name, int64_t hidden, int64_t tokens) {
    if (tokens <= 0) return;
    char* x = R.Get("norm_in", size_t(tokens) * hidden * 2, Fill::kBf16).base;
    char* y = R.Get("norm_out", size_t(tokens) * hidden * 2, Fill::kNone).base;
    char* w = R.Get("norm_w_" + std::to_string(hidden), hidden * 2, Fill::kBf16).base;
    ops.push_back({name, "rmsnorm", double(tokens), [=](int) {
                     EnqueueRmsNorm(reinterpret_cast<__nv_bfloat16*>(x), reinterpret_cast<__nv_bfloat16*>(w),
                                    reinterpret_cast<__nv_bfloat16*>(y), tokens, static_cast<int>(hidden), s);
                   }});
  };
  auto silu = [&](std::vector<OpStep>& ops, const std::string& name, int64_t width, int64_t tokens) {
    if (tokens <= 0) return;
    char* in = act16(size_t(tokens) * width * 4);
    char* out = R.Get("silu_out", size_t(tokens) * width * 2, Fill::kNone).base;
    ops.push_back({name, "silu_mul", double(tokens), [=](int) {
                     EnqueueSiluMul(reinterpret_cast<__nv_bfloat16*>(in), reinterpret_cast<__nv_bfloat16*>(out),
                                    tokens, static_cast<int>(width), s);
                   }});
  };
  auto rope = [&](std::vector<OpStep>& ops, const std::string& name, int64_t rows_per_token, int64_t stride) {
    char* x = R.Get("rope_x", size_t(t) * rows_per_token * stride * 2, Fill::kBf16).base;
    int32_t* pos = reinterpret_cast<int32_t*>(R.Get("positions", size_t(t) * 4, Fill::kIdx, 1, 0, 65536).base);
    ops.push_back({name, "rope", double(t * rows_per_token), [=](int) {
                     EnqueueRope(reinterpret_cast<__nv_bfloat16*>(x) + (stride - kRope), pos, t * rows_per_token,
                                 static_cast<int>(rows_per_token), static_cast<int>(kRope), static_cast<int>(stride), s);
                   }});
  };

  // Embedding (copy_d2d of the looked-up rows) and its TP all-reduce.
  {
    const size_t bytes = size_t(t) * kHidden * 2;
    char* src = R.Get("embed_rows", bytes, Fill::kBf16).base;
    char* dst = R.Get("hidden", bytes, Fill::kNone).base;
    it.pre.push_back({"embedding", "copy_d2d", double(bytes),
                      [=](int) { CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, s)); }});
    if (L.attn_tp > 1) copy(it.pre, "embedding_all_reduce", "all_reduce", bytes);
  }

  // Attention, every layer.
  auto& A = it.attn;
  norm(A, "input_layernorm", kHidden, t);
  gemm(A, "fused_qkv_a_proj", true, t, kQLora + kLatent, kHidden, "w_qkv_a", kLayers);
  norm(A, "q_a_layernorm", kQLora, t);
  norm(A, "kv_a_layernorm", kKvLora, t);
  gemm(A, "q_b_proj", true, t, heads * (kNope + kRope), kQLora, "w_q_b", kLayers);
  rope(A, "rope", heads + 1, kNope + kRope);
  gemm(A, "indexer_wq_b", true, t, kIdxHeads * kIdxDim, kQLora, "w_idx_wq_b", kLayers);
  gemm(A, "indexer_wk", true, t, kIdxDim, kHidden, "w_idx_wk", kLayers);
  gemm(A, "indexer_weights_proj", false, t, kIdxHeads, kHidden, "w_idx_wproj", kLayers);  // BF16 (unquantized)
  rope(A, "indexer_rope", kIdxHeads + 1, kIdxDim);
  if (N > 0) {
    const size_t nk = size_t(N) * dec_row;
    const uint8_t* q = reinterpret_cast<const uint8_t*>(R.Get("ix_q", size_t(N) * kIdxHeads * kIdxDim, Fill::kFp8).base);
    const float* w = reinterpret_cast<const float*>(R.Get("ix_w", size_t(N) * kIdxHeads * 4, Fill::kF32).base);
    Rot keys = R.Get("ix_keys", nk * kIdxDim, Fill::kFp8, kLayers, kCacheBudget);
    Rot ks = R.Get("ix_kscale", nk * 4, Fill::kScaleW, kLayers, kCacheBudget);
    float* sc = reinterpret_cast<float*>(R.Get("ix_scores", nk * 4, Fill::kNone).base);
    A.push_back({"indexer_decode", "indexer_decode", double(nk), [=](int l) {
                   EnqueueIndexer(q, w, reinterpret_cast<uint8_t*>(keys.at(l)), reinterpret_cast<float*>(ks.at(l)),
                                  sc, static_cast<int>(N), static_cast<int>(dec_row), false, 0,
                                  static_cast<int>(dec_row), s);
                 }});
    // vLLM v0.13's decode indexer writes FP32 logits rows max_model_len wide
    // and has DeepGEMM fill each past its keys with -inf (clean_logits). The
    // real write-only pass runs here, not the copy servesim prices it by
    // (x = bytes written / 2): it is the kernel servesim_logits_clean_check
    // times against that copy, so the check covers the stand-in too. Its rows
    // are a buffer of their own: the top-k kernel reads contiguous score rows.
    const double cleaned = double(N) * double(std::max<int64_t>(0, kMaxModelLen - dec_keys));
    float* logits = reinterpret_cast<float*>(R.Get("ix_logits", size_t(N) * kMaxModelLen * 4, Fill::kNone).base);
    int32_t* row_keys = reinterpret_cast<int32_t*>(R.Get("ix_logits_keys", size_t(N) * 4, Fill::kNone).base);
    it.setup.push_back([row_keys, N, dec_keys] {
      const std::vector<int32_t> host(N, static_cast<int32_t>(dec_keys));
      CUDA_CHECK(cudaMemcpy(row_keys, host.data(), host.size() * 4, cudaMemcpyHostToDevice));
    });
    A.push_back({"indexer_logits_clean", "indexer_logits_clean", cleaned * 4 / 2, [=](int) {
                   EnqueueCleanLogits(logits, row_keys, static_cast<int>(N), static_cast<int>(kMaxModelLen), s);
                 }});
  }
  if (P > 0) {
    const uint8_t* q = reinterpret_cast<const uint8_t*>(R.Get("ixp_q", size_t(P) * kIdxHeads * kIdxDim, Fill::kFp8).base);
    const float* w = reinterpret_cast<const float*>(R.Get("ixp_w", size_t(P) * kIdxHeads * 4, Fill::kF32).base);
    Rot keys = R.Get("ixp_keys", size_t(P) * kIdxDim, Fill::kFp8, kLayers, kCacheBudget);
    Rot ks = R.Get("ixp_kscale", size_t(P) * 4, Fill::kScaleW, kLayers, kCacheBudget);
    float* sc = reinterpret_cast<float*>(R.Get("ixp_scores", size_t(P) * P * 4, Fill::kNone).base);
    A.push_back({"indexer_prefill", "indexer_prefill", double(CausalPairs(P, 0)), [=](int l) {
                   EnqueueIndexer(q, w, reinterpret_cast<uint8_t*>(keys.at(l)), reinterpret_cast<float*>(ks.at(l)),
                                  sc, static_cast<int>(P), static_cast<int>(P), true, 0, static_cast<int>(P), s);
                 }});
  }
  if (dec_select || pre_sel_rows > 0) {
    // One op, as servesim's: the decode rows' selection over the indexer's
    // scores, the prefill's over random scores of its rows' mean length (the
    // indexer wrote the prefill's rows at stride P, which the kernel cannot
    // step), as the topk table's random rows.
    const float* dec_sc = nullptr;
    const float* pre_sc = nullptr;
    int32_t* dec_out = nullptr;
    int32_t* pre_out = nullptr;
    if (dec_select) {
      dec_sc = reinterpret_cast<const float*>(R.Get("ix_scores", size_t(N) * dec_row * 4, Fill::kNone).base);
      dec_out = reinterpret_cast<int32_t*>(R.Get("topk_out", size_t(N) * kIndexTopK * 4, Fill::kNone).base);
    }
    if (pre_sel_rows > 0) {
      pre_sc = reinterpret_cast<const float*>(
          R.Get("ixp_topk_scores", size_t(pre_sel_rows) * pre_sel_row * 4, Fill::kF32).base);
      pre_out = reinterpret_cast<int32_t*>(R.Get("topkp_out", size_t(pre_sel_rows) * kIndexTopK * 4, Fill::kNone).base);
    }
    const double keys = (dec_select ? double(N) * dec_row : 0.0) + double(pre_sel_rows) * pre_sel_row;
    A.push_back({"index_topk", "topk", keys, [=](int) {
                   if (dec_sc) EnqueueTopK(dec_sc, static_cast<int>(N), static_cast<int>(dec_row), kIndexTopK, dec_out, s);
                   if (pre_sc) {
                     EnqueueTopK(pre_sc, static_cast<int>(pre_sel_rows), static_cast<int>(pre_sel_row), kIndexTopK,
                                 pre_out, s);
                   }
                 }});
  }
  const int64_t absorbed = N + P;  // every row takes the sparse (absorbed) path
  bmm(A, "attn_w_uk", absorbed, kKvLora, kNope, "w_uk");
  if (N > 0) {
    // BF16 latent cache (vLLM's default kv_cache_dtype "auto" -> bfloat16 on
    // Hopper); each layer gathers a fresh random set of each row's keys from a
    // 2M-entry pool, as the attention suite's sparse_mla_decode does (there
    // every row walks 2048, x = rows x 2048; servesim prices x = the keys
    // walked). Heads padded to 64 (FlashMLA's h_q).
    const int64_t hp = L.sparse_heads;
    const int splits = SparseMlaSplits(static_cast<int>(hp), static_cast<int>(N), static_cast<int>(dec_attended));
    const __nv_bfloat16* q = reinterpret_cast<const __nv_bfloat16*>(R.Get("mla_q", size_t(N) * hp * kLatent * 2, Fill::kBf16).base);
    const void* cache = R.Get("mla_pool", size_t(kMlaDecodePoolEntries) * kMlaBf16EntryBytes, Fill::kBf16).base;
    Rot idx = R.Get("mla_idx", size_t(N) * dec_attended * 4, Fill::kIdx, kLayers, kCacheBudget,
                    static_cast<int32_t>(kMlaDecodePoolEntries));
    __nv_bfloat16* out = reinterpret_cast<__nv_bfloat16*>(R.Get("mla_out", size_t(N) * hp * kKvLora * 2, Fill::kNone).base);
    float* po = reinterpret_cast<float*>(R.Get("mla_part_o", size_t(N) * splits * hp * kKvLora * 4, Fill::kNone).base);
    float* pm = reinterpret_cast<float*>(R.Get("mla_part_ml", size_t(N) * splits * hp * 2 * 4, Fill::kNone).base);
    A.push_back({"sparse_mla_decode", "sparse_mla_decode", double(N * dec_attended), [=](int l) {
                   EnqueueSparseMla(false, q, cache, reinterpret_cast<int32_t*>(idx.at(l)), static_cast<int>(N),
                                    static_cast<int>(hp), static_cast<int>(dec_attended), splits, out, po, pm, s);
                 }});
  }
  if (P > 0) {
    // As the attention suite's sparse_mla_prefill: BF16 kernel, one query
    // token per block row, keys gathered within the prompt's own cache (it
    // stays in L2), heads padded to 64. pre_attended keys per row.
    const int64_t hp = L.sparse_heads;
    const __nv_bfloat16* q = reinterpret_cast<const __nv_bfloat16*>(R.Get("mlap_q", size_t(P) * hp * kLatent * 2, Fill::kBf16).base);
    Rot cache = R.Get("mlap_cache", size_t(P) * kMlaBf16EntryBytes, Fill::kBf16, kLayers, kCacheBudget);
    Rot idx = R.Get("mlap_idx", size_t(P) * pre_attended * 4, Fill::kIdx, 2, 1, static_cast<int32_t>(P));
    __nv_bfloat16* out = reinterpret_cast<__nv_bfloat16*>(R.Get("mlap_out", size_t(P) * hp * kKvLora * 2, Fill::kNone).base);
    // The index buffer serves every prefill of the layout, filled at
    // allocation for one of them: its indices are drawn again within this
    // prompt's P cache entries.
    it.setup.push_back([idx, P, s] {
      FillI32Mod(reinterpret_cast<int32_t*>(idx.base), idx.stride / 4 * idx.slots, 77, static_cast<int32_t>(P), s);
    });
    A.push_back({"sparse_mla_prefill", "sparse_mla_prefill", double(P * pre_attended), [=](int l) {
                   EnqueueSparseMla(false, q, cache.at(l), reinterpret_cast<int32_t*>(idx.at(l)), static_cast<int>(P),
                                    static_cast<int>(hp), static_cast<int>(pre_attended), 1, out, nullptr, nullptr, s);
                 }});
  }
  bmm(A, "attn_w_uv", absorbed, kVHead, kKvLora, "w_uv");
  gemm(A, "o_proj", true, t, kHidden, heads * kVHead, "w_o", kLayers);
  if (L.attn_tp > 1) copy(A, "attn_all_reduce", "all_reduce", size_t(t) * kHidden * 2);
  norm(A, "post_attention_layernorm", kHidden, t);

  // Dense FFN (3 layers): TP within the DP rank (vLLM: dense_tp = tp).
  auto& D = it.dense;
  gemm(D, "dense_gate_up_proj", true, t, 2 * L.dense_w, kHidden, "w_dense_gate_up", kDenseLayers);
  silu(D, "dense_silu_mul", L.dense_w, t);
  gemm(D, "dense_down_proj", true, t, kHidden, L.dense_w, "w_dense_down", kDenseLayers);
  if (L.attn_tp > 1) copy(D, "dense_all_reduce", "all_reduce", size_t(t) * kHidden * 2);

  // MoE (58 layers).
  auto& M = it.moe;
  const int moe_layers = kLayers - kDenseLayers;
  gemm(M, "router_gate", false, t, kExperts, kHidden, "w_router", moe_layers);  // BF16 (unquantized)
  {
    const float* lg = reinterpret_cast<const float*>(R.Get("router_logits", size_t(t) * kExperts * 4, Fill::kF32).base);
    const float* bias = reinterpret_cast<const float*>(R.Get("router_bias", kExperts * 4, Fill::kF32).base);
    int32_t* idx = reinterpret_cast<int32_t*>(R.Get("router_idx", size_t(t) * 32, Fill::kNone).base);
    float* wt = reinterpret_cast<float*>(R.Get("router_wts", size_t(t) * 32, Fill::kNone).base);
    M.push_back({"router_topk", "router_topk", double(t),
                 [=](int) { EnqueueRouterTopK(lg, bias, static_cast<int>(t), idx, wt, s); }});
  }
  const size_t shard_bytes = size_t((moe_tokens + L.dp - 1) / L.dp) * kHidden * 2;
  if (L.dp > 1) copy(M, "moe_all_gather", "all_gather", shard_bytes);
  gemm(M, "shared_gate_up_proj", true, t, 2 * L.shared_w, kHidden, "w_shared_gate_up", moe_layers);
  silu(M, "shared_silu_mul", L.shared_w, t);
  gemm(M, "shared_down_proj", true, t, kHidden, L.shared_w, "w_shared_down", moe_layers);
  {
    // servesim prices the grouped GEMMs by the experts the pairs touch under
    // random routing (sim/cost/op_cost.cc GroupedGemmUs: the table's uniform
    // point scaled by ExpectedExpertsTouched / min(pairs, experts)): one
    // strided-batched call, as the grouped suite times it, over that many
    // experts (rounded, at least 1) with ceil(pairs / experts) rows each.
    const int experts = std::max(
        1, static_cast<int>(std::llround(ExpectedExpertsTouched(double(pairs), double(L.local_experts)))));
    const int64_t m = CeilDiv(pairs, experts);
    // No all-to-all (whose dispatch would quantize): the gathered tokens the
    // experts see are quantized once, the down GEMM's pair rows each.
    act_quant(M, "experts_gate_up", moe_tokens, kHidden);
    matmul(M, "experts_gate_up", "grouped_gemm_fp8", true, m, 2 * L.expert_w, kHidden, experts, "w_experts_gate_up",
           moe_layers, double(pairs));
    silu(M, "experts_silu_mul", L.expert_w, pairs);
    act_quant(M, "experts_down", pairs, L.expert_w);
    matmul(M, "experts_down", "grouped_gemm_fp8", true, m, kHidden, L.expert_w, experts, "w_experts_down", moe_layers,
           double(pairs));
    // Each token's top-k expert rows summed with the router weights (vLLM's
    // moe_sum): the pairs' BF16 rows read, the tokens' written.
    copy(M, "experts_topk_reduce", "moe_topk_reduce", size_t(pairs + moe_tokens) * kHidden * 2 / 2);
  }
  if (L.dp > 1) copy(M, "moe_reduce_scatter", "reduce_scatter", shard_bytes);
  else copy(M, "moe_all_reduce", "all_reduce", size_t(t) * kHidden * 2);

  // Head: final norm, LM head (BF16, unquantized; vocab split over the TP
  // group, lm_head_dp), logits all-gather, sampling.
  norm(it.head, "final_norm", kHidden, t);
  gemm(it.head, "lm_head", false, rows, L.lm_n, kHidden, "w_lm_head", 1);
  if (L.attn_tp > 1) copy(it.head, "logits_all_gather", "all_gather", size_t(rows) * L.lm_n * 2);
  {
    // vLLM's PyTorch top-p sampler over the whole vocabulary, as the
    // sampling_top_p table times it. vLLM runs it outside the model's CUDA
    // graph; it is captured here in the iteration's graph (the CUB sorts run
    // on preallocated temporary storage, capturable, as the sampler suite
    // captures them to time the table), so measurement and table alike hold
    // no host launch time.
    const TopPSampler sampler =
        LayOutTopPSampler(R.Get("sampler", TopPSamplerBytes(static_cast<int>(rows)), Fill::kNone).base,
                          static_cast<int>(rows));
    const auto* logits = reinterpret_cast<const __nv_bfloat16*>(
        R.Get("sampler_logits", size_t(rows) * kVocab * 2, Fill::kLogits).base);
    it.setup.push_back([sampler] { InitTopPSampler(sampler); });
    it.head.push_back({"sampling", "sampling_top_p", double(rows),
                       [=](int) { EnqueueTopPSampling(sampler, logits, kTopP, 1234, s); }});
    it.sampled = sampler.out;
    it.sampled_rows = rows;
  }
  return it;
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

cudaGraphExec_t CaptureGraph(cudaStream_t s, const std::function<void()>& body, size_t* nodes) {
  cudaGraph_t g;
  CUDA_CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
  body();
  CUDA_CHECK(cudaStreamEndCapture(s, &g));
  if (nodes) CUDA_CHECK(cudaGraphGetNodes(g, nullptr, nodes));
  cudaGraphExec_t exec;
  CUDA_CHECK(cudaGraphInstantiate(&exec, g, 0));
  CUDA_CHECK(cudaGraphDestroy(g));
  return exec;
}

// Replays `exec` (one warm-up, then `reps` timed replays); returns each in ms.
std::vector<double> TimeGraph(cudaStream_t s, cudaGraphExec_t exec, int reps) {
  cudaEvent_t a, b;
  CUDA_CHECK(cudaEventCreate(&a));
  CUDA_CHECK(cudaEventCreate(&b));
  CUDA_CHECK(cudaGraphLaunch(exec, s));
  CUDA_CHECK(cudaStreamSynchronize(s));
  std::vector<double> ms;
  for (int r = 0; r < reps; ++r) {
    CUDA_CHECK(cudaEventRecord(a, s));
    CUDA_CHECK(cudaGraphLaunch(exec, s));
    CUDA_CHECK(cudaEventRecord(b, s));
    CUDA_CHECK(cudaEventSynchronize(b));
    float x = 0;
    CUDA_CHECK(cudaEventElapsedTime(&x, a, b));
    ms.push_back(x);
  }
  CUDA_CHECK(cudaEventDestroy(a));
  CUDA_CHECK(cudaEventDestroy(b));
  return ms;
}

// Per-op breakdown: each op of the iteration alone, 8 instances (at layers
// 3..10 so rotating buffers rotate) in one graph; its time x its layer count.
// The sum is what a per-op sum (servesim's composition) would give with
// exact per-op times.
void Breakdown(const Iteration& it, cudaStream_t s, FILE* log) {
  struct Row {
    std::string name, kind;
    double x, us_each, count;
  };
  std::vector<Row> rows;
  auto measure = [&](const OpStep& o, double count) {
    constexpr int kInst = 8;
    cudaGraphExec_t g = CaptureGraph(s, [&] { for (int i = 0; i < kInst; ++i) o.enqueue(kDenseLayers + i); }, nullptr);
    const double ms = Median(TimeGraph(s, g, 5));
    CUDA_CHECK(cudaGraphExecDestroy(g));
    rows.push_back({o.name, o.kind, o.x, 1000.0 * ms / kInst, count});
  };
  for (const auto& o : it.pre) measure(o, 1);
  for (const auto& o : it.attn) measure(o, kLayers);
  for (const auto& o : it.dense) measure(o, kDenseLayers);
  for (const auto& o : it.moe) measure(o, kLayers - kDenseLayers);
  for (const auto& o : it.head) measure(o, 1);
  double total = 0;
  for (const auto& r : rows) {
    std::fprintf(log, "    op %-30s %-20s x %12.0f %10.2f us x %2.0f = %10.1f us\n", r.name.c_str(), r.kind.c_str(),
                 r.x, r.us_each, r.count, r.us_each * r.count);
    total += r.us_each * r.count;
  }
  std::fprintf(log, "    sum of isolated ops: %.3f ms\n", total / 1000.0);
}

// The op list in the columns of `servesim explain`'s op table (op, kind, x,
// layers), to compare with it before any timing.
void ListOps(const Iteration& it, FILE* out) {
  auto list = [&](const std::vector<OpStep>& ops, int layers) {
    for (const auto& o : ops) std::fprintf(out, "  %-30s %-20s %12.0f %6d\n", o.name.c_str(), o.kind.c_str(), o.x, layers);
  };
  list(it.pre, 1);
  list(it.attn, kLayers);
  list(it.dense, kDenseLayers);
  list(it.moe, kLayers - kDenseLayers);
  list(it.head, 1);
}

int Main(int argc, char** argv) {
  std::string csv_path;
  std::string layouts_arg = "tp8,dp8ep8";
  double budget_s = 330;
  bool quick = false, breakdown = false, list_ops = false;
  // Every FP8 GEMM per-tensor, as the profile's gemm_fp8 tables are since the
  // fourth 2026-12-06 session (docs/calibration.md, "FP8 scaling mode"):
  // the check composes the kernels the profile timed.
  bool fp8_per_tensor = false;
  std::string only;  // run just this batch (e.g. decode_b1024_c32768)
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--csv" && i + 1 < argc) csv_path = argv[++i];
    else if (a == "--layouts" && i + 1 < argc) layouts_arg = argv[++i];
    else if (a == "--budget-s" && i + 1 < argc) budget_s = std::atof(argv[++i]);
    else if (a == "--quick") quick = true;
    else if (a == "--breakdown") breakdown = true;
    else if (a == "--fp8-per-tensor") fp8_per_tensor = true;
    else if (a == "--only" && i + 1 < argc) only = argv[++i];
    else if (a == "--list-ops") list_ops = true;
    else {
      std::fprintf(stderr, "servesim_iteration: unknown or incomplete argument '%s'\nusage: servesim_iteration --csv PATH "
                           "[--layouts tp8,dp8ep8] [--budget-s S] [--quick] [--breakdown] [--fp8-per-tensor] "
                           "[--only BATCH]\n       servesim_iteration --list-ops [--layouts ...] [--quick] "
                           "[--only BATCH]\n", a.c_str());
      return 2;
    }
  }
  if (csv_path.empty() && !list_ops) {
    std::fprintf(stderr, "servesim_iteration: --csv: required\n");
    return 2;
  }
  std::vector<Layout> layouts;
  {
    std::stringstream ss(layouts_arg);
    std::string n;
    while (std::getline(ss, n, ',')) {
      if (n == "tp8") layouts.push_back(Tp8());
      else if (n == "dp8ep8") layouts.push_back(Dp8Ep8());
      else {
        std::fprintf(stderr, "servesim_iteration: --layouts: unknown layout '%s' (tp8, dp8ep8)\n", n.c_str());
        return 2;
      }
    }
  }
  // Required batches first; the 1024-sequence decodes last, run while the
  // time budget lasts.
  std::vector<Batch> batches;
  auto wanted = [&](const Batch& b) { return only.empty() || b.Name() == only; };
  const std::vector<int64_t> seqs = quick ? std::vector<int64_t>{1, 64} : std::vector<int64_t>{1, 8, 64, 256};
  const std::vector<int64_t> ctxs = quick ? std::vector<int64_t>{2048} : std::vector<int64_t>{512, 2048, 8192, 32768};
  for (int64_t n : seqs)
    for (int64_t c : ctxs) batches.push_back({n, c, 0});
  for (int64_t p : quick ? std::vector<int64_t>{2048} : std::vector<int64_t>{512, 2048, 8192}) batches.push_back({0, 0, p});
  batches.push_back({64, 2048, 2048});
  if (!quick)
    for (int64_t c : ctxs) batches.push_back({1024, c, 0});
  batches.erase(std::remove_if(batches.begin(), batches.end(), [&](const Batch& b) { return !wanted(b); }),
                batches.end());
  if (batches.empty()) {
    std::fprintf(stderr, "servesim_iteration: --only: no batch named %s\n", only.c_str());
    return 2;
  }

  if (list_ops) {
    // The sizing pass alone: no buffers, no timing (the device is asked only
    // for its SM count and CUB's sort storage).
    Context ctx;
    for (const Layout& L : layouts) {
      for (const Batch& b : batches) {
        Registry reg;
        Plans none(&ctx);
        std::printf("== %s %s\n", L.name.c_str(), b.Name().c_str());
        ListOps(Build(L, b, reg, none, ctx), stdout);
      }
    }
    return 0;
  }
  FILE* csv = std::fopen(csv_path.c_str(), "w");
  if (!csv) {
    std::fprintf(stderr, "servesim_iteration: --csv: cannot write %s\n", csv_path.c_str());
    return 1;
  }
  std::fprintf(csv, "layout,batch,measured_ms\n");

  cudaDeviceProp prop{};
  CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
  std::printf("servesim_iteration: %s, %d SMs, L2 %.0f MB; collectives, FP8 activation quantization and the top-k "
              "expert reduce replaced by device-to-device copies of the bytes servesim prices them by\n", prop.name,
              prop.multiProcessorCount, prop.l2CacheSize / 1e6);
  Context ctx;
  CUDA_CHECK(cudaStreamCreateWithFlags(&ctx.stream, cudaStreamNonBlocking));
  CUBLAS_CHECK(cublasLtCreate(&ctx.lt));
  ctx.workspace_bytes = size_t{64} << 20;
  ctx.cfg.fp8_per_tensor = fp8_per_tensor;
  CUDA_CHECK(cudaMalloc(&ctx.workspace, ctx.workspace_bytes));
  const auto t0 = std::chrono::steady_clock::now();
  auto elapsed = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(); };

  int failures = 0;
  for (size_t li = 0; li < layouts.size(); ++li) {
    const Layout& L = layouts[li];
    Registry reg;
    {
      Plans dummy(&ctx);
      for (const Batch& b : batches) Build(L, b, reg, dummy, ctx);  // sizing pass
    }
    const double ta = elapsed();
    const size_t bytes = reg.Allocate(ctx.stream);
    std::printf("== layout %s: %.1f GB of buffers allocated and filled in %.1f s (weights: 2+ rotating copies of "
                "each layer kind, 3 dense + 58 MoE layers addressed round-robin)\n",
                L.name.c_str(), bytes / 1e9, elapsed() - ta);
    std::fflush(stdout);
    Plans plans(&ctx);
    // The later layouts get their share of what is left of the budget.
    const double layout_deadline = elapsed() + (budget_s - elapsed()) / double(layouts.size() - li);
    for (const Batch& b : batches) {
      if (elapsed() > layout_deadline) {
        std::printf("  %-8s %-32s SKIPPED (time budget)\n", L.name.c_str(), b.Name().c_str());
        continue;
      }
      const Iteration it = Build(L, b, reg, plans, ctx);
      // The batch's index patterns and constants, once the previous batch's
      // work on the shared buffers is done; then the device is idle (the
      // setup's host-to-device copies run on no stream of ours).
      CUDA_CHECK(cudaStreamSynchronize(ctx.stream));
      for (const auto& setup : it.setup) setup();
      CUDA_CHECK(cudaDeviceSynchronize());
      it.Enqueue();  // eager pass: plans, kernel attributes, warm-up
      CUDA_CHECK(cudaStreamSynchronize(ctx.stream));
      size_t nodes = 0;
      cudaGraphExec_t g = CaptureGraph(ctx.stream, [&] { it.Enqueue(); }, &nodes);
      // One probe replay sizes the repeat count (>= 10).
      const double probe = TimeGraph(ctx.stream, g, 1)[0];
      const int reps = probe > 400 ? 10 : probe > 50 ? 15 : 25;
      std::vector<double> ms = TimeGraph(ctx.stream, g, reps);
      CUDA_CHECK(cudaGraphExecDestroy(g));
      const double med = Median(ms);
      std::vector<double> sorted = ms;
      std::sort(sorted.begin(), sorted.end());
      // Sanity: the sampled token ids are in the vocabulary.
      std::vector<int64_t> tok(it.sampled_rows);
      CUDA_CHECK(cudaMemcpy(tok.data(), it.sampled, tok.size() * 8, cudaMemcpyDeviceToHost));
      bool ok = true;
      for (int64_t x : tok) ok &= x >= 0 && x < kVocab;
      if (!ok) ++failures;
      std::printf("  %-8s %-32s %10.3f ms  [min %.3f max %.3f, %d replays, %zu graph nodes]%s\n", L.name.c_str(),
                  b.Name().c_str(), med, sorted.front(), sorted.back(), reps, nodes, ok ? "" : "  SAMPLING CHECK FAILED");
      std::fflush(stdout);
      std::fprintf(csv, "%s,%s,%.4f\n", L.name.c_str(), b.Name().c_str(), med);
      std::fflush(csv);
      // The decode, prefill and mixed batches whose ops compare with
      // explain's tables one by one.
      const bool breakdown_here = breakdown && ((b.decode_seqs == 64 && b.context == 2048) ||
                                                (b.decode_seqs == 0 && b.prefill_tokens == 2048) ||
                                                (b.decode_seqs == 1 && b.context == 2048));
      if (breakdown_here) {
        Breakdown(it, ctx.stream, stdout);
        std::fflush(stdout);
      }
    }
    reg.Free();
  }
  std::fclose(csv);
  std::printf("servesim_iteration: done in %.0f s; sampling checks failed: %d\n", elapsed(), failures);
  CUBLAS_CHECK(cublasLtDestroy(ctx.lt));
  return failures == 0 ? 0 : 3;
}

}  // namespace
}  // namespace servesim::calibration::cuda

int main(int argc, char** argv) { return servesim::calibration::cuda::Main(argc, argv); }
