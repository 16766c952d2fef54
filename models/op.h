// One kernel or collective of an iteration, as one GPU runs it.
//
// The op graph (op_graph.h) lists these for a batch on a layout; the cost model
// (sim/cost) times each from the calibration profile. `kind` names the profile
// table, `key` its fixed dimensions and `x` the swept dimension the table is
// interpolated in. The table-name contract lives in docs/profile-tables.md.
#ifndef SERVESIM_MODELS_OP_H_
#define SERVESIM_MODELS_OP_H_

#include <cmath>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace servesim::models {

// Which part of the layer an op belongs to; used for the `explain` breakdown
// and for lockstep composition across DP ranks (attention is per rank, the
// MoE and its collectives wait for the slowest rank).
// kOther stays last: StepPredictor sizes its per-phase arrays by it.
enum class OpPhase { kAttention, kMoe, kDense, kCommunication, kHead, kOther };

// A fixed dimension of a profile table, e.g. {"n", 2112}.
using OpKeyDim = std::pair<std::string, int64_t>;

struct Op {
  std::string name;             // e.g. "q_b_proj", "indexer_decode", "moe_all_gather"
  std::string kind;             // profile table: "gemm_fp8", "sparse_mla_decode", "all_reduce", ...
  std::vector<OpKeyDim> key;    // fixed dims, sorted by name
  double x = 0;                 // swept dim (tokens, entries, bytes: per kind)
  double flops = 0;             // for the roofline fallback
  double hbm_bytes = 0;         // bytes through device memory, for the roofline fallback
  double comm_bytes = 0;        // collectives: = x (all_reduce buffer, all_gather input shard,
                                // reduce_scatter output shard, all_to_all bytes sent)
  int comm_group_gpus = 1;      // GPUs in the collective's group
  bool comm_spans_nodes = false;  // its GPUs sit on more than one node (op_cost.h SpansNodes)
  bool fp8_math = false;        // tensor-core math in FP8 (else BF16/FP32)
  double longest_row = 0;       // topk: keys of the longest row selected; one thread block
                                // selects a row, so the op takes at least that row's time
  double routed_pairs = 0;      // grouped GEMMs: token-expert pairs whose routing sets the
                                // experts read, where more than x; 0 = x
  int repeat = 1;               // times it runs per iteration (layers of this kind)
  OpPhase phase = OpPhase::kOther;
  // Its work grows with the step's tokens (GEMMs, MoE, norms, collectives).
  // False for attention and the indexer, whose work grows with each row's
  // keys, and for the head (LM head, its gathers, the sampler), which runs
  // once per sampled sequence: the prefill factors leave those unstretched
  // (sim/cost/step_predictor.cc).
  bool token_linear = true;
};

// Experts that `pairs` token-expert pairs touch among `experts` when the
// router spreads them at random: each expert is missed with probability
// (1 - 1/experts)^pairs ~ e^(-pairs/experts). The calibration's uniform
// routing touches min(pairs, experts), which overstates the expert weights a
// small batch reads: 10 decode tokens (80 pairs) on TP8's 256 experts touch
// about 69, not 80; 32 tokens about 162, not 256.
inline double ExpectedExpertsTouched(double pairs, double experts) {
  if (pairs <= 0 || experts <= 0) return 0;
  return experts * -std::expm1(-pairs / experts);
}

}  // namespace servesim::models

#endif  // SERVESIM_MODELS_OP_H_
