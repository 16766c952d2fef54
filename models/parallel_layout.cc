#include "models/parallel_layout.h"

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "base/status_macros.h"

namespace servesim::models {
namespace {

absl::Status Positive(const char* engine, const char* flag, int value) {
  if (value > 0) return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrCat(engine, ": ", flag, ": must be > 0, got ", value));
}

// Rules every engine enforces in some form.
absl::Status CheckCommon(const char* engine, const ModelSpec& spec,
                         const ParallelLayout& l, int gpus_per_node) {
  if (l.gpus > gpus_per_node) {
    return absl::InvalidArgumentError(
        absl::StrCat(engine, ": layout needs ", l.gpus, " GPUs but a node has ",
                     gpus_per_node, " (multi-node serving not requested)"));
  }
  if (spec.mla().num_heads() % l.attn_tp != 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        engine, ": total number of attention heads (", spec.mla().num_heads(),
        ") must be divisible by attention tensor parallel size (", l.attn_tp,
        ")"));
  }
  const int experts = spec.moe().num_routed_experts();
  if (l.moe_ep > experts || experts % l.moe_ep != 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        engine, ": number of experts (", experts,
        ") must be divisible by expert parallel size (", l.moe_ep, ")"));
  }
  if (spec.moe().expert_intermediate_size() % l.moe_tp != 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        engine, ": expert intermediate size (",
        spec.moe().expert_intermediate_size(),
        ") must be divisible by MoE tensor parallel size (", l.moe_tp, ")"));
  }
  if (spec.num_dense_layers() > 0 &&
      spec.dense_intermediate_size() % l.dense_tp != 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        engine, ": dense intermediate size (", spec.dense_intermediate_size(),
        ") must be divisible by dense tensor parallel size (", l.dense_tp,
        ")"));
  }
  // A block-quantised weight is cut into whole blocks: each GPU's slice of
  // the experts' gate/up output and of the dense MLP's must be a multiple of
  // the block (vLLM's and SGLang's Fp8MoEMethod / Fp8LinearMethod.create_weights;
  // reached past 16-way TP, on several nodes).
  const int block_n = spec.weights().block_rows();
  if (spec.weights().quantized_dtype() == FP8_E4M3 && block_n > 0) {
    const int64_t expert_slice = spec.moe().expert_intermediate_size() / l.moe_tp;
    if (expert_slice % block_n != 0) {
      return absl::FailedPreconditionError(
          absl::StrCat(engine, ": The output_size of gate's and up's weight = ", expert_slice,
                       " is not divisible by weight quantization block_n = ", block_n, "."));
    }
    const int64_t shared_slice = spec.moe().expert_intermediate_size() / l.shared_tp;
    if (spec.moe().num_shared_experts() > 0 && shared_slice % block_n != 0) {
      return absl::FailedPreconditionError(
          absl::StrCat(engine, ": Weight output_partition_size = ", shared_slice,
                       " is not divisible by weight quantization block_n = ", block_n,
                       ". (the shared expert at tensor parallel size ", l.shared_tp, ")"));
    }
    if (spec.num_dense_layers() > 0 &&
        (spec.dense_intermediate_size() / l.dense_tp) % block_n != 0) {
      return absl::FailedPreconditionError(absl::StrCat(
          engine, ": Weight output_partition_size = ", spec.dense_intermediate_size() / l.dense_tp,
          " is not divisible by weight quantization block_n = ", block_n, "."));
    }
  }
  return absl::OkStatus();
}

}  // namespace

const char* MoeCommName(ParallelLayout::MoeComm comm) {
  switch (comm) {
    case ParallelLayout::MoeComm::kAllReduce:
      return "allreduce";
    case ParallelLayout::MoeComm::kAllGatherReduceScatter:
      return "allgather/reducescatter";
    case ParallelLayout::MoeComm::kAllToAll:
      return "alltoall";
  }
  return "?";
}

std::string ParallelLayout::Describe() const {
  return absl::StrCat(
      "gpus=", gpus, " attn TP", attn_tp, "xDP", attn_dp, ", MoE TP", moe_tp,
      "xEP", moe_ep, " (", MoeCommName(moe_comm),
      moe_comm == MoeComm::kAllGatherReduceScatter && moe_gather_in_dp_group && attn_tp > 1
          ? absl::StrCat(" over DP", attn_dp, ", then TP", attn_tp, " allreduce")
          : "",
      "), dense TP", dense_tp,
      ", shared TP", shared_tp, ", lm_head ", lm_head_dp ? "DP" : "TP-all");
}

absl::StatusOr<ParallelLayout> VllmLayout(const ModelSpec& spec, int tp, int dp,
                                          bool enable_expert_parallel,
                                          int gpus_per_node) {
  RETURN_IF_ERROR(Positive("vllm", "--tensor-parallel-size", tp));
  RETURN_IF_ERROR(Positive("vllm", "--data-parallel-size", dp));
  ParallelLayout l;
  l.gpus = tp * dp;
  l.attn_tp = tp;
  l.attn_dp = dp;
  l.dense_tp = tp;  // dense MLP and shared expert: TP within the DP rank
  l.shared_tp = tp;
  l.lm_head_dp = true;  // each DP rank samples its own requests
  if (enable_expert_parallel) {
    l.moe_ep = tp * dp;
    l.moe_tp = 1;
  } else {
    l.moe_ep = 1;
    l.moe_tp = tp * dp;  // flatten_tp_across_dp
  }
  l.moe_comm = dp > 1 ? ParallelLayout::MoeComm::kAllGatherReduceScatter
                      : ParallelLayout::MoeComm::kAllReduce;
  l.moe_gather_in_dp_group = true;
  const int experts = spec.moe().num_routed_experts();
  if (l.moe_ep <= experts && experts % l.moe_ep != 0) {
    // vLLM's determine_expert_map gives the first ranks one expert more
    // rather than refusing as CheckCommon's rule does [U: recalled from
    // late-2025 source].
    return absl::UnimplementedError(absl::StrCat(
        "vllm: ", experts, " experts over expert parallel size ", l.moe_ep,
        ": vLLM places the remainder on the first ranks; servesim does not model uneven "
        "expert placement"));
  }
  RETURN_IF_ERROR(CheckCommon("vllm", spec, l, gpus_per_node));
  return l;
}

absl::StatusOr<ParallelLayout> SglangLayout(const ModelSpec& spec, int tp,
                                            int dp, bool enable_dp_attention,
                                            int ep, int moe_dense_tp,
                                            int gpus_per_node) {
  RETURN_IF_ERROR(Positive("sglang", "--tp-size", tp));
  RETURN_IF_ERROR(Positive("sglang", "--dp-size", dp));
  RETURN_IF_ERROR(Positive("sglang", "--ep-size", ep));
  // server_args._handle_data_parallelism: dp 1 turns DP attention off.
  if (dp == 1) enable_dp_attention = false;
  if (dp > 1 && !enable_dp_attention) {
    return absl::UnimplementedError(absl::StrCat(
        "sglang: --dp-size ", dp, " without --enable-dp-attention runs ", dp,
        " independent replicas of ", tp,
        " GPUs; simulate one replica instead"));
  }
  if (tp % dp != 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "sglang: tp_size (", tp, ") must be divisible by dp_size (", dp, ")"));
  }
  if (tp % ep != 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "sglang: tp_size (", tp, ") must be divisible by ep_size (", ep, ")"));
  }
  if (moe_dense_tp != 0 && moe_dense_tp != 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        "sglang: moe_dense_tp_size only support 1 and None currently, got ",
        moe_dense_tp));
  }
  ParallelLayout l;
  l.gpus = tp;
  l.attn_tp = enable_dp_attention ? tp / dp : tp;
  l.attn_dp = enable_dp_attention ? dp : 1;
  l.moe_ep = ep;
  l.moe_tp = tp / ep;
  l.dense_tp = moe_dense_tp == 1 ? 1 : tp;
  // The shared expert lives in the MoE block, TP over the whole tp group unless
  // DeepEP is used (not modelled here).
  l.shared_tp = tp;
  l.moe_comm = l.attn_dp > 1 ? ParallelLayout::MoeComm::kAllGatherReduceScatter
                             : ParallelLayout::MoeComm::kAllReduce;
  l.lm_head_dp = false;  // --enable-dp-lm-head defaults off
  RETURN_IF_ERROR(CheckCommon("sglang", spec, l, gpus_per_node));
  return l;
}

absl::StatusOr<ParallelLayout> TrtllmLayout(const ModelSpec& spec, int tp,
                                            int ep, int pp, bool attention_dp,
                                            int gpus_per_node) {
  RETURN_IF_ERROR(Positive("trtllm", "--tp_size", tp));
  RETURN_IF_ERROR(Positive("trtllm", "--ep_size", ep));
  RETURN_IF_ERROR(Positive("trtllm", "--pp_size", pp));
  if (tp % ep != 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "trtllm: moe_tp_size * moe_ep_size must equal tp_size: tp_size (", tp,
        ") is not divisible by ep_size (", ep, ")"));
  }
  if (pp != 1) {
    return absl::UnimplementedError(absl::StrCat(
        "trtllm: --pp_size ", pp, ": pipeline parallelism is not modelled"));
  }
  ParallelLayout l;
  l.gpus = tp * pp;
  l.attn_tp = attention_dp ? 1 : tp;
  l.attn_dp = attention_dp ? tp : 1;
  l.moe_ep = ep;
  l.moe_tp = tp / ep;
  // With attention DP, TRT-LLM keeps the dense MLP, shared expert and LM head
  // per rank [U: read from modeling_deepseekv3.py excerpts, not pinned to 1.2].
  l.dense_tp = attention_dp ? 1 : tp;
  l.shared_tp = attention_dp ? 1 : tp;
  l.lm_head_dp = true;
  l.moe_comm = attention_dp && tp > 1
                   ? ParallelLayout::MoeComm::kAllGatherReduceScatter
                   : ParallelLayout::MoeComm::kAllReduce;
  RETURN_IF_ERROR(CheckCommon("trtllm", spec, l, gpus_per_node));
  return l;
}

}  // namespace servesim::models
