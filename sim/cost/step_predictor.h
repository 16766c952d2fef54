// Iteration time of DeepSeek-V3.2 on a parallel layout: the op graph of each
// DP rank's batch, each op timed by an OpCost (profile or roofline), ranks
// composed in lockstep, plus the engine's CPU work per step.
#ifndef SERVESIM_SIM_COST_STEP_PREDICTOR_H_
#define SERVESIM_SIM_COST_STEP_PREDICTOR_H_

#include <algorithm>
#include <memory>
#include <span>
#include <vector>

#include "models/model_spec.h"
#include "models/op_graph.h"
#include "models/parallel_layout.h"
#include "sim/cost/execution_time_predictor.h"
#include "sim/cost/op_cost.h"

namespace servesim::cost {

// Costs no kernel measurement gives: the engine's host-side work. Fitted by
// `servesim fit` (sim/fit) per engine; see docs/fitting.md for provenance.
struct EngineOverheads {
  double step_cpu_us = 0;     // per iteration: scheduling, input preparation
  double per_seq_cpu_us = 0;  // per scheduled sequence: sampling, detokenising, streaming
  // The host launches each kernel of a batch outside CUDA graphs; an eager
  // step takes at least (kernels x this).
  double eager_launch_us = 0;
  // CPU work overlaps the GPU step (SGLang / TRT-LLM overlap scheduler, vLLM
  // --async-scheduling): a step takes max(GPU, CPU) instead of the sum.
  bool overlap_cpu = false;
  // The scheduler's own thread launches the forward (SGLang, TensorRT-LLM,
  // and vLLM in one process): overlapped, an eager step's launches and the
  // scheduling work add up on that host. vLLM's tensor-parallel workers
  // launch in processes of their own, beside the scheduler's.
  bool scheduler_launches_kernels = false;
};

struct StepPredictorConfig {
  models::ModelSpec spec;
  models::ParallelLayout layout;
  models::OpGraphOptions graph;
  // Decode batches replayed from CUDA graphs pad to the next captured size
  // (and mixed batches under graphs that cover them, by tokens); larger
  // batches (and mixed batches over the largest size) run eagerly.
  std::vector<int> cuda_graph_sizes;  // ascending; empty = always eager
  // Only pure-decode batches are captured (SGLang, TRT-LLM); vLLM's piecewise
  // graphs also cover mixed batches up to the largest size.
  bool graphs_cover_mixed_batches = false;
  // vLLM's capture sizes count tokens: a decode batch under MTP with k drafts
  // is n x (1 + k) tokens and pads to the next size in tokens. SGLang's and
  // TensorRT-LLM's count sequences.
  bool graph_sizes_count_tokens = false;
  // Graphs replay only batches of exactly a captured size (TensorRT-LLM
  // without cuda_graph_config.enable_padding); others run eagerly.
  bool graphs_exact_sizes_only = false;
  // Attention-DP ranks replay their graphs together or not at all: a graph
  // runs only when every rank's batch can (TensorRT-LLM's
  // _maybe_get_cuda_graph gathers each rank's [can_run, batch_size]), and,
  // with exact sizes only, when every rank's batch has the same size.
  bool graph_choice_shared_by_ranks = false;
  // With the choice shared, every rank pads to the captured size of the
  // largest rank's batch, not to its own (SGLang's cuda_graph_runner under DP
  // attention takes the max of the gathered global_num_tokens).
  bool graphs_pad_to_largest_rank = false;
  // Tokens entering the MoE across DP ranks: every rank padded to the largest
  // rank's count (vLLM's DP padding), else the plain sum.
  bool pad_moe_tokens_to_max_rank = false;
  EngineOverheads overheads;
  // The engine's prefill path relative to servesim's kernels for it: the
  // token-linear work (GEMMs, MoE, norms, collectives) a step's prefill
  // chunks add beyond what its decodes alone take, or with fewer decodes
  // than WeightReadingRows() what reading the weights takes, is multiplied
  // by this; attention and the indexer keep their production-kernel times,
  // the launch floor is not stretched. 1 = as measured.
  double prefill_time_scale = 1.0;
  // Per op kind, the time of the engine's kernel relative to the measured one
  // (a fitted backend factor, scenarios/fitted_params.proto). Absent = 1.
  std::vector<std::pair<std::string, double>> kind_time_scale;
  // The same, applied only to what a step's prefill chunks add to that kind
  // (on top of prefill_time_scale): a kernel path slow at compute-bound
  // prefill shapes but not at decode's memory-bound ones.
  std::vector<std::pair<std::string, double>> prefill_kind_time_scale;
  // Per collective kind, its per-call latency relative to the roofline's
  // (GpuRates::collective_latency_us): each call of that kind costs
  // (scale - 1) x that latency more, whatever its size.
  std::vector<std::pair<std::string, double>> kind_call_latency_scale;
  // Every step's whole time (GPU and host) multiplied by this: not a model
  // parameter but a planning margin (`servesim plan --slowdown`), for asking
  // what an engine that far slower than predicted would need. 1 = as predicted.
  double step_time_scale = 1.0;
};

// One-token rows enough for a step to read its weights: with 2 x experts /
// top-k of them the MoE routes to about 1 - e^-2 = 86 % of its experts, and
// every GEMM is still bound by reading its weights (64 for DeepSeek-V3.2).
// What a prefill chunk adds beyond that is the work the prefill factors
// stretch.
int64_t WeightReadingRows(const models::ModelSpec& spec);

// The fitted backend factor `config` applies to ops of `kind` (1 if none).
double KindTimeScale(const StepPredictorConfig& config, const std::string& kind);
// The latency `config` adds to each call of collective `kind` (0 if none).
double AddedCallLatencyUs(const StepPredictorConfig& config, const std::string& kind);

class StepPredictor : public ExecutionTimePredictor {
 public:
  // The longest step PredictStep returns: one day. A longer or non-finite
  // step comes back as zero time (serving_simulation.cc refuses it).
  static constexpr double kMaxStepUs = 86400e6;

  StepPredictor(StepPredictorConfig config, std::unique_ptr<OpCost> op_cost);

  sim::SimTime PredictStep(std::span<const engine::StepBatch> rank_batches) override;

  // What one rank-batch set takes apart from the engine's scheduling work:
  // the GPU's time, and the host time launching the kernels of a batch that
  // runs outside CUDA graphs (0 for a graphed step), which the GPU cannot
  // outrun.
  struct GpuStep {
    double device_us = 0;
    double launch_us = 0;
    double Us() const { return std::max(device_us, launch_us); }
  };
  GpuStep GpuStepParts(std::span<const models::RankBatch> ranks);

  // GpuStepParts(ranks).Us(): the step without host overheads in
  // microseconds; for `explain` and the iteration check of calibration.
  double GpuStepUs(std::span<const models::RankBatch> ranks) { return GpuStepParts(ranks).Us(); }

  // The whole step in microseconds: `gpu` with the engine's host work for
  // `most_seqs` sequences on the busiest rank, composed as the engine runs
  // them (overlapped or added; an eager step's launches on the scheduler's
  // thread or beside it), times the planning margin.
  double StepUs(const GpuStep& gpu, int64_t most_seqs) const;

  // `batch` as its CUDA graph runs it: padded to the next captured size
  // (a decode batch's sequences; a mixed batch's tokens where graphs cover
  // mixed batches, as RankBatch::padding_tokens). False, and `padded`
  // untouched, when it runs as given (eagerly, or at a captured size).
  bool PadForCudaGraph(const models::RankBatch& batch, models::RankBatch& padded) const;
  // The batch's size in the units of the captured sizes: sequences for a
  // decode batch (tokens where graph_sizes_count_tokens), tokens otherwise.
  int64_t GraphSize(const models::RankBatch& batch, bool all_decode, int64_t tokens) const;

  // Tokens entering the MoE of a step over `ranks` lockstep ranks: their sum,
  // or every rank padded to the largest where the engine pads.
  int64_t MoeGroupTokens(int ranks, int64_t largest_rank_tokens, int64_t total_tokens) const;

  OpCost& op_cost() { return *op_cost_; }
  const StepPredictorConfig& config() const { return config_; }
  // Tokens the MoE took in the last step priced, every rank's padding
  // included: what DP padding adds to the experts' work.
  int64_t last_step_moe_tokens() const { return step_moe_tokens_; }
  // What a step charges for `op` costing `us` (before the prefill path's
  // stretch of a step's prefill work): `us` times its kind's fitted factor;
  // a collective across nodes at InfiniBand's roofline, never below the same
  // collective on NVLink with that factor.
  double ChargedUs(const models::Op& op, double us);

 private:
  StepPredictorConfig config_;
  std::unique_ptr<OpCost> op_cost_;
  // config_.graph, with the MoE's routing tokens set for a baseline; and the
  // same for an idle rank's dummy token.
  models::OpGraphOptions graph_;
  models::OpGraphOptions idle_graph_;
  int64_t last_moe_tokens_ = 0;          // MoE tokens of the last MeasuredGpuStep
  int64_t step_moe_tokens_ = 0;          // ... of the last step's own batch (not a baseline)
  int64_t baseline_routing_tokens_ = 0;  // the whole step's, while its baseline is timed
  std::vector<models::RankBatch> scratch_;
  std::vector<models::RankBatch> baseline_scratch_;
  std::vector<models::Op> ops_;  // the op list being timed, its storage reused
  bool linear_only_ = false;  // MeasuredGpuStep prices only token-linear ops
  const std::string* only_kind_ = nullptr;  // ... or times only this kind, no eager floor
  // OpCost's per-slot cache is keyed by an op's position in its list. The
  // step's whole batch, its token-linear part and its baseline (decodes and
  // weight-reading rows) are different lists, as are the DP ranks' batches:
  // each (evaluation, rank) gets its own range of slots, else they evict each
  // other every step.
  static constexpr size_t kSlotStride = 1024;
  static constexpr size_t kEvaluations = 3;
  static constexpr size_t kCachedRanks = 64;
  size_t evaluation_ = 0;  // 0 whole step, 1 token-linear part, 2 baseline
  // The ranks' batches as measured (prefill unscaled).
  GpuStep MeasuredGpuStep(std::span<const models::RankBatch> ranks);
  // Whether a batch of these tokens replays a captured CUDA graph.
  bool Graphed(const models::RankBatch& batch, bool all_decode, int64_t tokens) const;
  // PadForCudaGraph for a graphed batch whose shape is known (the step's
  // hot path, which has counted it already), to the captured size that holds
  // max(its own size, at_least_size).
  bool PadGraphed(const models::RankBatch& batch, bool all_decode, int64_t tokens,
                  int64_t at_least_size, models::RankBatch& padded) const;
  models::RankBatch scratch_padded_;  // padding of a rank whose batch is already its own
};

}  // namespace servesim::cost

#endif  // SERVESIM_SIM_COST_STEP_PREDICTOR_H_
