#include "sim/runner/engine_setup.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "scenarios/serve_command.h"
#include "sim/cost/op_cost.h"

namespace servesim::runner {

models::KvCacheDtype ToModelKvDtype(scenarios::KvCacheDtype dtype) {
  return dtype == scenarios::KV_FP8 ? models::KvCacheDtype::kFp8DsMla
                                    : models::KvCacheDtype::kBf16;
}

absl::Status AsEngineRefusal(const absl::Status& status) {
  // What servesim does not model stays so: not the engine's refusal.
  if (status.ok() || status.code() == absl::StatusCode::kUnimplemented) return status;
  return absl::FailedPreconditionError(status.message());
}

std::string DescribeKvPool(const models::ModelSpec& spec, const models::KvBudget& kv,
                           models::KvCacheDtype dtype, int dp_ranks) {
  return absl::StrFormat(
      "KV pool: %.1f GiB per GPU = %d tokens per DP rank x %d rank(s) (%s, %d B/token%s); "
      "weights %.1f GiB per GPU",
      static_cast<double>(kv.kv_pool_bytes) / models::kGiB, kv.kv_capacity_tokens, dp_ranks,
      models::KvCacheDtypeName(dtype), kv.kv_bytes_per_token,
      spec.has_indexer() ? " incl. indexer keys" : "",
      static_cast<double>(kv.weight_bytes) / models::kGiB);
}

std::string DescribeGemms(bool deep_gemm, absl::string_view without_deep_gemm) {
  if (deep_gemm) return "DeepGEMM FP8";
  // The live pairs differ by -2.7 % (vLLM) and +5.9 % (TensorRT-LLM), inside
  // the runs' spread: no factor for the switch is fitted.
  return absl::StrCat(without_deep_gemm,
                      ", priced as the measured FP8 GEMM tables like DeepGEMM: no separate factor");
}

std::string DescribeAttention(const models::ModelSpec& spec, absl::string_view dsa_path) {
  if (spec.has_indexer()) return std::string(dsa_path);
  return "dense MLA (the model spec has no DSA indexer: prefills attend to every earlier "
         "token, decode rows read their whole context)";
}

std::string ContextLengthRejection(int64_t max_model_len, int64_t prompt_tokens,
                                   int64_t output_tokens) {
  if (prompt_tokens + output_tokens <= max_model_len) return "";
  return absl::StrCat("This model's maximum context length is ", max_model_len,
                      " tokens. However, you requested ", prompt_tokens + output_tokens,
                      " tokens (", prompt_tokens, " in the messages, ", output_tokens,
                      " in the completion).");
}

// SGLang's NSA defaults on H200 (shared/reference/engine-defaults.md §C2):
// servesim's kernels stand for these, so only the others get a factor.
constexpr char kSglangDefaultDecodeBackend[] = "fa3";
constexpr char kSglangDefaultPrefillBackend[] = "flashmla_sparse";
// Attention data parallelism's MoE gather and scatter: a time factor, and on
// vLLM a per-call latency (NonDefaultBackends says why).
constexpr char kDpGatherScatterTime[] = "moe_comm=allgather_reducescatter";
constexpr char kVllmDpCallLatency[] = "moe_comm_latency=allgather_reducescatter";

bool SglangQuantizesKvCacheEachDecode(const scenarios::EngineConfig& config) {
  return config.engine() == scenarios::SGLANG &&
         config.decode_attention_backend() == "flashmla_kv" &&
         config.kv_cache_dtype() != scenarios::KV_FP8;
}

std::vector<BackendChoice> NonDefaultBackends(const scenarios::EngineConfig& config,
                                              const models::ParallelLayout& layout) {
  std::vector<BackendChoice> out;
  // TensorRT-LLM's MoE with experts sharded by width (ep_size unset): every
  // expert runs at 1/tp of its intermediate size (N = 512 gate-up, K = 256
  // down on 8 GPUs), where its CUTLASS grouped GEMM falls far below the
  // batched GEMM servesim measured at those shapes; its DeepSeek guide
  // recommends expert parallelism [U: the size of the loss is fitted].
  // Prefill only: a decode step's MoE streams the same expert bytes per GPU
  // whether experts are split by width or by count, and the live TP and EP
  // runs decode at the same pace (median ITL 141.6 vs 142.2 ms) while their
  // TTFTs differ 2.7x. Every width split takes it (--ep_size 2 or 4 of 8
  // leaves experts at 1/4 or 1/2 width): the one live run fitted it at 1/8
  // [U: how much less a wider split loses is not measured], and without it
  // --ep_size 2 would jump from the TP8 pace to the EP8 one.
  if (config.engine() == scenarios::TRTLLM && layout.moe_tp > 1) {
    out.push_back({"moe=tensor_parallel", {"grouped_gemm_fp8"}, /*prefill_only=*/true});
  }
  // Attention data parallelism joins the ranks' tokens for the MoE by NCCL
  // all-gather and splits them back by reduce-scatter (vLLM -dp N, SGLang
  // --enable-dp-attention --dp-size N, TensorRT-LLM enable_attention_dp: the
  // layout's MoE communication, as each engine's layout rules set it),
  // every layer of every step (vLLM with CUDA graphs pads each rank to the largest; SGLang and
  // TensorRT-LLM gather each rank's own tokens: pad_moe_tokens_to_max_rank). Those
  // collectives run on the roofline (one H200 cannot measure them; their
  // small-message latency on 8 x H200 was not found, model-and-kernels.md
  // §3 [U]); the factor is the path's time relative to it. Its lower bound is
  // the wire: an all-gather's shards arrive, and a reduce-scatter's leave,
  // over the GPU's NVLink at 450 GB/s per direction at most, 370/450 = 0.82x
  // the roofline (NVLS all-reduce's 475 GB/s of bus bandwidth on 8 x H200,
  // nccl-tests#272, reduces in the switch, which a gather cannot; the bound
  // was 0.75x on that figure until an audit found the fit at 489 GB/s).
  // TP layouts' all-reduces are not scaled.
  //
  // vLLM's path is fitted as a per-call latency instead, from 1x to 100x the
  // roofline's 10 us, its bytes moving at the roofline's bandwidth: its
  // all_gatherv and reduce_scatterv are grouped per-rank ncclBroadcast and
  // ncclReduce calls (pynccl.py), and its ranks agree on their token counts
  // every step [U: recalled, not read at v0.13.0], costs per call more than
  // per byte. As a time factor (until 2026-12-07) it fitted the live runs
  // about as well (RMS log error 0.349 against 0.348 now, robust loss 1.18
  // against 1.26) and, with the prefill factor on top, priced a long
  // prompt's 940 MB gathers at ~9x the roofline, ~40 GB/s over NVLink: a
  // decode-sized cost that the single DP run's decode asked for, charged by
  // the byte.
  if (layout.moe_comm == models::ParallelLayout::MoeComm::kAllGatherReduceScatter) {
    const cost::GpuRates rates;
    const std::string roofline =
        absl::StrCat("the roofline (NCCL at ", rates.nccl_bus_gbps, " GB/s of bus bandwidth, ",
                     rates.collective_latency_us, " us a call)");
    if (config.engine() == scenarios::VLLM) {
      out.push_back({kVllmDpCallLatency,
                     {"all_gather", "reduce_scatter"},
                     /*prefill_only=*/false,
                     /*min_time_scale=*/1.0,
                     roofline,
                     /*max_time_scale=*/100.0,
                     /*scales_call_latency=*/true});
    } else {
      out.push_back({kDpGatherScatterTime,
                     {"all_gather", "reduce_scatter"},
                     /*prefill_only=*/false,
                     /*min_time_scale=*/rates.nccl_bus_gbps / rates.nvlink_gbps,
                     roofline});
    }
  }
  if (config.engine() == scenarios::SGLANG) {
    // SGLang's NSA defaults on H200: prefill flashmla_sparse, decode fa3
    // (shared/reference/engine-defaults.md §C2); servesim's kernels stand for those.
    // flashmla_kv runs FlashMLA's FP8 sparse decode, which the profile
    // measures; on a BF16 cache what it adds is the whole-cache quantize
    // pass, whose speed is the fitted part.
    const std::string& decode = config.decode_attention_backend();
    if (decode == "flashmla_kv") {
      if (SglangQuantizesKvCacheEachDecode(config)) {
        out.push_back({"nsa_decode=flashmla_kv", {"kv_cache_quantize"}, /*prefill_only=*/false,
                       /*min_time_scale=*/1.0});
      }
    } else if (!decode.empty() && decode != kSglangDefaultDecodeBackend) {
      out.push_back({absl::StrCat("nsa_decode=", decode), {"sparse_mla_decode"}});
    }
    if (!config.prefill_attention_backend().empty() &&
        config.prefill_attention_backend() != kSglangDefaultPrefillBackend) {
      out.push_back({absl::StrCat("nsa_prefill=", config.prefill_attention_backend()),
                     {"sparse_mla_prefill"}});
    }
  }
  return out;
}

std::vector<std::string> FittableBackendNames(scenarios::EngineKind engine) {
  // vLLM's factor has a name of its own, so that a file fitted when it was a
  // time factor is refused rather than read as a latency.
  std::vector<std::string> names = {engine == scenarios::VLLM ? kVllmDpCallLatency
                                                              : kDpGatherScatterTime};
  if (engine == scenarios::TRTLLM) names.push_back("moe=tensor_parallel");
  if (engine == scenarios::SGLANG) {
    for (const std::string& b : scenarios::SglangNsaBackends()) {
      if (b != kSglangDefaultDecodeBackend) names.push_back(absl::StrCat("nsa_decode=", b));
    }
    for (const std::string& b : scenarios::SglangNsaBackends()) {
      if (b != kSglangDefaultPrefillBackend) names.push_back(absl::StrCat("nsa_prefill=", b));
    }
  }
  return names;
}

std::vector<BackendChoice> ApplyBackendFactors(const scenarios::EngineConfig& config,
                                               const scenarios::EngineParams& params,
                                               cost::StepPredictorConfig* predictor) {
  std::vector<BackendChoice> unfitted;
  for (const BackendChoice& b : NonDefaultBackends(config, predictor->layout)) {
    bool fitted = false;
    for (const scenarios::BackendFactor& f : params.backend_factors()) {
      if (f.backend() != b.name) continue;
      fitted = true;
      for (const std::string& kind : b.op_kinds) {
        (b.scales_call_latency ? predictor->kind_call_latency_scale
         : b.prefill_only      ? predictor->prefill_kind_time_scale
                               : predictor->kind_time_scale)
            .emplace_back(kind, f.time_scale());
      }
    }
    if (!fitted) unfitted.push_back(b);
  }
  return unfitted;
}

double PrefillTimeScale(const scenarios::EngineParams& params) {
  return params.prefill_time_scale() > 0 ? params.prefill_time_scale() : 1.0;
}

absl::StatusOr<EngineSetup> PrepareEngine(const scenarios::EngineConfig& config,
                                          const models::ModelSpec& spec,
                                          const scenarios::EngineParams& params) {
  // MTP drafts with the checkpoint's own next-token layers: a model without
  // them has nothing to draft with, and the step model would price none.
  if (config.num_speculative_tokens() > 0 && spec.num_mtp_layers() < 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--model-spec: ", spec.name(), " has no MTP layer (num_mtp_layers ",
        spec.num_mtp_layers(), "): ", config.speculative_method(),
        " speculative decoding drafts with the model's own MTP layer"));
  }
  absl::StatusOr<EngineSetup> setup;
  switch (config.engine()) {
    case scenarios::VLLM:
      setup = SetupVllm(config, spec);
      break;
    case scenarios::SGLANG:
      setup = SetupSglang(config, spec);
      break;
    case scenarios::TRTLLM:
      setup = SetupTrtllm(config, spec);
      break;
    default:
      return absl::InvalidArgumentError("engine not set");
  }
  if (setup.ok()) {
    // An instance over several nodes puts an equal share of its GPUs on each.
    setup->layout.node_gpus = setup->layout.gpus / std::max(config.nnodes(), 1);
    // What every engine's step model shares: the model and layout, CUDA-graph
    // sizes, speculation, and the fitted host costs.
    cost::StepPredictorConfig& p = setup->predictor;
    p.spec = spec;
    p.layout = setup->layout;
    p.cuda_graph_sizes.assign(config.cuda_graph_sizes().begin(), config.cuda_graph_sizes().end());
    p.graph.num_speculative_tokens = config.num_speculative_tokens();
    p.overheads.step_cpu_us = params.step_cpu_us();
    p.overheads.per_seq_cpu_us = params.per_seq_cpu_us();
    // eager_launch_us: PrepareRun, from the profile's measurement.
    p.prefill_time_scale = PrefillTimeScale(params);
    p.overheads.overlap_cpu = config.overlap_schedule();
    setup->topology.schedules_one_step_ahead = config.overlap_schedule();
    // vLLM's EngineCore launches the forward itself only without tensor or
    // pipeline parallelism (one process); SGLang's and TRT-LLM's schedulers
    // always do.
    p.overheads.scheduler_launches_kernels =
        config.engine() != scenarios::VLLM || config.tp() * std::max(config.pp(), 1) == 1;
    setup->notes.insert(setup->notes.begin(),
                        {absl::StrCat("layout: ", setup->layout.Describe(),
                                      config.nnodes() > 1
                                          ? absl::StrCat(", over ", config.nnodes(),
                                                         " nodes (collectives between them "
                                                         "over InfiniBand)")
                                          : std::string()),
                         DescribeKvPool(spec, setup->kv, ToModelKvDtype(config.kv_cache_dtype()),
                                        setup->layout.attn_dp)});
    setup->topology.frontend_per_request = sim::Microseconds(params.frontend_request_us());
    for (const BackendChoice& b : ApplyBackendFactors(config, params, &setup->predictor)) {
      const bool unexercised =
          std::find(params.not_fitted().begin(), params.not_fitted().end(), b.name) !=
          params.not_fitted().end();
      setup->notes.push_back(absl::StrCat(
          "no fitted factor for ", b.name,
          unexercised ? " (the live runs that select it never reach its kernel)"
                      : " (no live run selects it)",
          ": priced as ", b.unfitted_pricing));
    }
    const bool multi_node = setup->layout.node_gpus < setup->layout.gpus;
    for (const auto& [kind, scale] : setup->predictor.kind_time_scale) {
      setup->notes.push_back(absl::StrCat(
          "fitted backend factor: ", kind, " x", scale,
          cost::IsCollective(kind) && multi_node
              ? " (across nodes: InfiniBand's roofline, never below the NVLink collective "
                "at this factor)"
              : ""));
    }
    for (const auto& [kind, scale] : setup->predictor.kind_call_latency_scale) {
      setup->notes.push_back(absl::StrCat(
          "fitted backend factor: ", kind, " per-call latency x", scale, " (",
          scale * cost::GpuRates{}.collective_latency_us, " us a call; bytes at the roofline)"));
    }
    for (const auto& [kind, scale] : setup->predictor.prefill_kind_time_scale) {
      setup->notes.push_back(
          absl::StrCat("fitted backend factor: ", kind, " x", scale, " (prefill chunks only)"));
    }
  }
  return setup;
}

}  // namespace servesim::runner
