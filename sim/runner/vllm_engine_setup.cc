// vLLM v0.13 on DeepSeek-V3.2: layout, KV pool, scheduler and kernels.
#include <algorithm>
#include <string>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "sim/engine/vllm_v1_replica_scheduler.h"
#include "sim/runner/engine_setup.h"

namespace servesim::runner {

namespace {

// How vLLM samples the requests: whether its sampler sorts each row's
// vocabulary, and the header's words for it.
struct VllmSampler {
  bool sorts_vocab = false;
  std::string description;
};

// A request's top_p is its own, else the generation config's (DeepSeek's
// asks for 0.95) under --generation-config auto. vLLM's PyTorch sampler then
// sorts each row's ~129k logits (the `sampling_top_p` table: 17 ms for 1024
// rows on the H200); greedy requests take the argmax and no top-p at all.
VllmSampler VllmSamplerOf(const scenarios::EngineConfig& config, const models::ModelSpec& spec) {
  const bool from_request = config.has_request_top_p();
  const double top_p = from_request                         ? config.request_top_p()
                       : config.applies_generation_config() ? spec.generation_top_p()
                                                            : 0.0;
  const bool nucleus = !config.greedy_requests() && top_p > 0 && top_p < 1;
  VllmSampler sampler;
  sampler.sorts_vocab = nucleus && config.sampler_sorts_vocab();
  sampler.description = "no top-p (no sort)";
  if (config.greedy_requests()) {
    sampler.description = "greedy (argmax, no top-p)";
  } else if (nucleus) {
    sampler.description = absl::StrCat(
        "top_p ", top_p, from_request ? " from the requests" : " from generation_config",
        sampler.sorts_vocab ? ", PyTorch sort over the vocabulary" : ", FlashInfer (no sort)");
  }
  return sampler;
}

}  // namespace

absl::StatusOr<EngineSetup> SetupVllm(const scenarios::EngineConfig& config,
                                      const models::ModelSpec& spec) {
  EngineSetup s;
  absl::StatusOr<models::ParallelLayout> layout = models::VllmLayout(
      spec, config.tp(), config.dp(), config.enable_expert_parallel(), config.gpus_per_node() * config.nnodes());
  if (!layout.ok()) return AsEngineRefusal(layout.status());
  s.layout = *layout;

  const models::KvCacheDtype kv_dtype = ToModelKvDtype(config.kv_cache_dtype());
  models::VllmMemoryConfig memory;
  memory.gpu_memory_utilization = config.gpu_memory_fraction();
  memory.max_num_batched_tokens = config.max_num_batched_tokens();
  memory.max_num_seqs = config.max_num_seqs();
  memory.max_model_len = config.max_model_len();
  memory.kv_block_tokens = config.kv_block_size();
  memory.kv_dtype = kv_dtype;
  memory.with_mtp = config.num_speculative_tokens() > 0;
  memory.cuda_graph_max_tokens = std::max(config.cuda_graph_max_bs(), 0);
  // VLLM_FUSED_MOE_CHUNK_SIZE: 64 * 1024 in vllm/envs.py of late-2025 releases
  // (32768 in older ones) [U: recalled, not re-read for v0.13.0].
  memory.fused_moe_chunk_tokens = 65536;
  absl::StatusOr<models::KvBudget> kv = models::VllmKvBudget(spec, s.layout, memory);
  if (!kv.ok()) return AsEngineRefusal(kv.status());
  RETURN_IF_ERROR(AsEngineRefusal(models::VllmCheckMaxModelLen(spec, memory, *kv)));
  s.kv = *kv;
  s.kv_blocks_per_rank = kv->kv_capacity_tokens / config.kv_block_size();

  const int ranks = s.layout.attn_dp;
  s.topology.num_ranks = ranks;
  // DP ranks of an MoE model step together: the MoE spans them, and an idle
  // rank runs a dummy batch (vLLM's DP coordinator).
  s.topology.lockstep = ranks > 1;
  s.topology.router = serving::RouterPolicy::kLeastLoaded;
  // Under --async-scheduling the scheduler counts the tokens in flight, so a
  // request at its max_tokens is not scheduled again [U: recalled, AsyncScheduler].
  s.topology.sees_length_stops_ahead = true;
  // serving_chat.py chat_completion_stream_generator: the role message on the
  // first iteration; the finish_reason rides on the last token's message.
  s.topology.chat_stream = {.role_message_first = true, .finish_message_last = false};
  engine::VllmSchedulerConfig sched;
  sched.max_num_batched_tokens = config.max_num_batched_tokens();
  sched.max_num_seqs = config.max_num_seqs();
  s.max_running_per_rank = config.max_num_seqs();
  sched.kv_blocks = s.kv_blocks_per_rank;
  sched.block_size_tokens = config.kv_block_size();
  sched.prefix_caching = config.prefix_caching();
  sched.spec = {config.num_speculative_tokens(), config.mean_accepted_drafts()};
  s.topology.make_scheduler = [sched](int, size_t n) {
    return std::make_unique<engine::VllmV1ReplicaScheduler>(sched, n);
  };
  const int64_t max_model_len = config.max_model_len();
  s.topology.reject_reason = [max_model_len](const serving::ClientRequest& r) {
    return ContextLengthRejection(max_model_len, r.prompt_tokens, r.max_completion());
  };

  cost::StepPredictorConfig& p = s.predictor;
  p.graph.kv_dtype = kv_dtype;
  // v0.13's FlashMLA sparse backend sends every row of a step, prefill and
  // decode, through one kernel (FlashMLASparseImpl: the BF16 sparse prefill
  // kernel on a BF16 latent cache, the FP8 decode kernel on fp8_ds_mla), with
  // heads padded to 64 on Hopper and every row walking the whole top-k. No
  // dense-MHA path for short prefills: use_dense_mha and the split "mixed
  // batch" came after v0.13 [U] (model-and-kernels.md, V1 is newer).
  p.graph.dense_mha_prefill_max_tokens = 0;
  const bool fp8_cache = kv_dtype == models::KvCacheDtype::kFp8DsMla;
  p.graph.sparse_kernel_routing = fp8_cache ? models::SparseKernelRouting::kAllOnDecodeKernel
                                            : models::SparseKernelRouting::kAllOnPrefillKernel;
  p.graph.sparse_prefill_full_topk = true;
  p.graph.sparse_decode_full_topk = true;
  p.graph.min_sparse_decode_heads = 64;
  p.graph.min_sparse_prefill_heads = 64;
  p.graph.fp8_gemms = true;  // DeepGEMM off falls back to CUTLASS FP8, not BF16
  // The decode indexer's logits span max_model_len and are cleaned to -inf
  // past each row's context (DeepGEMM's indexer kernels run whatever
  // VLLM_USE_DEEP_GEMM says: it switches the GEMMs).
  p.graph.decode_logits_width = max_model_len;
  const VllmSampler sampler = VllmSamplerOf(config, spec);
  p.graph.sampler_sorts_vocab = sampler.sorts_vocab;
  p.graphs_cover_mixed_batches = true;  // FULL_AND_PIECEWISE
  p.graph.short_chunks_run_as_decodes = true;
  p.graph_sizes_count_tokens = true;    // cudagraph_capture_sizes are token counts
  // DP ranks pad their tokens to the largest rank's (num_tokens_across_dp) so
  // that each can replay a CUDA graph; with --enforce-eager, which leaves no
  // capture sizes, they do not (get_dp_padding returns early for
  // enforce_eager) and gather their own.
  p.pad_moe_tokens_to_max_rank = !config.cuda_graph_sizes().empty();

  s.notes.push_back(absl::StrCat(
      "attention: ",
      DescribeAttention(
          spec, absl::StrCat("FLASHMLA_SPARSE (every row through the ",
                             fp8_cache ? "FP8 sparse decode" : "BF16 sparse prefill",
                             " kernel, heads padded to 64, the whole top-k per row; decode "
                             "indexer logits ",
                             max_model_len, " wide per row, filled with -inf past its context)")),
      "; GEMMs: ", DescribeGemms(config.deep_gemm(), "CUTLASS FP8 (VLLM_USE_DEEP_GEMM=0)"),
      "; CUDA graphs ",
      config.cuda_graph_sizes().empty()
          ? std::string("off")
          : absl::StrCat("up to ", config.cuda_graph_max_bs(), " tokens"),
      "; async scheduling ", config.overlap_schedule() ? "on" : "off",
      "; sampler: ", sampler.description));
  return s;
}

}  // namespace servesim::runner
