#include "sim/cost/production_kernels.h"

#include <algorithm>

#include "absl/strings/str_format.h"

namespace servesim::cost {
namespace {

// Published figures (shared/reference/model-and-kernels.md §3), measured on
// the H800, whose compute equals the H200's (§2: only memory differs).
constexpr double kFlashMlaSparseDecodeTflops = 410;   // FP8 cache, h 128, topk 2048 [K2]
constexpr double kFlashMlaSparsePrefillTflops = 640;  // BF16, MQA mode [K1]
// Fraction of memory bandwidth a production decode kernel reaches: FlashMLA
// dense decode moves 3000 GB/s of the H800's 3350 [K1].
constexpr double kProductionBandwidthFraction = 3000.0 / 3350.0;
// Fraction of the tensor peak a production attention kernel reaches: FlashMLA
// sparse prefill, 640 TFLOP/s of the H800's ~865 TFLOP/s throttled BF16 peak [K1, K3].
constexpr double kProductionComputeFraction = 640.0 / 865.0;

// The best achieved rate over the points of `kind` with `key`; 0 if absent.
double BestAchieved(const calibration::ProfileProto& p, const std::string& kind,
                    const calibration::KeyDims& key, bool gbps) {
  double best = 0;
  for (const auto& t : p.tables()) {
    if (t.kind() != kind || t.key_size() != static_cast<int>(key.size())) continue;
    bool match = true;
    for (int i = 0; i < t.key_size(); ++i) {
      match &= t.key(i).name() == key[i].first && t.key(i).value() == key[i].second;
    }
    if (!match) continue;
    for (const auto& pt : t.points()) {
      best = std::max(best, gbps ? pt.achieved_gbps() : pt.achieved_tflops());
    }
  }
  return best;
}

void AddScale(std::vector<KernelScale>* out, const std::string& kind, double measured,
              double production, const std::string& what, bool dsa_only) {
  if (measured <= 0 || production <= 0) return;
  KernelScale s;
  s.kind = kind;
  s.dsa_only = dsa_only;
  s.time_scale = std::min(1.0, measured / production);  // never slower than measured
  s.derivation = absl::StrFormat("%s x%.3f (%s: %.0f vs servesim's kernel %.1f)", kind,
                                 s.time_scale, what, production, measured);
  out->push_back(s);
}

}  // namespace

std::vector<KernelScale> ProductionKernelScales(const calibration::Profile& profile) {
  const calibration::ProfileProto& p = profile.proto();
  std::vector<KernelScale> out;
  AddScale(&out, "sparse_mla_decode",
           BestAchieved(p, "sparse_mla_decode", {{"heads", 128}, {"kv_fp8", 1}}, false),
           kFlashMlaSparseDecodeTflops, "FlashMLA sparse FP8 decode TFLOP/s, h128",
           /*dsa_only=*/true);
  AddScale(&out, "sparse_mla_prefill",
           BestAchieved(p, "sparse_mla_prefill", {{"heads", 128}}, false),
           kFlashMlaSparsePrefillTflops, "FlashMLA sparse prefill TFLOP/s, h128",
           /*dsa_only=*/true);
  // No FlashAttention-3 figure is in the reference: take FlashMLA's prefill
  // efficiency of the measured BF16 ceiling for the dense MHA prefill.
  AddScale(&out, "dense_mha_prefill",
           BestAchieved(p, "dense_mha_prefill", {{"heads", 128}}, false),
           kProductionComputeFraction * p.ceilings().bf16_gemm_tflops(),
           "FlashMLA-prefill fraction of measured BF16 ceiling, TFLOP/s, h128",
           /*dsa_only=*/false);
  // DeepGEMM's indexer kernels publish no figures: memory-bound decode at the
  // production bandwidth fraction of the measured copy ceiling, compute-bound
  // prefill at the production compute fraction of the measured FP8 ceiling.
  AddScale(&out, "indexer_decode", BestAchieved(p, "indexer_decode", {{"heads", 64}}, true),
           kProductionBandwidthFraction * p.ceilings().copy_gbps(),
           "FlashMLA-decode fraction of measured copy ceiling, GB/s", /*dsa_only=*/true);
  AddScale(&out, "indexer_prefill", BestAchieved(p, "indexer_prefill", {{"heads", 64}}, false),
           kProductionComputeFraction * p.ceilings().fp8_gemm_tflops(),
           "FlashMLA-prefill fraction of measured FP8 ceiling, TFLOP/s", /*dsa_only=*/true);
  return out;
}

}  // namespace servesim::cost
