#include "calibration/table_contract.h"

namespace servesim::calibration {

const std::vector<TableContract>& TableContracts() {
  // The x names are the ones servesim_calibrate (calibration/cuda) and
  // calibration/host/launch_overhead_bench.py write; dense_mla_decode is not
  // measured yet and takes indexer_decode's name for the same sum.
  static const auto* kContracts = new std::vector<TableContract>{
      {"copy_d2d", {}, "bytes_copied"},
      {"gemm_fp8", {{"k"}, {"n"}}, "m_tokens"},
      {"gemm_bf16", {{"k"}, {"n"}}, "m_tokens"},
      {"grouped_gemm_fp8", {{"experts"}, {"k"}, {"n"}}, "total_routed_tokens"},
      {"sparse_mla_decode", {{"heads"}, {"kv_fp8", true}}, "sum_gathered_entries"},
      {"sparse_mla_prefill", {{"heads"}}, "query_tokens_x_2048"},
      {"dense_mha_prefill", {{"heads"}}, "causal_pairs"},
      {"indexer_decode", {{"heads"}}, "sum_context_keys"},
      {"indexer_prefill", {{"heads"}}, "causal_pairs"},
      {"topk", {{"k"}}, "sum_scored_keys"},
      {"topk_row", {{"k"}}, "row_keys"},
      {"rmsnorm", {{"hidden"}}, "tokens"},
      {"rope", {{"dim"}}, "tokens_x_heads"},
      {"silu_mul", {{"width"}}, "tokens"},
      {"router_topk", {{"experts"}}, "tokens"},
      {"sampling", {{"vocab"}}, "sequences"},
      {"sampling_top_p", {{"vocab"}}, "sequences"},
      {"all_reduce", {{"gpus"}}, "bytes_per_gpu"},
      {"all_gather", {{"gpus"}}, "bytes_per_gpu"},
      {"reduce_scatter", {{"gpus"}}, "bytes_per_gpu"},
      {"all_to_all", {{"gpus"}}, "bytes_per_gpu"},
      {"batched_gemm_bf16", {{"batch"}, {"k"}, {"n"}}, "m_tokens"},
      {"dense_mla_decode", {{"heads"}, {"kv_fp8", true}}, "sum_context_keys"},
      {"host_launch", {{"compiled", true}}, "kernels"},
  };
  return *kContracts;
}

const TableContract* FindTableContract(std::string_view kind) {
  for (const TableContract& c : TableContracts()) {
    if (c.kind == kind) return &c;
  }
  return nullptr;
}

}  // namespace servesim::calibration
