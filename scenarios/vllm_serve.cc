// `vllm serve` as vLLM v0.13.0 reads it. Every default below names its source
// in shared/reference/engine-defaults.md §C1 (and docs/engines.md).
#include <algorithm>
#include <array>
#include <cmath>
#include <limits>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/string_view.h"
#include "base/decimal.h"
#include "base/status_macros.h"
#include "scenarios/flat_json.h"
#include "scenarios/serve_command.h"
#include "sim/workload/command_line.h"

namespace servesim::scenarios {
namespace {

using workload::FlagSpec;

// vLLM's human_readable_int (--max-model-len, --max-num-batched-tokens) for
// a value with a suffix: a number with a decimal suffix k/m/g/t (25.6k =
// 25600) or a binary one K/M/G/T on a whole number (32K = 32768).
absl::StatusOr<int64_t> HumanReadableInt(absl::string_view text, absl::string_view flag) {
  const absl::string_view t = absl::StripAsciiWhitespace(text);
  auto bad = [&] {
    return absl::InvalidArgumentError(absl::StrCat(
        flag, ": expected an integer or one with a suffix (32k, 32K), got \"", text, "\""));
  };
  if (t.size() < 2) return bad();
  const char suffix = t.back();
  const absl::string_view number = t.substr(0, t.size() - 1);
  const absl::string_view decimal = "kmgt", binary = "KMGT";
  if (const size_t i = decimal.find(suffix); i != absl::string_view::npos) {
    // Digits, optionally a point and more digits (Python's \d+(?:\.\d+)?).
    auto digits = [](absl::string_view s) {
      return !s.empty() && s.find_first_not_of("0123456789") == absl::string_view::npos;
    };
    const size_t point = number.find('.');
    const bool fraction_ok =
        point == absl::string_view::npos || digits(number.substr(point + 1));
    double value = 0;
    if (!digits(number.substr(0, point)) || !fraction_ok || !absl::SimpleAtod(number, &value)) {
      return bad();
    }
    const double scaled = value * std::pow(1000.0, static_cast<double>(i + 1));
    if (!(scaled < 9.2e18)) return bad();
    return static_cast<int64_t>(scaled);
  }
  if (const size_t i = binary.find(suffix); i != absl::string_view::npos) {
    int64_t whole = 0;
    if (number.find_first_not_of("0123456789") != absl::string_view::npos ||
        !absl::SimpleAtoi(number, &whole)) {
      return absl::InvalidArgumentError(absl::StrCat(
          flag, ": decimals are not allowed with binary suffixes like ", std::string(1, suffix),
          " (vLLM), got \"", text, "\""));
    }
    const int shift = 10 * static_cast<int>(i + 1);
    if (whole > (std::numeric_limits<int64_t>::max() >> shift)) return bad();
    return whole << shift;
  }
  return bad();
}

// The flag as vLLM reads it: a plain integer (bounded as every integer
// flag), else one with a suffix (HumanReadableInt), or `fallback`.
absl::StatusOr<int64_t> HumanReadableIntOr(const workload::ParsedFlags& flags,
                                           const std::string& name, int64_t fallback) {
  if (!flags.Has(name)) return fallback;
  ASSIGN_OR_RETURN(std::string text, flags.GetString(name));
  int64_t plain = 0;
  if (absl::SimpleAtoi(text, &plain)) return flags.GetInt(name);
  const std::string where = absl::StrCat("--serve: ", name);
  ASSIGN_OR_RETURN(int64_t value, HumanReadableInt(text, where));
  if (value > kMaxServeInt) {
    return absl::InvalidArgumentError(
        absl::StrCat(where, ": must be within +-", kMaxServeInt, ", got ", text));
  }
  return value;
}

// Flags that do not change what the GPUs compute or when: accepted, echoed.
// --served-model-name takes several names (nargs="+"): the server answers to each.
const std::vector<IgnoredFlag>& VllmIgnoredFlags() {
  static const auto* kFlags = new std::vector<IgnoredFlag>{
      {"--host"},
      {"--port", true, false, IgnoredFlag::Value::kInteger},
      {"--tokenizer-mode"},
      {"--reasoning-parser"},
      {"--tool-call-parser"},
      {"--enable-auto-tool-choice", false},
      {"--chat-template"},
      {"--trust-remote-code", false},
      {"--served-model-name", true, true},
      {"--api-key"},
      {"--disable-log-requests", false},
      {"--disable-log-stats", false},
      {"--uvicorn-log-level",
       true,
       false,
       IgnoredFlag::Value::kText,
       {"critical", "error", "warning", "info", "debug", "trace"}},
      {"--tokenizer"},
      {"--download-dir"},
      {"--load-format"},
      {"--disable-uvicorn-access-log", false},
      {"--enable-log-requests", false},
      {"--model"},
      {"--data-parallel-address"},
      {"--data-parallel-rpc-port", true, false, IgnoredFlag::Value::kInteger},
      {"--data-parallel-start-rank", true, false, IgnoredFlag::Value::kInteger},
      {"--headless", false},
      {"--seed", true, false, IgnoredFlag::Value::kInteger},
      {"--max-log-len", true, false, IgnoredFlag::Value::kInteger},
      {"--revision"},
      {"--tokenizer-revision"},
      {"--max-logprobs", true, false, IgnoredFlag::Value::kInteger},
      {"--response-role"},
      {"--root-path"},
      {"--ssl-keyfile"},
      {"--ssl-certfile"},
      {"--allowed-origins"},
      {"--disable-fastapi-docs", false},
      {"--enable-prompt-tokens-details", false},
      {"--enable-force-include-usage", false},
      {"--enable-request-id-headers", false},
      {"--max-parallel-loading-workers", true, false, IgnoredFlag::Value::kInteger},
      // V1 preempts by recomputation and never swaps to CPU (servesim's vLLM
      // scheduler); the swap space is allocated and unused.
      {"--swap-space", true, false, IgnoredFlag::Value::kNumber}};
  return *kFlags;
}

// vLLM v0.13 flags that change what the GPUs run or when, which servesim does
// not model [U: names from the v0.13 argument list as recalled]. The inert
// values are what vLLM runs here anyway: --dtype auto is the checkpoint's
// BF16, --quantization fp8 its own, and the others the flags' defaults [U].
const std::vector<UnmodelledFlag>& VllmUnmodelledFlags() {
  static const auto* kFlags = new std::vector<UnmodelledFlag>{
      {"--dtype", true, {"auto", "bfloat16"}},
      {"--quantization", true, {"fp8"}, {"-q"}},
      {"--distributed-executor-backend", true, {"mp"}},
      {"--scheduling-policy", true, {"fcfs"}},
      {"--enable-eplb", false},
      {"--eplb-config"},
      {"--all2all-backend", true, {"allgather_reducescatter"}},
      {"--compilation-config"},
      {"--cuda-graph-sizes"},
      {"--kv-cache-memory-bytes"},
      {"--num-gpu-blocks-override"},
      {"--cpu-offload-gb", true, {"0"}},
      {"--kv-transfer-config"},
      {"--enable-dbo", false},
      {"--api-server-count", true, {"1"}},
      {"--max-num-partial-prefills", true, {"1"}},
      {"--max-long-partial-prefills", true, {"1"}},
      {"--long-prefill-token-threshold", true, {"0"}},
      {"--hf-overrides"},
      {"--override-generation-config"},
      {"--enable-lora", false},
      {"--data-parallel-hybrid-lb", false},
      {"--data-parallel-external-lb", false},
      {"--data-parallel-backend", true, {"mp"}},
  };
  return *kFlags;
}

// Two spellings vLLM's argument parser reads that servesim's does not: -O
// with a level (-O3, -O 3: torch.compile's optimization level, which the
// CUDA-graph and compile settings follow) and one key of a JSON flag
// (--speculative-config.method mtp). Named as not modelled rather than
// reported as unknown flags.
absl::Status CheckVllmParserForms(const std::vector<std::string>& args) {
  for (const std::string& word : args) {
    if (word.rfind("-O", 0) == 0) {
      return absl::UnimplementedError(
          absl::StrCat("--serve: ", word,
                       " (vLLM's compilation optimization level) is not modelled "
                       "(servesim models vLLM's default compilation and CUDA graphs)"));
    }
    const size_t dot = word.find('.');
    if (word.rfind("--", 0) == 0 && dot != std::string::npos && dot < word.find('=')) {
      return absl::UnimplementedError(
          absl::StrCat("--serve: ", word.substr(0, std::min(word.find('='), word.size())),
                       ": one key of a JSON flag is not read; give ", word.substr(0, dot),
                       " as one JSON object"));
    }
  }
  return absl::OkStatus();
}

std::vector<FlagSpec> VllmFlagSpecs() {
  std::vector<FlagSpec> specs = {
      {"--tensor-parallel-size", {"-tp"}},
      {"--data-parallel-size", {"-dp"}},
      {"--data-parallel-size-local", {"-dpl"}},
      {"--pipeline-parallel-size", {"-pp"}},
      {"--decode-context-parallel-size", {"-dcp"}},
      {"--enable-expert-parallel", {"-ep"}, false},
      {"--max-model-len", {}},
      {"--max-num-batched-tokens", {}},
      {"--max-num-seqs", {}},
      {"--gpu-memory-utilization", {}},
      {"--kv-cache-dtype", {}},
      {"--block-size", {}},
      {"--speculative-config", {}},
      {"--enforce-eager", {}, false},
      {"--async-scheduling", {}, false},
      {"--enable-prefix-caching", {}, false},
      {"--no-enable-prefix-caching", {}, false},
      {"--enable-chunked-prefill", {}, false},
      {"--no-enable-chunked-prefill", {}, false},
      {"--generation-config", {}},
  };
  AppendIgnoredFlagSpecs(VllmIgnoredFlags(), &specs);
  AppendUnmodelledFlagSpecs(VllmUnmodelledFlags(), &specs);
  return specs;
}

// vLLM's attention backends: whether each is an MLA backend, a sparse (DSA)
// one, and runs on SM90, with the reasons vLLM's backend validation gives
// when the model and backend differ (AttentionBackend.validate_configuration:
// is_mla, is_sparse, supports_compute_capability, in that order). A non-MLA
// backend on DeepSeek's 576-wide heads may also be refused for its head size
// first [U: not modelled].
struct AttentionBackendRule {
  const char* name;
  bool mla;
  bool sparse;
  bool sm90;
};
constexpr AttentionBackendRule kVllmBackends[] = {
    {"FLASHMLA_SPARSE", true, true, true}, {"FLASHMLA", true, false, true},
    {"CUTLASS_MLA", true, false, false},   {"TRITON_MLA", true, false, true},
    {"FLASHINFER_MLA", true, false, false}, {"FLASH_ATTN_MLA", true, false, true},
    {"FLASH_ATTN", false, false, true},    {"FLASHINFER", false, false, true},
    {"TRITON_ATTN", false, false, true},
};

// DeepSeek's models are MLA; V3.2 is also sparse (`dsa_attention`).
absl::Status CheckAttentionBackend(const std::string& name, bool dsa_attention) {
  for (const AttentionBackendRule& b : kVllmBackends) {
    if (name != b.name) continue;
    std::vector<std::string> reasons;
    if (!b.mla) reasons.push_back("'MLA not supported'");
    if (b.sparse != dsa_attention) {
      reasons.push_back(dsa_attention ? "'sparse not supported'" : "'non-sparse not supported'");
    }
    if (!b.sm90) reasons.push_back("'compute capability not supported'");
    if (reasons.empty()) return absl::OkStatus();
    return absl::FailedPreconditionError(absl::StrCat(
        "ValueError: Selected backend AttentionBackendEnum.", name,
        " is not valid for this configuration. Reason: [", absl::StrJoin(reasons, ", "), "]"));
  }
  return absl::InvalidArgumentError(
      absl::StrCat("--env: VLLM_ATTENTION_BACKEND: unknown backend \"", name, "\""));
}

absl::StatusOr<bool> EnvBool(const std::string& key, const std::string& value) {
  if (value == "1" || absl::AsciiStrToLower(value) == "true") return true;
  if (value == "0" || absl::AsciiStrToLower(value) == "false") return false;
  return absl::InvalidArgumentError(
      absl::StrCat("--env: ", key, ": expected 0 or 1, got \"", value, "\""));
}

}  // namespace

std::vector<workload::FlagSpec> VllmServeFlagSpecs() { return VllmFlagSpecs(); }

namespace {

// -tp, -dp (with --data-parallel-size-local across nodes), -ep; pipeline
// and decode context parallelism are refused, each with its reason.
absl::Status ReadParallelism(const workload::ParsedFlags& flags, const ServeContext& context,
                             EngineConfig& c) {
  RETURN_IF_ERROR(CheckIgnoredFlagValues(flags, VllmIgnoredFlags()));
  ASSIGN_OR_RETURN(int64_t tp, flags.GetIntOr("--tensor-parallel-size", 1));
  ASSIGN_OR_RETURN(int64_t dp, flags.GetIntOr("--data-parallel-size", 1));
  ASSIGN_OR_RETURN(int64_t pp, flags.GetIntOr("--pipeline-parallel-size", 1));
  ASSIGN_OR_RETURN(int64_t dcp, flags.GetIntOr("--decode-context-parallel-size", 1));
  for (auto [name, v] : {std::pair{"--tensor-parallel-size", tp}, {"--data-parallel-size", dp},
                         {"--pipeline-parallel-size", pp},
                         {"--decode-context-parallel-size", dcp}}) {
    if (v < 1) {
      return absl::InvalidArgumentError(absl::StrCat("--serve: ", name, ": must be >= 1, got ", v));
    }
  }
  // One instance larger than 512 nodes of 8 is a typo, and its GPU count
  // would leave int (tp x dp once printed a negative node size).
  if (tp * dp > kMaxInstanceGpus) {
    return absl::InvalidArgumentError(
        absl::StrCat("--serve: -tp ", tp, " x -dp ", dp, " = ", tp * dp,
                     " GPUs: servesim models one instance of at most ", kMaxInstanceGpus,
                     " GPUs (", kMaxInstanceGpus / 8, " nodes)"));
  }
  if (flags.Has("--no-enable-chunked-prefill")) {
    // vLLM V1 then schedules whole prompts only, with a token budget of at
    // least max_model_len; servesim's vLLM scheduler chunks (the default).
    return absl::UnimplementedError(
        "--serve: --no-enable-chunked-prefill is not modelled (servesim's vLLM V1 scheduler "
        "chunks prefills, vLLM's default)");
  }
  if (pp > 1) {
    return absl::UnimplementedError("--serve: --pipeline-parallel-size > 1 is not modelled yet");
  }
  if (dcp > 1 && !context.dsa_attention) {
    return absl::UnimplementedError(
        "--serve: decode context parallel (-dcp) is not modelled yet");
  }
  if (dcp > 1) {
    // vLLM issue #27544: DCP merges partial attention with the softmax LSE,
    // which FlashMLA's sparse decode kernel does not return.
    return absl::FailedPreconditionError(
        "decode context parallel (-dcp) needs the softmax log-sum-exp from the attention "
        "kernel, and the FlashMLA sparse backend that DeepSeek-V3.2 needs does not return it "
        "in decode (vLLM issue #27544)");
  }
  ASSIGN_OR_RETURN(bool ep, flags.GetBool("--enable-expert-parallel"));
  c.set_tp(static_cast<int32_t>(tp));
  c.set_dp(static_cast<int32_t>(dp));
  c.set_pp(1);
  c.set_enable_expert_parallel(ep);
  c.set_ep(ep ? static_cast<int32_t>(tp * dp) : 1);
  c.set_gpus_per_node(8);
  // Multi-node DP: each node runs --data-parallel-size-local of the DP ranks
  // (vLLM's multi-node data-parallel deployment); one engine instance spans
  // dp / local nodes, its collectives between nodes over InfiniBand.
  ASSIGN_OR_RETURN(int64_t dp_local, flags.GetIntOr("--data-parallel-size-local", dp));
  if (dp_local < 1 || dp % dp_local != 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--serve: --data-parallel-size-local: must divide --data-parallel-size (", dp, "), got ",
        dp_local));
  }
  c.set_nnodes(static_cast<int32_t>(dp / dp_local));
  return absl::OkStatus();
}

// --max-model-len, --max-num-seqs and --max-num-batched-tokens with the
// OpenAI server's defaults, and vLLM's checks between them.
absl::Status ReadBatchLimits(const workload::ParsedFlags& flags, const ServeContext& context,
                             EngineConfig& c) {
  // Batch limits on a >= 70 GiB GPU for the OpenAI server (§C1 "Batch limits").
  // A defaulted limit is capped by the other (vllm/engine/arg_utils.py
  // _set_default_args): tokens at max_num_seqs * max_model_len, sequences at
  // the token budget.
  // vLLM's default max_model_len is the model's max_position_embeddings.
  ASSIGN_OR_RETURN(int64_t max_model_len,
                   HumanReadableIntOr(flags, "--max-model-len", context.max_position_embeddings));
  NoteDefault(flags, c, "--max-model-len",
              absl::StrCat("max_model_len=", context.max_position_embeddings,
                           " (model's max_position_embeddings)"));
  ASSIGN_OR_RETURN(int64_t max_seqs, flags.GetIntOr("--max-num-seqs", 1024));
  ASSIGN_OR_RETURN(int64_t budget, HumanReadableIntOr(flags, "--max-num-batched-tokens", 8192));
  for (const auto& [flag, value] :
       {std::pair<const char*, int64_t>{"--max-model-len", max_model_len},
        {"--max-num-seqs", max_seqs},
        {"--max-num-batched-tokens", budget}}) {
    if (value < 1) {
      return absl::InvalidArgumentError(
          absl::StrCat("--serve: ", flag, ": must be >= 1, got ", value));
    }
  }
  if (!flags.Has("--max-num-batched-tokens")) {
    // (max_seqs below the budget keeps the product far from overflow.)
    if (max_seqs < budget) budget = std::min(budget, max_seqs * max_model_len);
    c.add_defaults_applied(absl::StrCat("max_num_batched_tokens=", budget,
                                        " (vLLM OpenAI server, GPU >= 70 GiB: 8192, at most "
                                        "max_num_seqs x max_model_len)"));
  }
  if (!flags.Has("--max-num-seqs")) {
    max_seqs = std::min(max_seqs, budget);
    c.add_defaults_applied(absl::StrCat("max_num_seqs=", max_seqs,
                                        " (vLLM OpenAI server, GPU >= 70 GiB: 1024, at most "
                                        "max_num_batched_tokens)"));
  }
  // vllm/config/scheduler.py SchedulerConfig._verify_args.
  if (budget < max_seqs) {
    return absl::FailedPreconditionError(absl::StrCat(
        "ValueError: max_num_batched_tokens (", budget,
        ") must be greater than or equal to max_num_seqs (", max_seqs, ")."));
  }
  if (max_model_len > context.max_position_embeddings) {
    return absl::FailedPreconditionError(
        absl::StrCat("User-specified max_model_len (", max_model_len,
                     ") is greater than the derived max_model_len (max_position_embeddings=",
                     context.max_position_embeddings, ")"));
  }
  c.set_max_num_seqs(max_seqs);
  c.set_max_num_batched_tokens(budget);
  c.set_max_model_len(max_model_len);
  c.set_chunked_prefill(true);
  c.set_schedule_policy("fcfs");
  return absl::OkStatus();
}

// --gpu-memory-utilization, --kv-cache-dtype and --block-size.
absl::Status ReadKvCache(const workload::ParsedFlags& flags, EngineConfig& c) {
  constexpr double kDefaultGpuMemoryUtilization = 0.9;  // CacheConfig
  ASSIGN_OR_RETURN(double util,
                   flags.GetDoubleOr("--gpu-memory-utilization", kDefaultGpuMemoryUtilization));
  NoteDefault(flags, c, "--gpu-memory-utilization",
              absl::StrCat("gpu_memory_utilization=", kDefaultGpuMemoryUtilization,
                           " (of total GPU memory)"));
  if (!(util > 0 && util <= 1)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--serve: --gpu-memory-utilization: must be in (0, 1], got ", FormatDecimal(util)));
  }
  c.set_gpu_memory_fraction(util);

  // KV cache dtype: `auto` is a BF16 latent cache [U: PR #25988 once mapped
  // auto to fp8_ds_mla; newer code maps it to BF16]; every fp8* choice maps
  // to the fp8_ds_mla format (656 B): DeepSeek-V3.2's config override tests
  // the prefix (engine-defaults.md §C1, both stored variants).
  ASSIGN_OR_RETURN(std::string kv, flags.GetStringOr("--kv-cache-dtype", "auto"));
  // CacheConfig.cache_dtype's Literal, as argparse lists its choices.
  const std::vector<std::string> kv_choices = {"auto",     "bfloat16", "fp8",    "fp8_ds_mla",
                                               "fp8_e4m3", "fp8_e5m2", "fp8_inc"};
  if (std::find(kv_choices.begin(), kv_choices.end(), kv) == kv_choices.end()) {
    return absl::InvalidArgumentError(
        absl::StrCat("--serve: argument --kv-cache-dtype: invalid choice: '", kv, "' (choose from ",
                     absl::StrJoin(kv_choices, ", "), ")"));
  }
  if (kv == "auto" || kv == "bfloat16") {
    c.set_kv_cache_dtype(KV_BF16);
    NoteDefault(flags, c, "--kv-cache-dtype",
                "kv_cache_dtype=auto -> BF16 latent cache (uncertain, see docs/engines.md)");
  } else {
    c.set_kv_cache_dtype(KV_FP8);
    if (kv != "fp8_ds_mla") {
      c.add_defaults_applied(absl::StrCat(
          "--kv-cache-dtype ", kv, " -> fp8_ds_mla (every fp8* cache dtype on DeepSeek-V3.2)"));
    }
  }
  // vllm/platforms/cuda.py forces block size 64 for the FlashMLA sparse backend.
  c.set_kv_block_size(64);
  ASSIGN_OR_RETURN(int64_t block_size, flags.GetIntOr("--block-size", 64));
  // CacheConfig.block_size is a Literal, which vLLM's argument parser turns
  // into choices [U: the list read from vLLM's source of late 2025].
  constexpr int64_t kBlockSizes[] = {1, 8, 16, 32, 64, 128, 256};
  if (std::find(std::begin(kBlockSizes), std::end(kBlockSizes), block_size) ==
      std::end(kBlockSizes)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--serve: argument --block-size: invalid choice: ", block_size, " (choose from ",
        absl::StrJoin(kBlockSizes, ", "), ")"));
  }
  c.add_defaults_applied(flags.Has("--block-size")
                             ? "--block-size overridden to 64 (forced for FlashMLA sparse)"
                             : "block_size=64 (forced for FlashMLA sparse)");
  return absl::OkStatus();
}

// --generation-config, and what the requests' own sampling flags leave to it.
absl::Status ReadGenerationConfig(const workload::ParsedFlags& flags, const ServeContext& context,
                                  EngineConfig& c) {
  // Sampling defaults (vllm/config/model.py generation_config, default
  // "auto": the checkpoint's generation_config.json; "vllm": vLLM's own,
  // no top-p). A folder of another generation config is not read here.
  ASSIGN_OR_RETURN(std::string gen, flags.GetStringOr("--generation-config", "auto"));
  if (gen != "auto" && gen != "vllm") {
    return absl::UnimplementedError(absl::StrCat(
        "--serve: --generation-config: \"", gen,
        "\" is not modelled (auto, vllm): servesim does not read a generation config folder"));
  }
  c.set_applies_generation_config(gen == "auto");
  if (context.request_top_p.has_value()) c.set_request_top_p(*context.request_top_p);
  // vLLM samples greedily below a temperature of 1e-5 (_SAMPLING_EPS).
  c.set_greedy_requests(context.request_temperature.has_value() &&
                        *context.request_temperature < 1e-5);
  NoteDefault(flags, c, "--generation-config",
              "generation_config=auto (requests without sampling parameters get the "
              "checkpoint's defaults, e.g. top_p)");
  return absl::OkStatus();
}

// The kernels vLLM picks for DeepSeek-V3.2, and the environment variables
// that switch them.
absl::Status ReadKernelEnv(const workload::ParsedFlags& flags, const EnvVars& env,
                           const ServeContext& context, EngineConfig& c) {
  // Kernels.
  c.set_attention_backend("FLASHMLA_SPARSE");
  c.set_deep_gemm(true);
  // v0.13's top-k/top-p sampler is PyTorch's (a sort over the vocabulary);
  // FlashInfer's is opt-in (vllm/v1/sample/ops/topk_topp_sampler.py) [U].
  c.set_sampler_sorts_vocab(true);
  for (const auto& [key, value] : env) {
    if (key == "VLLM_ATTENTION_BACKEND") {
      RETURN_IF_ERROR(CheckAttentionBackend(value, context.dsa_attention));
    } else if (key == "VLLM_USE_DEEP_GEMM") {
      ASSIGN_OR_RETURN(bool on, EnvBool(key, value));
      c.set_deep_gemm(on);
    } else if (key == "VLLM_USE_FLASHINFER_SAMPLER") {
      ASSIGN_OR_RETURN(bool on, EnvBool(key, value));
      c.set_sampler_sorts_vocab(!on);
    }
  }
  return absl::OkStatus();
}

// Before any of the engine's own checks, as with flags: an environment
// variable servesim does not model is the answer (VLLM_ALLOW_LONG_MAX_MODEL_LEN
// would otherwise meet vLLM's max_model_len refusal, which it lifts).
absl::Status CheckModelledEnv(const EnvVars& env) {
  // The variables ReadKernelEnv reads.
  static constexpr std::array<const char*, 3> kModelled = {
      "VLLM_ATTENTION_BACKEND", "VLLM_USE_DEEP_GEMM", "VLLM_USE_FLASHINFER_SAMPLER"};
  for (const auto& [key, value] : env) {
    if (std::find(kModelled.begin(), kModelled.end(), key) == kModelled.end()) {
      return absl::InvalidArgumentError(
          absl::StrCat("--env: ", key, " is not an environment variable servesim models for vLLM (",
                       absl::StrJoin(kModelled, ", "),
                       "; those without effect, such as HF_HOME or NCCL_DEBUG, are listed in "
                       "docs/engines.md)"));
    }
  }
  return absl::OkStatus();
}

// --speculative-config: MTP drafts through DeepSeek's own layer.
absl::Status ReadSpeculativeConfig(const workload::ParsedFlags& flags, const ServeContext& context,
                                   EngineConfig& c) {
  // Speculative decoding through DeepSeek's MTP layer.
  if (flags.Has("--speculative-config")) {
    ASSIGN_OR_RETURN(std::string json, flags.GetString("--speculative-config"));
    absl::StatusOr<std::map<std::string, std::string>> spec = ParseFlatJsonObject(json);
    if (!spec.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("--serve: --speculative-config: ", spec.status().message()));
    }
    // Every other key of vLLM's SpeculativeConfig (draft model, tensor
    // parallelism, disable_by_batch_size, ...) would change what runs.
    for (const auto& [key, value] : *spec) {
      if (key != "method" && key != "num_speculative_tokens") {
        return absl::UnimplementedError(absl::StrCat(
            "--serve: --speculative-config: key \"", key,
            "\" is not modelled (method, num_speculative_tokens)"));
      }
    }
    const std::string method = (*spec)["method"];
    // SpeculativeConfig.__post_init__ without a draft model (the "model" key,
    // refused above as not modelled): only MTP, which drafts with the
    // target's own layer, and the model-free n-gram / suffix methods run;
    // any other method, or none, is vLLM's ValueError.
    if (method == "ngram" || method == "suffix") {
      return absl::UnimplementedError(absl::StrCat(
          "--serve: --speculative-config: method \"", method,
          "\" is not modelled (mtp, deepseek_mtp)"));
    }
    if (method != "mtp" && method != "deepseek_mtp") {
      return absl::FailedPreconditionError(
          "num_speculative_tokens was provided but without speculative model.");
    }
    int k = 0;
    if (!absl::SimpleAtoi((*spec)["num_speculative_tokens"], &k) || k < 1) {
      return absl::InvalidArgumentError(
          "--serve: --speculative-config: num_speculative_tokens must be an integer >= 1");
    }
    RETURN_IF_ERROR(CheckDraftTokensPerStep(k, "--serve: --speculative-config: num_speculative_tokens"));
    c.set_speculative_method("mtp");
    c.set_num_speculative_tokens(k);
    ASSIGN_OR_RETURN(const double accepted, MeanAcceptedDrafts(k, context));
    c.set_mean_accepted_drafts(accepted);
  }
  return absl::OkStatus();
}

// --enforce-eager, the CUDA-graph capture sizes and --async-scheduling
// (after the batch limits and the speculative config, which size the graphs).
absl::Status ReadCudaGraphs(const workload::ParsedFlags& flags, EngineConfig& c) {
  // CUDA graphs (vllm/config/vllm.py _set_cudagraph_sizes): capture sizes up
  // to min(max_num_seqs * (1 + k) * 2, 512, max_num_batched_tokens).
  ASSIGN_OR_RETURN(bool eager, flags.GetBool("--enforce-eager"));
  // --enforce-eager also turns off torch.compile (compilation mode NONE).
  c.set_torch_compiled(!eager);
  if (!eager) {
    const int64_t max_capture = std::min({c.max_num_seqs() * (1 + c.num_speculative_tokens()) * 2,
                                          int64_t{512}, c.max_num_batched_tokens()});
    for (int64_t s : {1, 2, 4}) {
      if (s <= max_capture) c.add_cuda_graph_sizes(static_cast<int32_t>(s));
    }
    for (int64_t s = 8; s < std::min<int64_t>(max_capture + 1, 256); s += 8) {
      c.add_cuda_graph_sizes(static_cast<int32_t>(s));
    }
    for (int64_t s = 256; s <= max_capture; s += 16) c.add_cuda_graph_sizes(static_cast<int32_t>(s));
    // Under speculative decoding a uniform decode batch is n x (1 + k) tokens:
    // vLLM rounds each capture size up to a multiple of 1 + k and keeps those
    // within the largest (adjust_cudagraph_sizes_for_spec_decode) [U: read in
    // vLLM's source of late 2025]. For k = 1 this drops size 1, for k = 3
    // sizes 1 and 2: sizes no decode batch has.
    if (const int64_t row = 1 + c.num_speculative_tokens(); row > 1) {
      std::vector<int32_t> rounded;
      for (int32_t s : c.cuda_graph_sizes()) {
        const int64_t up = (s + row - 1) / row * row;
        if (up <= max_capture && (rounded.empty() || rounded.back() != up)) {
          rounded.push_back(static_cast<int32_t>(up));
        }
      }
      c.clear_cuda_graph_sizes();
      for (int32_t s : rounded) c.add_cuda_graph_sizes(s);
    }
    c.set_cuda_graph_max_bs(c.cuda_graph_sizes().empty() ? 0 : c.cuda_graph_sizes().rbegin()[0]);
  }
  // v0.13.0 predates async scheduling by default (PR #27614): the CPU's
  // scheduling work sits between GPU steps unless --async-scheduling.
  ASSIGN_OR_RETURN(bool async, flags.GetBool("--async-scheduling"));
  c.set_overlap_schedule(async);
  return absl::OkStatus();
}

// --enable-prefix-caching / --no-enable-prefix-caching.
absl::Status ReadPrefixCaching(const workload::ParsedFlags& flags, EngineConfig& c) {
  // Prefix caching is on by default in the v1 engine; what it changes here is
  // what a preempted request recomputes, and that requests sharing a prefix
  // (--random-prefix-len, the chat template's tokens) reuse its cached blocks.
  ASSIGN_OR_RETURN(bool no_prefix_caching, flags.GetBool("--no-enable-prefix-caching"));
  ASSIGN_OR_RETURN(bool prefix_caching, flags.GetBool("--enable-prefix-caching"));
  if (no_prefix_caching && prefix_caching) {
    return absl::InvalidArgumentError(
        "--serve: --enable-prefix-caching and --no-enable-prefix-caching contradict each other");
  }
  c.set_prefix_caching(!no_prefix_caching);
  if (!no_prefix_caching && !prefix_caching) {
    c.add_defaults_applied("enable_prefix_caching=True (vLLM v1 default)");
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<EngineConfig> ParseVllmServe(const std::vector<std::string>& args,
                                            const EnvVars& env, const ServeContext& context) {
  RETURN_IF_ERROR(CheckVllmParserForms(args));
  ASSIGN_OR_RETURN(
      workload::ParsedFlags flags,
      workload::ParseFlags(args, VllmFlagSpecs(), ServeFlagParseOptions(/*python_style=*/true)));

  EngineConfig c;
  c.set_engine(VLLM);
  c.set_engine_version("vLLM v0.13.0");
  // Before the other checks: a flag servesim does not model is the answer.
  RETURN_IF_ERROR(CheckUnmodelledFlags(flags, VllmUnmodelledFlags(), "vLLM"));
  RETURN_IF_ERROR(CheckModelledEnv(env));
  if (flags.positionals().size() > 1) {
    return absl::InvalidArgumentError(absl::StrCat("--serve: unexpected argument \"",
                                                   flags.positionals()[1], "\" after the model"));
  }
  ASSIGN_OR_RETURN(std::string model, flags.GetStringOr("--model", ""));
  c.set_model(!flags.positionals().empty() ? flags.positionals()[0] : model);
  if (c.model().empty()) {
    // vLLM would serve its own default model, which is not the one modelled.
    return absl::InvalidArgumentError("--serve: vllm serve needs the model: vllm serve MODEL");
  }
  // vLLM answers a request for any other model with 404 (_check_model).
  if (flags.Has("--served-model-name")) {
    ASSIGN_OR_RETURN(std::vector<std::string> names, flags.GetStrings("--served-model-name"));
    for (const std::string& name : names) c.add_served_model_names(name);
  } else {
    c.add_served_model_names(c.model());
  }
  ListFlagsWithoutEffect(flags, VllmIgnoredFlags(), VllmUnmodelledFlags(), c);
  RETURN_IF_ERROR(ReadParallelism(flags, context, c));
  RETURN_IF_ERROR(ReadBatchLimits(flags, context, c));
  RETURN_IF_ERROR(ReadKvCache(flags, c));
  RETURN_IF_ERROR(ReadGenerationConfig(flags, context, c));
  RETURN_IF_ERROR(ReadKernelEnv(flags, env, context, c));
  RETURN_IF_ERROR(ReadSpeculativeConfig(flags, context, c));
  RETURN_IF_ERROR(ReadCudaGraphs(flags, c));
  RETURN_IF_ERROR(ReadPrefixCaching(flags, c));
  return c;
}

}  // namespace servesim::scenarios
