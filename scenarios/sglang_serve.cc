// `python3 -m sglang.launch_server` as SGLang v0.5.6.post2 reads it for
// DeepSeek-V3.2 on H200. Every default names its source in
// shared/reference/engine-defaults.md §C2 (and docs/engines.md).
#include <algorithm>
#include <cmath>
#include <iterator>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/decimal.h"
#include "base/status_macros.h"
#include "scenarios/serve_command.h"
#include "sim/workload/command_line.h"

namespace servesim::scenarios {
namespace {

using workload::FlagSpec;

// Flags that do not change what the GPUs compute or when: accepted, echoed.
// (--model-path names the model; it is read, then listed here too.)
const std::vector<IgnoredFlag>& SglangIgnoredFlags() {
  static const auto* kFlags = new std::vector<IgnoredFlag>{
      {"--model-path"},
      {"--host"},
      {"--port", true, false, IgnoredFlag::Value::kInteger},
      {"--chat-template"},
      {"--reasoning-parser"},
      {"--tool-call-parser"},
      {"--trust-remote-code", false},
      {"--served-model-name"},
      {"--api-key"},
      {"--tokenizer-path"},
      {"--log-level"},
      {"--log-requests", false},
      {"--enable-metrics", false},
      {"--random-seed", true, false, IgnoredFlag::Value::kInteger},
      {"--watchdog-timeout", true, false, IgnoredFlag::Value::kNumber},
      {"--skip-server-warmup", false},
      {"--download-dir"},
      {"--tokenizer-mode"},
      {"--node-rank", true, false, IgnoredFlag::Value::kInteger},
      {"--dist-init-addr"},
      {"--log-level-http"},
      {"--enable-cache-report", false},
      {"--decode-log-interval", true, false, IgnoredFlag::Value::kInteger},
      {"--revision"},
      // Used only by requests that constrain their output (the bench sends none).
      {"--grammar-backend"}};
  return *kFlags;
}

// SGLang v0.5.6 flags that change what the GPUs run or when, which servesim
// does not model [U: names from the v0.5.6 server_args as recalled]. The
// inert values are what SGLang runs here anyway: --dtype auto is the
// checkpoint's BF16, --quantization fp8 its own, round_robin the DP
// controller servesim models, the others the flags' defaults [U].
const std::vector<UnmodelledFlag>& SglangUnmodelledFlags() {
  static const auto* kFlags = new std::vector<UnmodelledFlag>{
      {"--dtype", true, {"auto", "bfloat16"}},
      {"--quantization", true, {"fp8"}},
      {"--load-balance-method", true, {"round_robin"}},
      {"--enable-eplb", false},
      {"--ep-num-redundant-experts", true, {"0"}},
      {"--moe-a2a-backend", true, {"none"}},
      {"--deepep-mode", true, {"auto"}},
      {"--moe-runner-backend", true, {"auto"}},
      {"--enable-two-batch-overlap", false},
      {"--enable-single-batch-overlap", false},
      {"--enable-dp-lm-head", false},
      {"--enable-torch-compile", false},
      {"--torch-compile-max-bs"},
      {"--max-total-tokens"},
      {"--tokenizer-worker-num", true, {"1"}},
      {"--enable-deterministic-inference", false},
      {"--num-continuous-decode-steps", true, {"1"}},
      {"--disable-shared-experts-fusion", false},
      {"--disable-chunked-prefix-cache", false},
      {"--enable-hierarchical-cache", false},
      {"--enable-nccl-nvls", false},
      {"--enable-symm-mem", false},
      {"--disable-custom-all-reduce", false},
      {"--stream-interval", true, {"1"}},
      {"--sampling-backend"},
      {"--cuda-graph-bs", true, {}, {}, /*multiple_values=*/true},
  };
  return *kFlags;
}

std::vector<FlagSpec> SglangFlagSpecs() {
  std::vector<FlagSpec> specs = {
      {"--tp-size", {"--tp"}},
      {"--dp-size", {"--dp"}},
      {"--nnodes", {}},
      {"--pp-size", {"--pipeline-parallel-size"}},
      {"--enable-dp-attention", {}, false},
      {"--ep-size", {"--ep"}},
      {"--moe-dense-tp-size", {}},
      {"--chunked-prefill-size", {}},
      {"--max-running-requests", {}},
      {"--max-prefill-tokens", {}},
      {"--mem-fraction-static", {}},
      {"--context-length", {}},
      {"--kv-cache-dtype", {}},
      {"--page-size", {}},
      {"--schedule-policy", {}},
      {"--schedule-conservativeness", {}},
      {"--cuda-graph-max-bs", {}},
      {"--disable-cuda-graph", {}, false},
      {"--disable-overlap-schedule", {}, false},
      {"--attention-backend", {}},
      {"--nsa-prefill-backend", {}},
      {"--nsa-decode-backend", {}},
      {"--speculative-algorithm", {}},
      {"--speculative-num-steps", {}},
      {"--speculative-eagle-topk", {}},
      {"--speculative-num-draft-tokens", {}},
      {"--enable-mixed-chunk", {}, false},
      {"--disable-radix-cache", {}, false},
  };
  AppendIgnoredFlagSpecs(SglangIgnoredFlags(), &specs);
  AppendUnmodelledFlagSpecs(SglangUnmodelledFlags(), &specs);
  return specs;
}

// NSA backends SGLang offers for DeepSeek-V3.2's sparse attention on Hopper
// (server_args.py NSA_CHOICES, less the AMD-only aiter).
constexpr const char* kNsaBackends[] = {"flashmla_sparse", "flashmla_kv", "flashmla_auto", "fa3",
                                        "tilelang"};

absl::Status CheckNsaBackend(const std::string& flag, const std::string& value) {
  for (const char* b : kNsaBackends) {
    if (value == b) return absl::OkStatus();
  }
  return absl::InvalidArgumentError(absl::StrCat("--serve: ", flag, ": unknown NSA backend \"",
                                                 value, "\" (", absl::StrJoin(kNsaBackends, ", "),
                                                 ")"));
}

// server_args.py _handle_gpu_memory_settings: the CUDA-graph batch sizes
// [1, 2, 4, 8, 12] + 16..256 step 8 + 272..496 step 16 + 512.. step 32,
// capped at cuda_graph_max_bs.
std::vector<int32_t> SglangCudaGraphSizes(int32_t max_bs) {
  // No engine runs this many requests at once (SGLang captures no batch past
  // its request pool, 4096 unless --max-running-requests says more), so the
  // list stops here rather than run to 2^31; without --mem-fraction-static
  // the memory heuristic, 2 MB a row, refuses such a value anyway.
  constexpr int64_t kLongestList = 1 << 17;
  const int64_t last = std::min<int64_t>(max_bs, kLongestList);
  std::vector<int32_t> sizes = {1, 2, 4, 8, 12};
  for (int32_t s = 16; s <= 256; s += 8) sizes.push_back(s);
  for (int32_t s = 272; s < 512; s += 16) sizes.push_back(s);
  for (int64_t s = 512; s <= last; s += 32) sizes.push_back(static_cast<int32_t>(s));
  sizes.erase(std::remove_if(sizes.begin(), sizes.end(), [&](int32_t s) { return s > max_bs; }),
              sizes.end());
  return sizes;
}

}  // namespace

std::vector<workload::FlagSpec> SglangServeFlagSpecs() { return SglangFlagSpecs(); }

std::vector<std::string> SglangNsaBackends() {
  return {std::begin(kNsaBackends), std::end(kNsaBackends)};
}

namespace {

// The environment: SGLang serves DeepSeek-V3.2 only with DeepGEMM.
absl::Status ApplyEnv(const EnvVars& env, const ServeContext& context, EngineConfig& c) {
  // Environment. DeepSeek-V3.2's indexer logits kernels (fp8_mqa_logits,
  // fp8_paged_mqa_logits) come from DeepGEMM: SGLang cannot serve the model
  // without it (live run sglang-tp8-no-deepgemm).
  c.set_deep_gemm(true);
  for (const auto& [key, value] : env) {
    if (key == "SGLANG_ENABLE_JIT_DEEPGEMM") {
      const std::string v = absl::AsciiStrToLower(value);
      const bool disabled = v == "0" || v == "false";
      if (!disabled && v != "1" && v != "true") {
        return absl::InvalidArgumentError(absl::StrCat(
            "--env: SGLANG_ENABLE_JIT_DEEPGEMM: expected 0 or 1, got \"", value, "\""));
      }
      if (disabled && context.dsa_attention) {
        return absl::FailedPreconditionError(
            "server fails to start when DeepGEMM is disabled: SGLang's DeepSeek-V3.2 (NSA) path "
            "takes its indexer logits kernels fp8_mqa_logits / fp8_paged_mqa_logits from "
            "DeepGEMM (SGLANG_ENABLE_JIT_DEEPGEMM=0)");
      }
      if (disabled) {
        // A model without the indexer starts on SGLang's other FP8 GEMMs,
        // whose speed servesim has neither measured nor fitted.
        return absl::UnimplementedError(
            "--env: SGLANG_ENABLE_JIT_DEEPGEMM=0 (SGLang's GEMMs without DeepGEMM) is not "
            "modelled yet");
      }
    } else {
      return absl::InvalidArgumentError(absl::StrCat(
          "--env: ", key,
          " is not an environment variable servesim models for SGLang "
          "(SGLANG_ENABLE_JIT_DEEPGEMM; those without effect, such as HF_HOME or NCCL_DEBUG, are "
          "listed in docs/engines.md)"));
    }
  }
  return absl::OkStatus();
}

// --tp-size, --dp-size with --enable-dp-attention, --ep-size, --nnodes,
// --moe-dense-tp-size; pipeline parallelism is refused.
absl::Status ReadParallelLayout(const workload::ParsedFlags& flags, EngineConfig& c) {
  // Parallel layout.
  RETURN_IF_ERROR(CheckIgnoredFlagValues(flags, SglangIgnoredFlags()));
  ASSIGN_OR_RETURN(int64_t tp, flags.GetIntOr("--tp-size", 1));
  ASSIGN_OR_RETURN(int64_t dp, flags.GetIntOr("--dp-size", 1));
  // --nnodes: one engine instance over several 8-GPU nodes (tp-size counts
  // all their GPUs); collectives between nodes cross InfiniBand.
  ASSIGN_OR_RETURN(int64_t nnodes, flags.GetIntOr("--nnodes", 1));
  ASSIGN_OR_RETURN(int64_t ep, flags.GetIntOr("--ep-size", 1));
  ASSIGN_OR_RETURN(int64_t moe_dense_tp, flags.GetIntOr("--moe-dense-tp-size", 0));
  if (flags.Has("--moe-dense-tp-size") && moe_dense_tp < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("--serve: --moe-dense-tp-size: must be >= 1, got ", moe_dense_tp));
  }
  for (auto [name, v] : {std::pair{"--tp-size", tp}, {"--dp-size", dp}, {"--ep-size", ep},
                         {"--nnodes", nnodes}}) {
    if (v < 1) {
      return absl::InvalidArgumentError(absl::StrCat("--serve: ", name, ": must be >= 1, got ", v));
    }
  }
  ASSIGN_OR_RETURN(int64_t pp, flags.GetIntOr("--pp-size", 1));
  if (pp < 1) {
    return absl::InvalidArgumentError(absl::StrCat("--serve: --pp-size: must be >= 1, got ", pp));
  }
  if (pp > 1) {
    return absl::UnimplementedError(
        "--serve: --pp-size > 1 (pipeline parallelism) is not modelled");
  }
  if (nnodes * 8 > kMaxInstanceGpus) {
    return absl::InvalidArgumentError(absl::StrCat("--serve: --nnodes ", nnodes,
                                                   ": servesim models one instance of at most ",
                                                   kMaxInstanceGpus / 8, " nodes"));
  }
  ASSIGN_OR_RETURN(int64_t node_rank, flags.GetIntOr("--node-rank", 0));
  if (node_rank < 0 || node_rank >= nnodes) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--serve: --node-rank: ", node_rank, " is not a node of --nnodes ", nnodes));
  }
  if (nnodes > 1 && tp != 8 * nnodes) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--serve: --nnodes ", nnodes, ": servesim models nodes of 8 H200 GPUs, so an instance "
        "over ", nnodes, " nodes has --tp-size ", 8 * nnodes, " (got ", tp, ")"));
  }
  ASSIGN_OR_RETURN(bool dp_attention, flags.GetBool("--enable-dp-attention"));
  if (dp_attention && dp == 1) {
    // _handle_data_parallelism: dp_size == 1 turns DP attention (and the DP
    // LM head) off, so `--enable-dp-attention` alone is plain TP.
    dp_attention = false;
    c.add_defaults_applied(
        "enable_dp_attention=False (dp_size == 1: SGLang turns DP attention off; "
        "--enable-dp-attention without --dp-size is plain TP)");
  }
  c.set_tp(static_cast<int32_t>(tp));
  c.set_dp(static_cast<int32_t>(dp));
  c.set_ep(static_cast<int32_t>(ep));
  c.set_pp(1);
  c.set_enable_dp_attention(dp_attention);
  c.set_moe_dense_tp(static_cast<int32_t>(moe_dense_tp));
  c.set_gpus_per_node(8);
  c.set_nnodes(static_cast<int32_t>(nnodes));
  return absl::OkStatus();
}

// --speculative-algorithm EAGLE / NEXTN and its step, top-k and draft flags,
// with SGLang's auto choice where they are unset.
absl::Status ReadSpeculativeDecoding(const workload::ParsedFlags& flags,
                                     const ServeContext& context, EngineConfig& c) {
  // Speculative decoding (_handle_speculative_decoding). EAGLE / NEXTN on
  // DeepSeek runs the checkpoint's MTP layer as the draft model.
  if (flags.Has("--speculative-algorithm")) {
    ASSIGN_OR_RETURN(std::string algo, flags.GetString("--speculative-algorithm"));
    // argparse's choices are upper case, and compared as given [U: the
    // choices list of v0.5.6.post2].
    const std::vector<std::string> algo_choices = {"EAGLE", "EAGLE3", "NEXTN", "STANDALONE",
                                                   "NGRAM"};
    if (std::find(algo_choices.begin(), algo_choices.end(), algo) == algo_choices.end()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "--serve: argument --speculative-algorithm: invalid choice: '", algo, "' (choose from ",
          absl::StrJoin(algo_choices, ", "), ")"));
    }
    if (algo != "EAGLE" && algo != "NEXTN") {
      return absl::UnimplementedError(absl::StrCat(
          "--serve: --speculative-algorithm ", algo, " is not modelled (EAGLE, NEXTN)"));
    }
    // Unset steps/topk/draft tokens: SGLang's auto choice for DeepSeek
    // (auto_choose_speculative_params: 3 steps, topk 1, 4 draft tokens) [U].
    // It is taken only when all three are unset: with steps unset, the
    // branch asserts that topk and draft tokens are too [U: recalled from
    // _handle_speculative_decoding, not read at the pinned version].
    if (!flags.Has("--speculative-num-steps") &&
        (flags.Has("--speculative-eagle-topk") || flags.Has("--speculative-num-draft-tokens"))) {
      return absl::FailedPreconditionError(
          "server fails to start (AssertionError): SGLang chooses the speculative parameters "
          "itself only when --speculative-num-steps, --speculative-eagle-topk and "
          "--speculative-num-draft-tokens are all unset; give --speculative-num-steps too");
    }
    ASSIGN_OR_RETURN(int64_t steps, flags.GetIntOr("--speculative-num-steps", 3));
    ASSIGN_OR_RETURN(int64_t topk, flags.GetIntOr("--speculative-eagle-topk", 1));
    ASSIGN_OR_RETURN(int64_t drafts, flags.GetIntOr("--speculative-num-draft-tokens", steps + 1));
    NoteDefault(flags, c, "--speculative-num-steps",
                "speculative_num_steps=3 (SGLang auto choice for DeepSeek) [U]");
    if (steps < 1 || topk < 1 || drafts < 2) {
      return absl::InvalidArgumentError(
          "--serve: --speculative-num-steps and --speculative-eagle-topk must be >= 1, "
          "--speculative-num-draft-tokens >= 2");
    }
    if (topk > 1) {
      return absl::UnimplementedError(
          "--serve: --speculative-eagle-topk > 1 (tree drafts) is not modelled");
    }
    if (drafts != steps + 1) {
      // With topk 1 the draft is a chain: SGLang sets draft tokens = steps + 1.
      c.add_defaults_applied(absl::StrCat("speculative_num_draft_tokens=", steps + 1,
                                          " (topk 1: SGLang sets it to num_steps + 1)"));
      drafts = steps + 1;
    }
    // num_draft_tokens counts the verified root token: k = drafts - 1.
    RETURN_IF_ERROR(CheckDraftTokensPerStep(drafts - 1, "--serve: --speculative-num-steps"));
    c.set_speculative_method("eagle");
    c.set_num_speculative_tokens(static_cast<int32_t>(drafts - 1));
    ASSIGN_OR_RETURN(const double accepted, MeanAcceptedDrafts(static_cast<int>(drafts - 1), context));
    c.set_mean_accepted_drafts(accepted);
  } else {
    // Without an algorithm SGLang never reads them: the server starts
    // without speculation.
    for (const char* f : {"--speculative-num-steps", "--speculative-eagle-topk",
                          "--speculative-num-draft-tokens"}) {
      if (flags.Has(f)) c.add_ignored_flags(f);
    }
  }
  return absl::OkStatus();
}

// --chunked-prefill-size, --max-prefill-tokens and --max-running-requests,
// split over the DP-attention ranks (after the layout and speculation).
absl::Status ReadBatchLimits(const workload::ParsedFlags& flags, EngineConfig& c) {
  const int64_t dp_ranks = c.enable_dp_attention() ? c.dp() : 1;
  const bool speculative = c.num_speculative_tokens() > 0;
  // Batch limits. _handle_gpu_memory_settings on a 90-160 GB GPU (H200):
  // chunked_prefill_size 8192, cuda_graph_max_bs 256 if tp < 4 else 512.
  constexpr int64_t kDefaultChunkedPrefillSize = 8192;
  ASSIGN_OR_RETURN(int64_t chunk,
                   flags.GetIntOr("--chunked-prefill-size", kDefaultChunkedPrefillSize));
  NoteDefault(flags, c, "--chunked-prefill-size",
              absl::StrCat("chunked_prefill_size=", kDefaultChunkedPrefillSize,
                           " (SGLang, 90-160 GB GPU)"));
  if (chunk == 0 || chunk < -1) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--serve: --chunked-prefill-size: must be > 0 or -1 (disabled), got ", chunk));
  }
  c.set_chunked_prefill_size_before_dp(chunk);
  c.set_chunked_prefill(chunk > 0);
  int64_t per_rank_chunk = chunk;
  if (chunk > 0 && dp_ranks > 1) {
    per_rank_chunk = chunk / dp_ranks;
    c.add_defaults_applied(absl::StrCat("chunked_prefill_size=", chunk, "//", dp_ranks, "=",
                                        per_rank_chunk, " per DP rank (DP attention)"));
  }
  ASSIGN_OR_RETURN(int64_t max_prefill, flags.GetIntOr("--max-prefill-tokens", 16384));
  NoteDefault(flags, c, "--max-prefill-tokens", "max_prefill_tokens=16384 (ServerArgs default)");
  if (max_prefill < 1) {
    return absl::InvalidArgumentError("--serve: --max-prefill-tokens: must be >= 1");
  }
  c.set_max_prefill_tokens(max_prefill);
  // Without chunking a batch is bounded by max_prefill_tokens alone.
  c.set_max_num_batched_tokens(chunk > 0 ? per_rank_chunk : max_prefill);

  // max_running_requests: unset means derived from the KV pool at start-up
  // (ModelRunner.init_memory_pool), done in sim/runner; speculative decoding
  // sets 48. Under DP attention a given value is split over the DP ranks.
  if (flags.Has("--max-running-requests")) {
    ASSIGN_OR_RETURN(int64_t mrr, flags.GetInt("--max-running-requests"));
    if (mrr < 1) {
      return absl::InvalidArgumentError("--serve: --max-running-requests: must be >= 1");
    }
    if (mrr < dp_ranks) {
      // SGLang gives each DP rank max_running_requests // dp_size: none here.
      return absl::InvalidArgumentError(absl::StrCat(
          "--serve: --max-running-requests: ", mrr, " over ", dp_ranks,
          " DP-attention ranks is 0 per rank (SGLang divides it by --dp-size): no request "
          "would ever run"));
    }
    c.set_max_num_seqs(mrr / dp_ranks);
  } else if (speculative) {
    c.set_max_num_seqs(std::max<int64_t>(1, 48 / dp_ranks));
    c.add_defaults_applied(
        "max_running_requests=48 (SGLang's default under speculative decoding)");
  } else {
    c.set_max_num_seqs(0);  // derived from the KV pool (sim/runner)
  }
  return absl::OkStatus();
}

// --context-length, at most the model's max_position_embeddings.
absl::Status ReadContextLength(const workload::ParsedFlags& flags, const ServeContext& context,
                               EngineConfig& c) {
  // SGLang derives the context from the model config's max_position_embeddings.
  ASSIGN_OR_RETURN(int64_t context_length,
                   flags.GetIntOr("--context-length", context.max_position_embeddings));
  NoteDefault(flags, c, "--context-length",
              absl::StrCat("context_length=", context.max_position_embeddings,
                           " (model's max_position_embeddings)"));
  if (context_length < 1) {
    return absl::InvalidArgumentError("--serve: --context-length: must be >= 1");
  }
  if (context_length > context.max_position_embeddings) {
    // model_config.py refuses a longer context unless
    // SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN=1.
    return absl::FailedPreconditionError(absl::StrCat(
        "User-specified context_length (", context_length,
        ") is greater than the derived context_length (", context.max_position_embeddings, ")"));
  }
  c.set_max_model_len(context_length);
  return absl::OkStatus();
}

// --schedule-policy, --schedule-conservativeness, the overlap scheduler,
// --enable-mixed-chunk and the radix cache.
absl::Status ReadScheduling(const workload::ParsedFlags& flags, EngineConfig& c) {
  const bool dp_attention = c.enable_dp_attention();
  const bool speculative = c.num_speculative_tokens() > 0;
  // Scheduling policy. lpm (longest prefix match) orders by shared prefixes:
  // with none shared between prompts, or one shared by all
  // (--random-prefix-len), it keeps the queue order, so it is modelled as
  // fcfs [U: on a Mooncake trace's hash_ids SGLang would reorder].
  ASSIGN_OR_RETURN(std::string policy, flags.GetStringOr("--schedule-policy", "fcfs"));
  if (policy != "fcfs" && policy != "lpm") {
    return absl::UnimplementedError(absl::StrCat(
        "--serve: --schedule-policy ", policy, " is not modelled (fcfs, lpm)"));
  }
  c.set_schedule_policy(policy);
  NoteDefault(flags, c, "--schedule-policy", "schedule_policy=fcfs (ServerArgs default)");
  if (policy == "lpm") {
    c.add_defaults_applied("schedule_policy lpm run as fcfs (no two prompts share a cached "
                           "prefix, or all share one: lpm keeps the queue order)");
  }
  ASSIGN_OR_RETURN(double conservativeness, flags.GetDoubleOr("--schedule-conservativeness", 1.0));
  if (!(conservativeness > 0) || !std::isfinite(conservativeness)) {
    return absl::InvalidArgumentError(
        absl::StrCat("--serve: --schedule-conservativeness: must be finite and > 0, got ",
                     conservativeness));
  }
  if (dp_attention) {
    conservativeness *= 0.3;
    c.add_defaults_applied("schedule_conservativeness x0.3 (DP attention)");
  } else {
    NoteDefault(flags, c, "--schedule-conservativeness",
                "schedule_conservativeness=1.0 (ServerArgs default)");
  }
  c.set_schedule_conservativeness(conservativeness);

  ASSIGN_OR_RETURN(bool no_overlap, flags.GetBool("--disable-overlap-schedule"));
  c.set_overlap_schedule(!no_overlap && !speculative);
  if (speculative && !no_overlap) {
    c.add_defaults_applied("overlap scheduler off (speculative decoding)");
  }
  ASSIGN_OR_RETURN(bool mixed, flags.GetBool("--enable-mixed-chunk"));
  if (mixed && speculative) {
    mixed = false;
    c.add_defaults_applied("enable_mixed_chunk=False (speculative decoding)");
  } else if (!mixed) {
    c.add_defaults_applied("enable_mixed_chunk=False (ServerArgs default)");
  }
  c.set_enable_mixed_chunk(mixed);
  // The radix cache keeps a retracted request's prompt for its return, and
  // requests sharing a prefix reuse its cached pages.
  ASSIGN_OR_RETURN(bool no_radix, flags.GetBool("--disable-radix-cache"));
  c.set_prefix_caching(!no_radix);
  if (!no_radix) c.add_defaults_applied("radix cache on (SGLang default)");
  return absl::OkStatus();
}

// --cuda-graph-max-bs (its default by TP size) and --disable-cuda-graph.
absl::Status ReadCudaGraphs(const workload::ParsedFlags& flags, EngineConfig& c) {
  const int64_t tp = c.tp();
  // CUDA graphs.
  ASSIGN_OR_RETURN(int64_t graph_bs, flags.GetIntOr("--cuda-graph-max-bs", tp < 4 ? 256 : 512));
  NoteDefault(flags, c, "--cuda-graph-max-bs",
              absl::StrCat("cuda_graph_max_bs=", graph_bs, " (SGLang, 90-160 GB GPU, tp ",
                           tp < 4 ? "< 4" : ">= 4", ")"));
  if (graph_bs < 1) return absl::InvalidArgumentError("--serve: --cuda-graph-max-bs: must be >= 1");
  c.set_cuda_graph_max_bs(static_cast<int32_t>(graph_bs));
  ASSIGN_OR_RETURN(bool no_graphs, flags.GetBool("--disable-cuda-graph"));
  if (!no_graphs) {
    for (int32_t s : SglangCudaGraphSizes(static_cast<int32_t>(graph_bs))) c.add_cuda_graph_sizes(s);
  }
  return absl::OkStatus();
}

// --mem-fraction-static (unset: the memory heuristic in the setup).
absl::Status ReadMemoryFraction(const workload::ParsedFlags& flags, EngineConfig& c) {
  // Memory: unset mem_fraction_static is derived by the memory heuristic in
  // the setup (models::SglangMemFractionStatic), 0 here.
  ASSIGN_OR_RETURN(double fraction, flags.GetDoubleOr("--mem-fraction-static", 0));
  if (flags.Has("--mem-fraction-static") && !(fraction > 0 && fraction <= 1)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--serve: --mem-fraction-static: must be in (0, 1], got ", FormatDecimal(fraction)));
  }
  c.set_gpu_memory_fraction(fraction);
  return absl::OkStatus();
}

// The NSA attention backends, the KV cache dtype and the page size.
absl::Status ReadNsaAttention(const workload::ParsedFlags& flags, EngineConfig& c) {
  // DeepSeek NSA adjustments (_handle_model_specific_adjustments).
  ASSIGN_OR_RETURN(std::string backend, flags.GetStringOr("--attention-backend", "nsa"));
  if (backend != "nsa") {
    return absl::UnimplementedError(absl::StrCat(
        "--serve: --attention-backend ", backend,
        " is not modelled for DeepSeek-V3.2 (SGLang serves its sparse attention with nsa)"));
  }
  c.set_attention_backend("nsa");
  ASSIGN_OR_RETURN(std::string prefill_backend,
                   flags.GetStringOr("--nsa-prefill-backend", "flashmla_sparse"));
  ASSIGN_OR_RETURN(std::string decode_backend, flags.GetStringOr("--nsa-decode-backend", "fa3"));
  RETURN_IF_ERROR(CheckNsaBackend("--nsa-prefill-backend", prefill_backend));
  RETURN_IF_ERROR(CheckNsaBackend("--nsa-decode-backend", decode_backend));
  ASSIGN_OR_RETURN(std::string kv, flags.GetStringOr("--kv-cache-dtype", "auto"));
  if (kv == "auto" || kv == "bfloat16" || kv == "bf16") {
    c.set_kv_cache_dtype(KV_BF16);
    NoteDefault(flags, c, "--kv-cache-dtype", "kv_cache_dtype=auto -> bfloat16 (NSA on Hopper)");
    NoteDefault(flags, c, "--nsa-prefill-backend",
                "nsa_prefill_backend=flashmla_sparse (ServerArgs default)");
    NoteDefault(flags, c, "--nsa-decode-backend", "nsa_decode_backend=fa3 (ServerArgs default)");
  } else if (kv == "fp8_e4m3") {
    // An FP8 cache switches both NSA backends to the FlashMLA FP8 kernels
    // (server_args.py; applied whatever was given [U]).
    c.set_kv_cache_dtype(KV_FP8);
    prefill_backend = "flashmla_auto";
    decode_backend = "flashmla_kv";
    c.add_defaults_applied(
        "nsa_prefill_backend=flashmla_auto, nsa_decode_backend=flashmla_kv (FP8 KV cache)");
  } else {
    return absl::InvalidArgumentError(absl::StrCat(
        "--serve: --kv-cache-dtype: \"", kv, "\" is not supported for DeepSeek-V3.2 NSA "
        "(auto, bfloat16, fp8_e4m3)"));
  }
  c.set_prefill_attention_backend(prefill_backend);
  c.set_decode_attention_backend(decode_backend);
  c.set_kv_block_size(64);
  ASSIGN_OR_RETURN(int64_t page, flags.GetIntOr("--page-size", 64));
  if (page < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("--serve: --page-size: must be >= 1, got ", page));
  }
  if (page != 64) {
    c.add_defaults_applied(absl::StrCat("--page-size ", page, " overridden to 64 (DeepSeek NSA)"));
  } else {
    NoteDefault(flags, c, "--page-size", "page_size=64 (DeepSeek NSA)");
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<EngineConfig> ParseSglangServe(const std::vector<std::string>& args,
                                              const EnvVars& env, const ServeContext& context) {
  ASSIGN_OR_RETURN(
      workload::ParsedFlags flags,
      workload::ParseFlags(args, SglangFlagSpecs(), ServeFlagParseOptions(/*python_style=*/false)));

  EngineConfig c;
  c.set_engine(SGLANG);
  c.set_engine_version("SGLang v0.5.6.post2");
  // Before the other checks: a flag servesim does not model is the answer.
  RETURN_IF_ERROR(CheckUnmodelledFlags(flags, SglangUnmodelledFlags(), "SGLang"));
  if (!flags.Has("--model-path")) {
    return absl::InvalidArgumentError("--serve: --model-path is required");
  }
  ASSIGN_OR_RETURN(std::string model, flags.GetString("--model-path"));
  c.set_model(model);
  ListFlagsWithoutEffect(flags, SglangIgnoredFlags(), SglangUnmodelledFlags(), c);
  RETURN_IF_ERROR(ApplyEnv(env, context, c));
  RETURN_IF_ERROR(ReadParallelLayout(flags, c));
  RETURN_IF_ERROR(ReadSpeculativeDecoding(flags, context, c));
  RETURN_IF_ERROR(ReadBatchLimits(flags, c));
  RETURN_IF_ERROR(ReadContextLength(flags, context, c));
  RETURN_IF_ERROR(ReadScheduling(flags, c));
  RETURN_IF_ERROR(ReadCudaGraphs(flags, c));
  RETURN_IF_ERROR(ReadMemoryFraction(flags, c));
  RETURN_IF_ERROR(ReadNsaAttention(flags, c));
  return c;
}

}  // namespace servesim::scenarios
