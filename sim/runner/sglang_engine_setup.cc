// SGLang v0.5.6.post2 on DeepSeek-V3.2: layout, KV pool, DP-attention ranks,
// scheduler and NSA kernels (engine-defaults.md §C2, model-and-kernels.md §4).
#include <algorithm>
#include <functional>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/status_macros.h"
#include "sim/engine/sglang_replica_scheduler.h"
#include "sim/runner/engine_setup.h"

namespace servesim::runner {
namespace {

bool IsFlashMla(const std::string& nsa_backend) { return nsa_backend.rfind("flashmla", 0) == 0; }

// FlashMLA's sparse kernels take 64 or 128 query heads on SM90: SGLang pads
// the heads of a rank up to 64 for them; FA3 and TileLang take any count.
int HeadPaddingFor(const std::string& nsa_backend) { return IsFlashMla(nsa_backend) ? 64 : 1; }

// max_running_requests unset: ModelRunner.init_memory_pool sizes the
// request pool as clamp(pool / context_len * 512, 2048, 4096), and the
// worker takes min(pool // 2, that) [U: the //2 is from newer copies].
int64_t SglangMaxRunningRequests(const scenarios::EngineConfig& config, int64_t pool_tokens) {
  if (config.max_num_seqs() != 0) return config.max_num_seqs();
  const int64_t by_context = std::clamp<int64_t>(
      static_cast<int64_t>(static_cast<double>(pool_tokens) / config.max_model_len() * 512), 2048,
      4096);
  return std::max<int64_t>(1, std::min(pool_tokens / 2, by_context));
}

// The requests SGLang turns away, with its message ("" for none):
// tokenizer_manager._validate_one_request, and a request no rank's pool holds.
std::function<std::string(const serving::ClientRequest&)> SglangRejectReason(int64_t context_len,
                                                                             int64_t pool_tokens) {
  return [context_len, pool_tokens](const serving::ClientRequest& r) {
    if (r.prompt_tokens >= context_len) {
      return absl::StrCat("The input (", r.prompt_tokens,
                          " tokens) is longer than the model's context length (", context_len,
                          " tokens).");
    }
    if (r.prompt_tokens + r.max_completion() >= context_len) {
      return absl::StrCat("Requested token count exceeds the model's maximum context length of ",
                          context_len, " tokens. You requested a total of ",
                          r.prompt_tokens + r.max_completion(), " tokens: ", r.prompt_tokens,
                          " tokens from the input messages and ", r.max_completion(),
                          " tokens for the completion.");
    }
    // A request longer than one rank's whole pool could never run [U: SGLang
    // caps inputs at max_total_num_tokens - 1 and would retract forever].
    if (r.prompt_tokens + r.max_completion() > pool_tokens) {
      return absl::StrCat("The request (", r.prompt_tokens + r.max_completion(),
                          " tokens) is larger than the KV pool (", pool_tokens, " tokens).");
    }
    return std::string();
  };
}

}  // namespace

absl::StatusOr<EngineSetup> SetupSglang(const scenarios::EngineConfig& config,
                                        const models::ModelSpec& spec) {
  EngineSetup s;
  absl::StatusOr<models::ParallelLayout> layout =
      models::SglangLayout(spec, config.tp(), config.dp(), config.enable_dp_attention(),
                           config.ep(), config.moe_dense_tp(), config.gpus_per_node() * config.nnodes());
  if (!layout.ok()) {
    if (layout.status().code() == absl::StatusCode::kUnimplemented) return layout.status();
    return AsEngineRefusal(layout.status());
  }
  s.layout = *layout;

  const models::KvCacheDtype kv_dtype = ToModelKvDtype(config.kv_cache_dtype());
  const bool speculative = config.num_speculative_tokens() > 0;
  models::SglangMemoryConfig memory;
  memory.mem_fraction_static = config.gpu_memory_fraction();  // 0: the heuristic
  // The heuristic reads chunked_prefill_size before the //dp_size.
  memory.chunked_prefill_size = config.chunked_prefill_size_before_dp();
  memory.cuda_graph_max_bs = config.cuda_graph_max_bs();
  memory.speculative = speculative;
  memory.kv_dtype = kv_dtype;
  memory.page_tokens = config.kv_block_size();
  const double fraction = config.gpu_memory_fraction() > 0
                              ? config.gpu_memory_fraction()
                              : models::SglangMemFractionStatic(s.layout, memory);
  absl::StatusOr<models::KvBudget> kv = models::SglangKvBudget(spec, s.layout, memory);
  if (!kv.ok()) return AsEngineRefusal(kv.status());
  s.kv = *kv;
  s.kv_blocks_per_rank = kv->kv_capacity_tokens / config.kv_block_size();
  const int64_t pool_tokens = s.kv_blocks_per_rank * config.kv_block_size();

  const int64_t max_running = SglangMaxRunningRequests(config, pool_tokens);

  const int ranks = s.layout.attn_dp;
  s.topology.num_ranks = ranks;
  // DP-attention ranks share the MoE: every rank joins each MoE step, idle
  // ones with an empty batch. The data-parallel controller deals requests
  // round robin (load_balance_method default).
  s.topology.lockstep = ranks > 1;
  // With speculative decoding, get_next_batch_to_run syncs the ranks
  // (prepare_mlp_sync_batch) before it decodes: "prefill and decode batches
  // will not be mixed when spec and dp-attn is enabled"; a rank without a
  // prefill runs an idle batch while another prefills [U: recalled, not read
  // at v0.5.6.post2].
  s.topology.ranks_agree_on_phase = ranks > 1 && config.num_speculative_tokens() > 0;
  s.topology.router = serving::RouterPolicy::kRoundRobin;
  // serving_chat.py _generate_chat_stream: a role message before the first
  // content, and after the last a finish_reason message of its own (empty delta).
  s.topology.chat_stream = {.role_message_first = true, .finish_message_last = true};
  engine::SglangSchedulerConfig sched;
  sched.chunked_prefill_size = config.chunked_prefill() ? config.max_num_batched_tokens() : -1;
  sched.max_prefill_tokens = config.max_prefill_tokens();
  sched.max_running_requests = max_running;
  s.max_running_per_rank = max_running;
  sched.kv_blocks = s.kv_blocks_per_rank;
  sched.page_size_tokens = config.kv_block_size();
  sched.SetConservativeness(config.schedule_conservativeness());
  sched.enable_mixed_chunk = config.enable_mixed_chunk();
  s.topology.prefill_steps_hold_no_decodes = !config.enable_mixed_chunk();
  sched.radix_cache = config.prefix_caching();
  sched.spec = {config.num_speculative_tokens(), config.mean_accepted_drafts()};
  s.topology.make_scheduler = [sched](int, size_t n) {
    return std::make_unique<engine::SglangReplicaScheduler>(sched, n);
  };
  s.topology.reject_reason = SglangRejectReason(config.max_model_len(), pool_tokens);

  cost::StepPredictorConfig& p = s.predictor;
  p.graph.kv_dtype = kv_dtype;
  // SGLang prefills with dense MHA (FA3 varlen) instead of the sparse path
  // when the batch's longest sequence has at most 2048 tokens
  // (model-and-kernels.md §4.2; handle_attention_nsa takes seq_lens.max()
  // [U: recalled, not read at v0.5.6.post2]).
  p.graph.dense_mha_prefill_max_tokens = 2048;
  p.graph.dense_mha_prefill_whole_batch = true;
  // The decode graph runs the model's forward, logits included; the sampler
  // runs outside it on the real rows.
  p.graph.lm_head_in_graph = true;
  p.graph.min_sparse_decode_heads = HeadPaddingFor(config.decode_attention_backend());
  p.graph.min_sparse_prefill_heads = HeadPaddingFor(config.prefill_attention_backend());
  // FlashMLA walks every top-k slot of a row; fa3 gets each row's real
  // length (min(context, top-k)) as its cache length.
  p.graph.sparse_decode_full_topk = IsFlashMla(config.decode_attention_backend());
  p.graph.sparse_prefill_full_topk = IsFlashMla(config.prefill_attention_backend());
  p.graph.fp8_gemms = true;  // DeepGEMM is mandatory for this model in SGLang
  const bool quantizes_cache = SglangQuantizesKvCacheEachDecode(config);
  if (quantizes_cache) p.graph.decode_quantizes_kv_pool_tokens = pool_tokens;
  p.graphs_cover_mixed_batches = false;  // SGLang captures decode batches only
  p.pad_moe_tokens_to_max_rank = false;  // DP attention gathers each rank's real tokens
  // Under DP attention prepare_mlp_sync_batch gathers each rank's
  // can_cuda_graph and keeps the minimum: a step in which any rank extends
  // runs every rank eager. Graphed, each rank pads to the captured size of
  // the largest rank's batch (cuda_graph_runner's replay_prepare takes the
  // max of global_num_tokens), and the MoE gathers those padded tokens
  // [U: recalled, not read at v0.5.6.post2].
  p.graph_choice_shared_by_ranks = ranks > 1;
  p.graphs_pad_to_largest_rank = ranks > 1;

  s.notes.push_back(absl::StrFormat(
      "mem_fraction_static %.3f%s; max_running_requests %d per DP rank; chunked prefill %s per "
      "rank; new_token_ratio init %.4f min %.4f",
      fraction, config.gpu_memory_fraction() > 0 ? "" : " (SGLang memory heuristic)", max_running,
      config.chunked_prefill() ? absl::StrCat(config.max_num_batched_tokens(), " tokens") : "off",
      sched.init_new_token_ratio, sched.min_new_token_ratio));
  s.notes.push_back(absl::StrCat(
      "attention: ",
      DescribeAttention(
          spec,
          absl::StrCat("nsa (prefill ", config.prefill_attention_backend(), ", decode ",
                       config.decode_attention_backend(),
                       "; dense MHA when a prefill batch's longest sequence is <= 2048 tokens)")),
      "; CUDA graphs ",
      config.cuda_graph_sizes().empty() ? std::string("off")
                                        : absl::StrCat("up to ", config.cuda_graph_max_bs()),
      " (decode only); overlap scheduler ", config.overlap_schedule() ? "on" : "off",
      "; DP dispatch round robin",
      quantizes_cache ? absl::StrCat("; every decode pass first quantizes each layer's whole BF16 "
                                     "KV pool (",
                                     pool_tokens, " tokens) to FlashMLA's FP8 layout")
                      : ""));
  return s;
}

}  // namespace servesim::runner
