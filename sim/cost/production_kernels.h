// The attention and indexer kernels in the profile are servesim's own CUDA
// kernels: correct, but slower than the production kernels the engines run
// (FlashMLA, FlashAttention-3, DeepGEMM's indexer logits). The cost model
// scales each such table by one named factor per op kind, derived from the
// profile and a published anchor figure; each factor and its derivation is
// listed in the run's header. docs/calibration.md gives the anchors' sources.
#ifndef SERVESIM_SIM_COST_PRODUCTION_KERNELS_H_
#define SERVESIM_SIM_COST_PRODUCTION_KERNELS_H_

#include <string>
#include <vector>

#include "calibration/profile.h"

namespace servesim::cost {

struct KernelScale {
  std::string kind;         // profile op kind the factor applies to
  double time_scale = 1.0;  // production time / measured time (< 1: production is faster)
  std::string derivation;   // e.g. "FlashMLA sparse decode 410 TFLOP/s vs servesim 45.1 at ..."
  bool dsa_only = false;    // a kernel only DSA runs (sparse MLA, the indexer)
};

// One factor per custom-kernel kind present in `profile`. Kinds measured with
// vendor libraries (cuBLASLt GEMMs, NCCL) get none.
std::vector<KernelScale> ProductionKernelScales(const calibration::Profile& profile);

}  // namespace servesim::cost

#endif  // SERVESIM_SIM_COST_PRODUCTION_KERNELS_H_
