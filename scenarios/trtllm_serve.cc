// `trtllm-serve MODEL ...` as TensorRT-LLM 1.2.0rc5 (PyTorch backend) reads it,
// with the --extra_llm_api_options / --config YAML keys that change
// performance. Every default names its source in
// shared/reference/engine-defaults.md §C3 (and docs/engines.md).
#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/decimal.h"
#include "base/read_file.h"
#include "base/status_macros.h"
#include "scenarios/mini_yaml.h"
#include "scenarios/serve_command.h"
#include "sim/workload/command_line.h"

namespace servesim::scenarios {
namespace {

using workload::FlagSpec;

const std::vector<IgnoredFlag>& TrtllmIgnoredFlags() {
  // --log_level: click.Choice over tensorrt_llm.logger's severity names [U:
  // recalled from the 1.2 source, not pinned].
  static const auto* kFlags = new std::vector<IgnoredFlag>{
      {"--host"},
      {"--port", true, false, IgnoredFlag::Value::kInteger},
      {"--tokenizer"},
      {"--log_level",
       true,
       false,
       IgnoredFlag::Value::kText,
       {"internal_error", "error", "warning", "info", "verbose", "debug", "trace"}},
      {"--trust_remote_code", false},
      {"--reasoning_parser"},
      {"--num_postprocess_workers", true, false, IgnoredFlag::Value::kInteger},
      {"--served_model_name"},
      {"--custom_tokenizer"}};
  return *kFlags;
}

std::vector<FlagSpec> TrtllmFlagSpecs() {
  std::vector<FlagSpec> specs = {
      {"--tp_size", {}},
      {"--ep_size", {}},
      {"--pp_size", {}},
      {"--max_batch_size", {}},
      {"--max_num_tokens", {}},
      {"--max_seq_len", {}},
      {"--kv_cache_free_gpu_memory_fraction", {"--free_gpu_memory_fraction"}},
      {"--extra_llm_api_options", {"--config"}},
      {"--enable_chunked_prefill", {}, false},
      {"--backend", {}},
      {"--max_beam_width", {}},
  };
  AppendIgnoredFlagSpecs(TrtllmIgnoredFlags(), &specs);
  return specs;
}

// CudaGraphConfig._generate_cuda_graph_batch_sizes (llm_args.py): without
// padding 1..31, 32, 64, 128, powers of two from 256 below max, and max;
// with padding 1, 2, 4, 8..128 step 8, the same powers of two and max.
std::vector<int32_t> TrtllmCudaGraphSizes(int32_t max_bs, bool padding) {
  std::vector<int32_t> sizes;
  if (padding) {
    sizes = {1, 2, 4};
    for (int32_t s = 8; s <= 128; s += 8) sizes.push_back(s);
  } else {
    for (int32_t s = 1; s < 32; ++s) sizes.push_back(s);
    sizes.insert(sizes.end(), {32, 64, 128});
  }
  for (int64_t s = 256; s < max_bs; s *= 2) sizes.push_back(static_cast<int32_t>(s));
  sizes.push_back(max_bs);
  sizes.erase(std::remove_if(sizes.begin(), sizes.end(), [&](int32_t s) { return s > max_bs; }),
              sizes.end());
  std::sort(sizes.begin(), sizes.end());
  sizes.erase(std::unique(sizes.begin(), sizes.end()), sizes.end());
  return sizes;
}

// Typed reads of YAML scalars, errors naming the file, line and key.
struct YamlReader {
  std::string file;
  const std::map<std::string, YamlValue>& doc;

  // A key the file leaves out (a default the engine fills in) has no line.
  std::string Where(const std::string& key) const {
    const auto it = doc.find(key);
    if (it == doc.end()) return absl::StrCat("--serve: ", file, ": ", key);
    return absl::StrCat("--serve: ", file, ": line ", it->second.line, ": ", key);
  }
  absl::StatusOr<bool> Bool(const std::string& key) const {
    // PyYAML (YAML 1.1) reads yes/no and on/off as booleans too.
    const std::string v = absl::AsciiStrToLower(doc.at(key).scalar);
    if (v == "true" || v == "yes" || v == "on") return true;
    if (v == "false" || v == "no" || v == "off") return false;
    return absl::InvalidArgumentError(
        absl::StrCat(Where(key), ": expected true or false, got \"", doc.at(key).scalar, "\""));
  }
  // Integers within +-kMaxServeInt, as the command line's (serve_command.h).
  absl::StatusOr<int64_t> Int(const std::string& key) const {
    int64_t v = 0;
    if (doc.at(key).is_list || !absl::SimpleAtoi(doc.at(key).scalar, &v)) {
      return absl::InvalidArgumentError(
          absl::StrCat(Where(key), ": expected an integer, got \"", doc.at(key).scalar, "\""));
    }
    if (v > kMaxServeInt || v < -kMaxServeInt) {
      return absl::InvalidArgumentError(
          absl::StrCat(Where(key), ": must be within +-", kMaxServeInt, ", got ", v));
    }
    return v;
  }
  absl::StatusOr<double> Double(const std::string& key) const {
    double v = 0;
    if (!doc.at(key).is_list && ParseDecimal(doc.at(key).scalar, &v)) return v;
    return absl::InvalidArgumentError(
        absl::StrCat(Where(key), ": expected a number, got \"", doc.at(key).scalar, "\""));
  }
  absl::StatusOr<std::vector<int32_t>> IntList(const std::string& key) const {
    if (!doc.at(key).is_list) {
      return absl::InvalidArgumentError(absl::StrCat(Where(key), ": expected a list"));
    }
    std::vector<int32_t> out;
    for (const std::string& item : doc.at(key).items) {
      int32_t v = 0;
      if (!absl::SimpleAtoi(item, &v) || v < 1) {
        return absl::InvalidArgumentError(
            absl::StrCat(Where(key), ": expected positive integers, got \"", item, "\""));
      }
      out.push_back(v);
    }
    return out;
  }
};

// Keys of the LLM API options servesim reads; anything else is an error.
constexpr const char* kYamlKeys[] = {
    "enable_attention_dp",
    "enable_chunked_prefill",
    "disable_overlap_scheduler",
    "max_batch_size",
    "max_num_tokens",
    "max_seq_len",
    "cuda_graph_config",
    "cuda_graph_config.max_batch_size",
    "cuda_graph_config.batch_sizes",
    "cuda_graph_config.enable_padding",
    "kv_cache_config.free_gpu_memory_fraction",
    "kv_cache_config.dtype",
    "kv_cache_config.tokens_per_block",
    "kv_cache_config.enable_block_reuse",  // prefix reuse: no shared prefixes here
    "scheduler_config.capacity_scheduler_policy",
    "speculative_config.decoding_type",
    "speculative_config.num_nextn_predict_layers",
    "print_iter_log",  // logging only
};

absl::StatusOr<std::string> ReadFile(const std::string& path) {
  absl::StatusOr<std::string> text = ReadFileToString(path);  // refuses a directory too
  if (!text.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("--serve: --extra_llm_api_options: cannot read \"", path, "\""));
  }
  return text;
}

// trtllm-serve's LLM arguments as the command line and then the
// --extra_llm_api_options file set them.
struct TrtllmLlmArgs {
  int64_t tp = 1;
  int64_t pp = 1;
  int64_t ep = 1;
  int64_t max_batch_size = 0;
  int64_t max_num_tokens = 0;
  int64_t max_seq_len = 0;
  double free_gpu_memory_fraction = 0;
  bool chunked_prefill = false;
  bool attention_dp = false;
  bool overlap_scheduler = true;
  std::string capacity_policy = "GUARANTEED_NO_EVICT";
  std::string kv_dtype = "auto";
  int64_t tokens_per_block = 32;
  bool cuda_graphs = true;
  bool graph_padding = false;
  int32_t graph_max_bs = 0;
  std::vector<int32_t> graph_sizes;
  int mtp_layers = 0;
  std::set<std::string> yaml_keys;  // every key the options file sets
};

// A default the header notes once neither its flag nor the options-file key
// that overrides it (`yaml_key`, "" for none) sets the value.
struct DefaultNote {
  std::string flag;
  std::string yaml_key;
  std::string what;
};

absl::Status CheckBackend(const workload::ParsedFlags& flags, EngineConfig& c) {
  ASSIGN_OR_RETURN(std::string backend, flags.GetStringOr("--backend", "pytorch"));
  if (backend != "pytorch") {
    return absl::UnimplementedError(
        absl::StrCat("--serve: --backend ", backend, " is not modelled (pytorch)"));
  }
  if (flags.Has("--backend")) c.add_ignored_flags("--backend");
  return absl::OkStatus();
}

// Beam search (--max_beam_width > 1) is not modelled; 1 is the default.
absl::Status CheckBeamWidth(const workload::ParsedFlags& flags, EngineConfig& c) {
  ASSIGN_OR_RETURN(int64_t beams, flags.GetIntOr("--max_beam_width", 1));
  if (beams < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("--serve: --max_beam_width: must be >= 1, got ", beams));
  }
  if (beams > 1) {
    return absl::UnimplementedError(
        absl::StrCat("--serve: --max_beam_width ", beams, " (beam search) is not modelled (1)"));
  }
  if (flags.Has("--max_beam_width")) c.add_ignored_flags("--max_beam_width");
  return absl::OkStatus();
}

// TRTLLM_DG_ENABLED=0 turns DeepGEMM off (FP8 GEMMs and MoE fall back to
// TensorRT-LLM's own kernels): a kernel switch, not a refusal.
absl::StatusOr<bool> DeepGemmEnabled(const EnvVars& env) {
  bool enabled = true;
  for (const auto& [key, value] : env) {
    if (key != "TRTLLM_DG_ENABLED") {
      return absl::InvalidArgumentError(absl::StrCat(
          "--env: ", key,
          " is not an environment variable servesim models for TensorRT-LLM "
          "(TRTLLM_DG_ENABLED; those without effect, such as HF_HOME or NCCL_DEBUG, are listed in "
          "docs/engines.md)"));
    }
    if (value != "0" && value != "1") {
      return absl::InvalidArgumentError(
          absl::StrCat("--env: TRTLLM_DG_ENABLED: expected 0 or 1, got \"", value, "\""));
    }
    enabled = value == "1";
  }
  return enabled;
}

// The command line's values (serve.py click options, BuildConfig defaults),
// with the defaults they leave for the header.
absl::StatusOr<TrtllmLlmArgs> ReadCommandLine(const workload::ParsedFlags& flags,
                                              const ServeContext& context,
                                              std::vector<DefaultNote>& defaults) {
  TrtllmLlmArgs a;
  ASSIGN_OR_RETURN(a.tp, flags.GetIntOr("--tp_size", 1));
  ASSIGN_OR_RETURN(a.pp, flags.GetIntOr("--pp_size", 1));
  // --ep_size unset: moe_expert_parallel_size None -> the MoE runs TP
  // (Mapping: moe_tp = tp, moe_ep = 1).
  ASSIGN_OR_RETURN(a.ep, flags.GetIntOr("--ep_size", 1));
  defaults.push_back({"--ep_size", "", "moe ep_size=1 (unset: the MoE is tensor-parallel)"});
  constexpr int64_t kDefaultMaxBatchSize = 2048;  // BuildConfig
  constexpr int64_t kDefaultMaxNumTokens = 8192;  // BuildConfig
  ASSIGN_OR_RETURN(a.max_batch_size, flags.GetIntOr("--max_batch_size", kDefaultMaxBatchSize));
  defaults.push_back(
      {"--max_batch_size", "max_batch_size",
       absl::StrCat("max_batch_size=", kDefaultMaxBatchSize, " (BuildConfig default)")});
  ASSIGN_OR_RETURN(a.max_num_tokens, flags.GetIntOr("--max_num_tokens", kDefaultMaxNumTokens));
  defaults.push_back(
      {"--max_num_tokens", "max_num_tokens",
       absl::StrCat("max_num_tokens=", kDefaultMaxNumTokens, " (BuildConfig default)")});
  // max_seq_len None: the model's max_position_embeddings.
  ASSIGN_OR_RETURN(a.max_seq_len, flags.GetIntOr("--max_seq_len", context.max_position_embeddings));
  defaults.push_back({"--max_seq_len", "max_seq_len",
                      absl::StrCat("max_seq_len=", context.max_position_embeddings,
                                   " (model's max_position_embeddings)")});
  constexpr double kDefaultFreeGpuMemoryFraction = 0.9;  // KvCacheConfig
  ASSIGN_OR_RETURN(
      a.free_gpu_memory_fraction,
      flags.GetDoubleOr("--kv_cache_free_gpu_memory_fraction", kDefaultFreeGpuMemoryFraction));
  defaults.push_back({"--kv_cache_free_gpu_memory_fraction",
                      "kv_cache_config.free_gpu_memory_fraction",
                      absl::StrCat("free_gpu_memory_fraction=", kDefaultFreeGpuMemoryFraction,
                                   " (of memory free after weights and buffers)")});
  ASSIGN_OR_RETURN(a.chunked_prefill, flags.GetBool("--enable_chunked_prefill"));
  return a;
}

// Every key of the options file must be one servesim reads (kYamlKeys).
absl::Status CheckLlmApiOptionKeys(const std::string& path,
                                   const std::map<std::string, YamlValue>& doc) {
  for (const auto& [key, value] : doc) {
    if (std::find_if(std::begin(kYamlKeys), std::end(kYamlKeys),
                     [&](const char* k) { return key == k; }) != std::end(kYamlKeys)) {
      continue;
    }
    // A section given a scalar ("kv_cache_config: 5") is not an unknown option.
    std::vector<std::string> children;
    for (const char* k : kYamlKeys) {
      if (absl::StartsWith(k, absl::StrCat(key, "."))) children.push_back(k);
    }
    if (!children.empty()) {
      return absl::InvalidArgumentError(absl::StrCat("--serve: ", path, ": line ", value.line, ": ",
                                                     key, ": expected a mapping of its options (",
                                                     absl::StrJoin(children, ", "), ")"));
    }
    return absl::InvalidArgumentError(absl::StrCat("--serve: ", path, ": line ", value.line, ": ",
                                                   key, ": not an LLM API option servesim models (",
                                                   absl::StrJoin(kYamlKeys, ", "), ")"));
  }
  return absl::OkStatus();
}

// speculative_config: MTP only, its draft layers (1 when unset).
absl::Status ReadSpeculativeConfig(const YamlReader& y, TrtllmLlmArgs& a) {
  const auto& doc = y.doc;
  if (!doc.count("speculative_config.decoding_type")) {
    if (doc.count("speculative_config.num_nextn_predict_layers")) {
      return absl::InvalidArgumentError(
          absl::StrCat("--serve: ", y.file, ": speculative_config needs decoding_type: MTP"));
    }
    return absl::OkStatus();
  }
  const std::string type = doc.at("speculative_config.decoding_type").scalar;
  if (type != "MTP") {
    return absl::UnimplementedError(absl::StrCat(y.Where("speculative_config.decoding_type"), ": ",
                                                 type, " is not modelled (MTP)"));
  }
  int64_t layers = 1;
  if (doc.count("speculative_config.num_nextn_predict_layers")) {
    ASSIGN_OR_RETURN(layers, y.Int("speculative_config.num_nextn_predict_layers"));
  }
  if (layers < 1) {
    return absl::InvalidArgumentError(y.Where("speculative_config.num_nextn_predict_layers") +
                                      ": must be >= 1");
  }
  RETURN_IF_ERROR(
      CheckDraftTokensPerStep(layers, y.Where("speculative_config.num_nextn_predict_layers")));
  a.mtp_layers = static_cast<int>(layers);
  return absl::OkStatus();
}

// The --extra_llm_api_options file over the command line's values (trtllm-serve
// updates llm_args with it).
absl::Status ApplyLlmApiOptions(const std::string& path, TrtllmLlmArgs& a) {
  ASSIGN_OR_RETURN(std::string text, ReadFile(path));
  ASSIGN_OR_RETURN(auto doc, ParseMiniYaml(text, absl::StrCat("--serve: ", path)));
  const YamlReader y{path, doc};
  for (const auto& [key, value] : doc) a.yaml_keys.insert(key);
  RETURN_IF_ERROR(CheckLlmApiOptionKeys(path, doc));
  if (doc.count("enable_attention_dp")) {
    ASSIGN_OR_RETURN(a.attention_dp, y.Bool("enable_attention_dp"));
  }
  if (doc.count("enable_chunked_prefill")) {
    ASSIGN_OR_RETURN(a.chunked_prefill, y.Bool("enable_chunked_prefill"));
  }
  if (doc.count("disable_overlap_scheduler")) {
    ASSIGN_OR_RETURN(bool off, y.Bool("disable_overlap_scheduler"));
    a.overlap_scheduler = !off;
  }
  if (doc.count("max_batch_size")) {
    ASSIGN_OR_RETURN(a.max_batch_size, y.Int("max_batch_size"));
  }
  if (doc.count("max_num_tokens")) {
    ASSIGN_OR_RETURN(a.max_num_tokens, y.Int("max_num_tokens"));
  }
  if (doc.count("max_seq_len")) {
    ASSIGN_OR_RETURN(a.max_seq_len, y.Int("max_seq_len"));
  }
  // A mapping with keys is no entry of its own: what is left is null (no
  // graphs) or a value that is no CudaGraphConfig.
  if (doc.count("cuda_graph_config")) {
    const YamlValue& v = doc.at("cuda_graph_config");
    if (!v.is_null) {
      return absl::InvalidArgumentError(absl::StrCat(
          y.Where("cuda_graph_config"), ": expected a mapping or null, got \"",
          v.is_list ? absl::StrCat("[", absl::StrJoin(v.items, ", "), "]") : v.scalar, "\""));
    }
    a.cuda_graphs = false;
  }
  // Read for their type only: neither changes what servesim models.
  for (const char* flag : {"kv_cache_config.enable_block_reuse", "print_iter_log"}) {
    if (doc.count(flag)) RETURN_IF_ERROR(y.Bool(flag).status());
  }
  if (doc.count("cuda_graph_config.enable_padding")) {
    ASSIGN_OR_RETURN(a.graph_padding, y.Bool("cuda_graph_config.enable_padding"));
  }
  if (doc.count("cuda_graph_config.max_batch_size")) {
    ASSIGN_OR_RETURN(int64_t v, y.Int("cuda_graph_config.max_batch_size"));
    if (v < 0) {
      return absl::InvalidArgumentError(y.Where("cuda_graph_config.max_batch_size") +
                                        ": must be >= 0");
    }
    a.graph_max_bs = static_cast<int32_t>(v);
  }
  if (doc.count("cuda_graph_config.batch_sizes")) {
    ASSIGN_OR_RETURN(a.graph_sizes, y.IntList("cuda_graph_config.batch_sizes"));
  }
  if (doc.count("kv_cache_config.free_gpu_memory_fraction")) {
    ASSIGN_OR_RETURN(a.free_gpu_memory_fraction,
                     y.Double("kv_cache_config.free_gpu_memory_fraction"));
  }
  if (doc.count("kv_cache_config.dtype")) a.kv_dtype = doc.at("kv_cache_config.dtype").scalar;
  if (doc.count("kv_cache_config.tokens_per_block")) {
    ASSIGN_OR_RETURN(a.tokens_per_block, y.Int("kv_cache_config.tokens_per_block"));
  }
  if (doc.count("scheduler_config.capacity_scheduler_policy")) {
    a.capacity_policy = doc.at("scheduler_config.capacity_scheduler_policy").scalar;
    if (a.capacity_policy != "GUARANTEED_NO_EVICT" && a.capacity_policy != "MAX_UTILIZATION") {
      return absl::UnimplementedError(absl::StrCat(
          y.Where("scheduler_config.capacity_scheduler_policy"), ": ", a.capacity_policy,
          " is not modelled (GUARANTEED_NO_EVICT, MAX_UTILIZATION)"));
    }
  }
  return ReadSpeculativeConfig(y, a);
}

absl::Status ValidateLlmArgs(const TrtllmLlmArgs& a, const ServeContext& context) {
  for (auto [name, v] : {std::pair{"--tp_size", a.tp},
                         {"--ep_size", a.ep},
                         {"--pp_size", a.pp},
                         {"--max_batch_size", a.max_batch_size},
                         {"--max_num_tokens", a.max_num_tokens},
                         {"--max_seq_len", a.max_seq_len},
                         {"tokens_per_block", a.tokens_per_block}}) {
    if (v < 1) {
      return absl::InvalidArgumentError(absl::StrCat("--serve: ", name, ": must be >= 1, got ", v));
    }
  }
  if (!(a.free_gpu_memory_fraction > 0 && a.free_gpu_memory_fraction <= 1)) {
    return absl::InvalidArgumentError(
        absl::StrCat("--serve: free_gpu_memory_fraction: must be in (0, 1], got ",
                     FormatDecimal(a.free_gpu_memory_fraction)));
  }
  if (a.max_seq_len > context.max_position_embeddings) {
    return absl::FailedPreconditionError(absl::StrCat(
        "max_seq_len (", a.max_seq_len, ") is larger than the model's max_position_embeddings (",
        context.max_position_embeddings, ")"));
  }
  return absl::OkStatus();
}

// KV cache: "auto" follows the checkpoint, whose KV is not quantised: BF16
// (FlashMLA on H200 needs a BF16 cache per a 1.2.0rc7 report [U]).
absl::Status SetKvCache(const TrtllmLlmArgs& a, EngineConfig& c) {
  if (a.kv_dtype == "auto" || a.kv_dtype == "bfloat16") {
    c.set_kv_cache_dtype(KV_BF16);
    if (a.kv_dtype == "auto") {
      c.add_defaults_applied(
          "kv_cache_config.dtype=auto -> BF16 (checkpoint has no KV quantisation)");
    }
  } else if (a.kv_dtype == "fp8") {
    c.set_kv_cache_dtype(KV_FP8);
    // Not refused on an uncertain report of a later release; said instead.
    c.add_defaults_applied(
        "kv_cache_config.dtype=fp8 priced as FlashMLA's FP8 layout (uncertain: a 1.2.0rc7 "
        "report says FlashMLA needs a BF16 cache on H200, docs/engines.md)");
  } else {
    return absl::InvalidArgumentError(absl::StrCat("--serve: kv_cache_config.dtype: \"", a.kv_dtype,
                                                   "\" is not supported (auto, bfloat16, fp8)"));
  }
  c.set_kv_block_size(static_cast<int32_t>(a.tokens_per_block));
  if (!a.yaml_keys.count("kv_cache_config.tokens_per_block")) {
    c.add_defaults_applied(
        "tokens_per_block=32 (KvCacheConfig default; the DeepSeek README asks 64 for V3.2's DSA)");
  }
  return absl::OkStatus();
}

// CUDA graphs (CudaGraphConfig): on by default; max_batch_size 0 resolves
// to 128 [U]; explicit batch_sizes win.
void SetCudaGraphs(const TrtllmLlmArgs& a, EngineConfig& c) {
  if (!a.cuda_graphs) return;
  std::vector<int32_t> sizes = a.graph_sizes;
  if (!sizes.empty()) {
    std::sort(sizes.begin(), sizes.end());
    sizes.erase(std::unique(sizes.begin(), sizes.end()), sizes.end());
  } else {
    int32_t max_bs = a.graph_max_bs;
    if (max_bs == 0) {
      max_bs = 128;
      c.add_defaults_applied("cuda_graph_config.max_batch_size=128 (0 resolves to 128) [U]");
    }
    sizes = TrtllmCudaGraphSizes(max_bs, a.graph_padding);
  }
  for (int32_t s : sizes) c.add_cuda_graph_sizes(s);
  c.set_cuda_graph_max_bs(sizes.back());
  c.set_cuda_graph_padding(a.graph_padding);
}

}  // namespace

std::vector<workload::FlagSpec> TrtllmServeFlagSpecs() { return TrtllmFlagSpecs(); }

absl::StatusOr<EngineConfig> ParseTrtllmServe(const std::vector<std::string>& args,
                                              const EnvVars& env, const ServeContext& context) {
  ASSIGN_OR_RETURN(
      workload::ParsedFlags flags,
      workload::ParseFlags(args, TrtllmFlagSpecs(), ServeFlagParseOptions(/*python_style=*/true)));

  EngineConfig c;
  c.set_engine(TRTLLM);
  c.set_engine_version("TensorRT-LLM 1.2.0rc5");
  if (flags.positionals().size() != 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--serve: trtllm-serve takes one model argument, got ", flags.positionals().size()));
  }
  c.set_model(flags.positionals()[0]);
  ListFlagsWithoutEffect(flags, TrtllmIgnoredFlags(), /*unmodelled=*/{}, c);
  RETURN_IF_ERROR(CheckBackend(flags, c));
  RETURN_IF_ERROR(CheckIgnoredFlagValues(flags, TrtllmIgnoredFlags()));
  RETURN_IF_ERROR(CheckBeamWidth(flags, c));
  ASSIGN_OR_RETURN(const bool deep_gemm, DeepGemmEnabled(env));
  c.set_deep_gemm(deep_gemm);

  std::vector<DefaultNote> defaults;
  ASSIGN_OR_RETURN(TrtllmLlmArgs a, ReadCommandLine(flags, context, defaults));
  if (flags.Has("--extra_llm_api_options")) {
    ASSIGN_OR_RETURN(std::string path, flags.GetString("--extra_llm_api_options"));
    RETURN_IF_ERROR(ApplyLlmApiOptions(path, a));
  }
  for (const DefaultNote& d : defaults) {
    if (!flags.Has(d.flag) && (d.yaml_key.empty() || !a.yaml_keys.count(d.yaml_key))) {
      c.add_defaults_applied(d.what);
    }
  }
  RETURN_IF_ERROR(ValidateLlmArgs(a, context));

  c.set_tp(static_cast<int32_t>(a.tp));
  c.set_ep(static_cast<int32_t>(a.ep));
  c.set_pp(static_cast<int32_t>(a.pp));
  c.set_enable_dp_attention(a.attention_dp);
  c.set_dp(a.attention_dp ? static_cast<int32_t>(a.tp) : 1);
  c.set_gpus_per_node(8);
  c.set_nnodes(1);
  c.set_max_num_seqs(a.max_batch_size);
  c.set_max_num_batched_tokens(a.max_num_tokens);
  c.set_max_model_len(a.max_seq_len);
  c.set_chunked_prefill(a.chunked_prefill);
  if (!flags.Has("--enable_chunked_prefill") && !a.yaml_keys.count("enable_chunked_prefill")) {
    c.add_defaults_applied("enable_chunked_prefill=False (trtllm-serve default)");
  }
  c.set_schedule_policy(a.capacity_policy);
  if (!a.yaml_keys.count("scheduler_config.capacity_scheduler_policy")) {
    c.add_defaults_applied(
        "capacity_scheduler_policy=GUARANTEED_NO_EVICT (trtllm-serve SchedulerConfig)");
  }
  c.set_overlap_schedule(a.overlap_scheduler);
  c.set_gpu_memory_fraction(a.free_gpu_memory_fraction);
  RETURN_IF_ERROR(SetKvCache(a, c));
  SetCudaGraphs(a, c);

  c.set_attention_backend("TRTLLM");
  if (a.mtp_layers > 0) {
    c.set_speculative_method("mtp");
    c.set_num_speculative_tokens(a.mtp_layers);
    ASSIGN_OR_RETURN(const double accepted, MeanAcceptedDrafts(a.mtp_layers, context));
    c.set_mean_accepted_drafts(accepted);
  }
  return c;
}

}  // namespace servesim::scenarios
