// How one engine replica places the model on its GPUs: attention TP/DP, MoE
// TP/EP, dense-FFN TP and the MoE's communication pattern, engine-neutral.
#ifndef SERVESIM_MODELS_PARALLEL_LAYOUT_H_
#define SERVESIM_MODELS_PARALLEL_LAYOUT_H_

#include <string>

#include "absl/status/statusor.h"
#include "models/model_spec.pb.h"

namespace servesim::models {

struct ParallelLayout {
  // How tokens reach the experts and come back.
  enum class MoeComm {
    kAllReduce,  // tokens already replicated in the group; all-reduce after
    kAllGatherReduceScatter,  // all-gather tokens across DP ranks before,
                              // reduce-scatter after
    kAllToAll,                // dispatch / combine all-to-all (DeepEP-style)
  };

  int gpus = 1;     // GPUs of one engine replica (one lockstep group)
  int attn_tp = 1;  // attention tensor parallelism (heads split this many ways)
  int attn_dp =
      1;  // attention data-parallel ranks, each with its own batch and KV pool
  int moe_tp = 1;    // each expert's width split this many ways
  int moe_ep = 1;    // experts split this many ways
  int dense_tp = 1;  // dense-FFN (layers 0..num_dense-1) tensor parallelism
  int shared_tp =
      1;  // shared-expert tensor parallelism (added field: engines differ)
  MoeComm moe_comm = MoeComm::kAllReduce;
  // kAllGatherReduceScatter with attention TP > 1: true where each GPU
  // gathers only its DP peers' tokens (at its own TP position; a DP rank's TP
  // ranks hold the same tokens) and the DP rank's TP group all-reduces the
  // experts' partial sums after the reduce-scatter (vLLM's dp_group
  // all_gatherv / reduce_scatterv); false where the gather spans the whole
  // MoE group (SGLang, whose DP-attention gather is an all-reduce of every
  // rank's tokens over all GPUs, about as many bytes at --dp 4 of 8).
  bool moe_gather_in_dp_group = false;
  // GPUs of this replica on one node (its NVLink domain), ranks placed in
  // order with TP innermost: a collective whose GPUs reach further crosses
  // InfiniBand. 0: unknown, then only a group larger than a node does
  // (GpuRates::gpus_per_node).
  int node_gpus = 0;
  // true: the LM head runs per attention-DP rank on its own tokens, vocab split
  // over attn_tp. false: vocab split over all `gpus` (hidden states gathered
  // across DP ranks when attn_dp > 1, as SGLang without --enable-dp-lm-head).
  bool lm_head_dp = true;

  // e.g. "gpus=8 attn TP1xDP8, MoE TP1xEP8 (allgather/reducescatter), dense
  // TP1, shared TP1, lm_head DP"
  std::string Describe() const;
};

const char* MoeCommName(ParallelLayout::MoeComm comm);

// vLLM v0.13: `-tp tp -dp dp [--enable-expert-parallel]`. TP inside each DP
// rank. With EP, the expert group spans tp*dp GPUs and, with dp > 1, the MoE
// all-gathers / reduce-scatters across DP ranks (default all2all backend
// allgather_reducescatter). Without EP and dp > 1, vLLM flattens the MoE's TP
// across DP (FusedMoEParallelConfig: tp_size = tp*dp) with the same
// all-gather / reduce-scatter.
absl::StatusOr<ParallelLayout> VllmLayout(const ModelSpec& spec, int tp, int dp,
                                          bool enable_expert_parallel,
                                          int gpus_per_node);

// SGLang 0.5.6: `--tp-size tp [--dp-size dp --enable-dp-attention] [--ep-size
// ep]
// [--moe-dense-tp-size moe_dense_tp]`. With DP attention tp is the GPU count
// and attention runs TP tp/dp in dp ranks; without it, dp > 1 means dp
// separate replicas of tp GPUs each (refused here: model one replica).
// moe_dense_tp: 0 = unset (dense FFN TP = tp), or 1.
absl::StatusOr<ParallelLayout> SglangLayout(const ModelSpec& spec, int tp,
                                            int dp, bool enable_dp_attention,
                                            int ep, int moe_dense_tp,
                                            int gpus_per_node);

// TensorRT-LLM 1.2 (PyTorch backend): `--tp_size tp --ep_size ep --pp_size pp`
// with `enable_attention_dp` from the YAML. MoE TP = tp/ep. pp > 1 is refused
// (not modelled).
absl::StatusOr<ParallelLayout> TrtllmLayout(const ModelSpec& spec, int tp,
                                            int ep, int pp, bool attention_dp,
                                            int gpus_per_node);

}  // namespace servesim::models

#endif  // SERVESIM_MODELS_PARALLEL_LAYOUT_H_
