// From an engine's effective configuration to the pieces one simulated run
// needs: its layout, KV pool, schedulers, router and step-time model. One
// Setup<Engine> function per engine; PrepareEngine dispatches.
#ifndef SERVESIM_SIM_RUNNER_ENGINE_SETUP_H_
#define SERVESIM_SIM_RUNNER_ENGINE_SETUP_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "models/memory_model.h"
#include "models/model_spec.h"
#include "models/parallel_layout.h"
#include "scenarios/engine_config.pb.h"
#include "scenarios/fitted_params.pb.h"
#include "sim/cost/step_predictor.h"
#include "sim/serving/serving_simulation.h"

namespace servesim::runner {

struct EngineSetup {
  models::ParallelLayout layout;
  models::KvBudget kv;             // one pool per DP rank
  int64_t kv_blocks_per_rank = 0;
  // Requests one DP rank runs at once (vLLM max_num_seqs, SGLang
  // max_running_requests as given or derived from the pool, TensorRT-LLM
  // max_batch_size).
  int64_t max_running_per_rank = 0;
  serving::EngineTopology topology;
  cost::StepPredictorConfig predictor;
  std::vector<std::string> notes;  // header lines: layout, memory, kernels
};

// Status codes: FailedPrecondition when the engine would refuse to start
// (layout, memory), with its reason; others are servesim errors.
absl::StatusOr<EngineSetup> PrepareEngine(const scenarios::EngineConfig& config,
                                          const models::ModelSpec& spec,
                                          const scenarios::EngineParams& params);

absl::StatusOr<EngineSetup> SetupVllm(const scenarios::EngineConfig& config,
                                      const models::ModelSpec& spec);
absl::StatusOr<EngineSetup> SetupSglang(const scenarios::EngineConfig& config,
                                        const models::ModelSpec& spec);
absl::StatusOr<EngineSetup> SetupTrtllm(const scenarios::EngineConfig& config,
                                        const models::ModelSpec& spec);

// The fitted prefill-path factor; a parameters file without one means the
// prefill runs as measured.
double PrefillTimeScale(const scenarios::EngineParams& params);

// Shared helpers for the per-engine setups.
models::KvCacheDtype ToModelKvDtype(scenarios::KvCacheDtype dtype);
// A layout or memory refusal as the engine reports it (FailedPrecondition);
// what servesim does not model stays Unimplemented.
absl::Status AsEngineRefusal(const absl::Status& status);
// The header's attention description: `dsa_path` (the engine's DSA backends, as
// it runs DeepSeek-V3.2) when the model spec has the lightning indexer; a spec
// without it (DeepSeek-V3) runs none of them, and the op graph prices dense MLA.
std::string DescribeAttention(const models::ModelSpec& spec, absl::string_view dsa_path);

// The header's GEMM backend: DeepGEMM, or `without_deep_gemm` (the engine's
// fallback), which servesim prices from the same measured FP8 GEMM tables.
std::string DescribeGemms(bool deep_gemm, absl::string_view without_deep_gemm);

// "KV pool: 39.4 GiB per GPU = 539968 tokens per DP rank x 1 rank(s) (bf16,
// 78324 B/token incl. indexer keys); weights 80.1 GiB per GPU".
std::string DescribeKvPool(const models::ModelSpec& spec, const models::KvBudget& kv,
                           models::KvCacheDtype dtype, int dp_ranks);
// Kernel backends `config` selects that differ from the kernels servesim
// measured, each with the op kinds it runs: `servesim fit` gives each a time
// factor (EngineParams.backend_factors), keyed by the returned name.
struct BackendChoice {
  std::string name;                   // e.g. "nsa_decode=flashmla_kv"
  std::vector<std::string> op_kinds;  // e.g. {"sparse_mla_decode"}
  // The factor applies only to the work a step's prefill chunks add (the
  // compute-bound GEMM shapes), not to decode.
  bool prefill_only = false;
  // The factor's lower bound in the fit: 1 where the op is priced at a
  // measured hardware ceiling (nothing runs faster than it), else 0.2.
  double min_time_scale = 0.2;
  // What the ops cost where no factor was fitted, for the run's header.
  std::string unfitted_pricing = "servesim's measured kernel";
  // The factor's upper bound in the fit.
  double max_time_scale = 10;
  // The factor multiplies the collectives' per-call latency, not their whole
  // time: the bytes keep their roofline bandwidth (see NonDefaultBackends).
  bool scales_call_latency = false;
};
// The kernel and collective paths of `config` on `layout` that carry a fitted
// factor instead of servesim's pricing.
std::vector<BackendChoice> NonDefaultBackends(const scenarios::EngineConfig& config,
                                              const models::ParallelLayout& layout);
// Every name NonDefaultBackends can give for `engine` on any layout: the
// backend factors a parameters file may hold for it (keep the two in step).
std::vector<std::string> FittableBackendNames(scenarios::EngineKind engine);
// SGLang's flashmla_kv decode on a BF16 cache: FlashMLA decodes only from its
// FP8 layout, so nsa_backend.py's _forward_flashmla_kv quantizes each layer's
// whole KV buffer before every decode pass ("inefficiently quantize the whole
// cache") [U: read in SGLang's source of late 2025, not pinned to v0.5.6.post2].
bool SglangQuantizesKvCacheEachDecode(const scenarios::EngineConfig& config);
// Copies the fitted factors of `config`'s backends into predictor.kind_time_scale
// (or prefill_kind_time_scale for a prefill-only backend, kind_call_latency_scale
// for one that scales a collective's per-call latency). Returns the
// backends `params` has no factor for (their ops run as unfitted_pricing says).
std::vector<BackendChoice> ApplyBackendFactors(const scenarios::EngineConfig& config,
                         const scenarios::EngineParams& params,
                         cost::StepPredictorConfig* predictor);

// The length check every OpenAI-compatible server makes before admitting.
std::string ContextLengthRejection(int64_t max_model_len, int64_t prompt_tokens,
                                   int64_t output_tokens);

}  // namespace servesim::runner

#endif  // SERVESIM_SIM_RUNNER_ENGINE_SETUP_H_
