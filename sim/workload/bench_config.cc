#include "sim/workload/bench_config.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "base/decimal.h"
#include "base/status_macros.h"
#include "sim/workload/command_line.h"
#include "sim/workload/string_view_compat.h"

namespace servesim::workload {
namespace {

// vllm bench serve's chat-completions backend.
constexpr char kChatBackend[] = "openai-chat";

constexpr char kContext[] = "--bench";

absl::Status Bad(std::string_view flag, std::string_view problem) {
  return absl::InvalidArgumentError(absl::StrCat(kContext, ": ", ToAbsl(flag), ": ", ToAbsl(problem)));
}

std::vector<FlagSpec> BenchFlagSpecs() {
  std::vector<FlagSpec> specs = {
      {"--dataset-name", {}, true},
      {"--dataset-path", {}, true},
      {"--num-prompts", {}, true},
      {"--seed", {}, true},
      {"--random-input-len", {}, true},
      {"--random-output-len", {}, true},
      {"--random-range-ratio", {}, true},
      {"--random-prefix-len", {}, true},
      {"--sharegpt-output-len", {}, true},
      {"--disable-shuffle", {}, false},
      {"--no-oversample", {}, false},
      {"--request-rate", {}, true},
      {"--burstiness", {}, true},
      {"--ramp-up-strategy", {}, true},
      {"--ramp-up-start-rps", {}, true},
      {"--ramp-up-end-rps", {}, true},
      {"--max-concurrency", {}, true},
      {"--ignore-eos", {}, false},
      {"--top-p", {}, true},
      {"--top-k", {}, true},
      {"--min-p", {}, true},
      {"--temperature", {}, true},
      {"--backend", {}, true},
      {"--endpoint", {}, true},
      {"--model", {}, true},
      {"--percentile-metrics", {}, true},
      {"--metric-percentiles", {}, true},
      {"--trace-time-scale", {}, true},
      {"--goodput", {}, true, /*multiple_values=*/true},
      {"--save-result", {}, false},
      {"--append-result", {}, false},
      {"--save-detailed", {}, false},
      {"--served-model-name", {}, true},
      {"--result-dir", {}, true},
      {"--result-filename", {}, true},
      {"--num-warmups", {}, true},
      {"--random-batch-size", {}, true},
      {"--frequency-penalty", {}, true},
      {"--presence-penalty", {}, true},
      {"--repetition-penalty", {}, true},
      {"--use-beam-search", {}, false},
      {"--logprobs", {}, true},
      {"--profile", {}, false},
      {"--lora-modules", {}, true, /*multiple_values=*/true},
  };
  for (const IgnoredBenchFlag& flag : IgnoredBenchFlags()) {
    specs.push_back({std::string(flag.name), {}, flag.takes_value,
                     /*multiple_values=*/flag.name == "--metadata" || flag.name == "--header"});
  }
  return specs;
}

// Token counts past this are no request any model takes, and would overflow
// the length arithmetic (a range around them, a prefix added).
constexpr int64_t kMaxRequestTokens = int64_t{1} << 30;
// A simulated request keeps a few kB (its lengths, timestamps and every
// token's arrival for the ITL figures): a million is a few GB and minutes of
// replay, past which a run exhausts memory instead of answering.
constexpr int64_t kMaxPrompts = 1'000'000;

// Reads an integer flag that must be >= min_value and <= max_value.
absl::Status ReadInt(const ParsedFlags& flags, std::string_view name, int64_t min_value,
                     int64_t* out, int64_t max_value = std::numeric_limits<int64_t>::max()) {
  if (!flags.Has(name)) return absl::OkStatus();
  ASSIGN_OR_RETURN(int64_t value, flags.GetInt(name));
  if (value < min_value) {
    return Bad(name, absl::StrCat("must be >= ", min_value, ", got ", value));
  }
  if (value > max_value) {
    return Bad(name, absl::StrCat("must be <= ", max_value, ", got ", value));
  }
  *out = value;
  return absl::OkStatus();
}

absl::Status NotModelled(std::string_view flag, std::string_view what) {
  return absl::UnimplementedError(
      absl::StrCat(kContext, ": ", ToAbsl(flag), " ", ToAbsl(what), " is not modelled"));
}

// Flags of vllm bench serve that change what the engine computes per token
// or per request in ways servesim does not price: refused by name rather than
// run as if absent. Each one's neutral value (vLLM's default) is accepted.
absl::Status RefuseUnmodelledGeneration(const ParsedFlags& flags) {
  if (flags.Has("--random-batch-size")) {
    int64_t batch = 1;
    RETURN_IF_ERROR(ReadInt(flags, "--random-batch-size", 1, &batch));
    if (batch != 1) return NotModelled("--random-batch-size", "> 1 (batched embedding prompts)");
  }
  for (const auto& [flag, neutral] :
       {std::pair<const char*, double>{"--frequency-penalty", 0.0}, {"--presence-penalty", 0.0},
        {"--repetition-penalty", 1.0}}) {
    if (!flags.Has(flag)) continue;
    ASSIGN_OR_RETURN(double value, flags.GetDouble(flag));
    if (!std::isfinite(value))
      return Bad(flag, absl::StrCat("must be finite, got ", FormatDecimal(value)));
    if (value != neutral) {
      return NotModelled(flag, absl::StrCat("other than ", neutral, " (the sampler's penalties)"));
    }
  }
  ASSIGN_OR_RETURN(bool beam_search, flags.GetBool("--use-beam-search"));
  if (beam_search) return NotModelled("--use-beam-search", "(beam search)");
  if (flags.Has("--logprobs")) {
    return NotModelled("--logprobs", "(the sampler's log-probabilities per token)");
  }
  ASSIGN_OR_RETURN(bool profile, flags.GetBool("--profile"));
  if (profile) return NotModelled("--profile", "(the server's torch profiler during the run)");
  if (flags.Has("--lora-modules")) return NotModelled("--lora-modules", "(LoRA adapters)");
  return absl::OkStatus();
}

// vllm bench serve's checks of the ramp-up flags (vllm/benchmarks/serve.py,
// main), in its order and with its messages.
absl::Status ReadRampUp(const ParsedFlags& flags, BenchConfig& config) {
  if (!flags.Has("--ramp-up-strategy")) {
    for (const char* flag : {"--ramp-up-start-rps", "--ramp-up-end-rps"}) {
      // vllm ignores them without a strategy; a rate the run would not use
      // is a command typed wrong.
      if (flags.Has(flag)) return Bad(flag, "needs --ramp-up-strategy linear|exponential");
    }
    return absl::OkStatus();
  }
  ASSIGN_OR_RETURN(std::string shape, flags.GetString("--ramp-up-strategy"));
  RampUp ramp;
  if (shape == "linear") {
    ramp.shape = RampUp::Shape::kLinear;
  } else if (shape == "exponential") {
    ramp.shape = RampUp::Shape::kExponential;
  } else {
    return Bad("--ramp-up-strategy",
               absl::StrCat("invalid choice \"", shape, "\" (choose from linear, exponential)"));
  }
  if (config.request_rate_given && !std::isinf(config.request_rate)) {
    return Bad("--ramp-up-strategy",
               "When using ramp-up, do not specify --request-rate. The request rate will be "
               "controlled by ramp-up parameters. Please remove the --request-rate argument.");
  }
  if (!flags.Has("--ramp-up-start-rps") || !flags.Has("--ramp-up-end-rps")) {
    return Bad("--ramp-up-strategy",
               "When using --ramp-up-strategy, both --ramp-up-start-rps and --ramp-up-end-rps "
               "must be specified");
  }
  ASSIGN_OR_RETURN(ramp.start_rps, flags.GetInt("--ramp-up-start-rps"));
  ASSIGN_OR_RETURN(ramp.end_rps, flags.GetInt("--ramp-up-end-rps"));
  if (ramp.start_rps < 0 || ramp.end_rps < 0) {
    return Bad("--ramp-up-start-rps", "Ramp-up start and end RPS must be non-negative");
  }
  if (ramp.start_rps > ramp.end_rps) {
    return Bad("--ramp-up-start-rps", "Ramp-up start RPS must be less than end RPS");
  }
  if (ramp.shape == RampUp::Shape::kExponential && ramp.start_rps == 0) {
    return Bad("--ramp-up-start-rps", "For exponential ramp-up, the start RPS cannot be 0.");
  }
  // vllm lets a linear ramp start at 0 and then fails on its first request
  // (get_request asserts a positive rate) [U: the assertion recalled from
  // late-2025 source]; servesim refuses it up front.
  if (ramp.start_rps == 0) {
    return Bad("--ramp-up-start-rps",
               "0: the first request would be sent at 0 req/s (vllm bench serve stops on "
               "it: \"Obtained non-positive request rate\")");
  }
  config.ramp_up = ramp;
  return absl::OkStatus();
}

}  // namespace

bool SendsChatMessages(const BenchConfig& config) { return config.backend == kChatBackend; }

std::string ResultFilePath(const BenchConfig& config, const std::string& file_name) {
  const std::string& dir = config.save_result_dir;
  if (dir.empty() || absl::StartsWith(file_name, "/")) return file_name;
  return absl::StrCat(dir, absl::EndsWith(dir, "/") ? "" : "/", file_name);
}

std::string_view RampUpShapeName(RampUp::Shape shape) {
  return shape == RampUp::Shape::kLinear ? "linear" : "exponential";
}

std::string_view DatasetNameToString(DatasetName name) {
  switch (name) {
    case DatasetName::kSharegpt:
      return "sharegpt";
    case DatasetName::kRandom:
      return "random";
    case DatasetName::kTrace:
      return "trace";
  }
  return "?";
}

const std::vector<IgnoredBenchFlag>& IgnoredBenchFlags() {
  static const auto* const kFlags = new std::vector<IgnoredBenchFlag>{
      {"--host", true, "server address; the simulated server has none"},
      {"--port", true, "server address", /*integer=*/true},
      {"--base-url", true, "server address"},
      {"--tokenizer", true, "servesim counts tokens from tables, not text"},
      {"--tokenizer-mode", true, "servesim counts tokens from tables, not text"},
      {"--trust-remote-code", false, "tokenizer loading only"},
      {"--metadata", true, "free-form key=value pairs stored in the result file"},
      {"--label", true, "result-file label"},
      {"--disable-tqdm", false, "progress bar"},
      {"--ready-check-timeout-sec", true,
       "server readiness probe before the timed run (engine-defaults.md B3)", /*integer=*/true},
      {"--request-id-prefix", true, "request-id text only"},
      {"--header", true, "HTTP headers sent with every request"},
  };
  return *kFlags;
}

namespace {

// The dataset: which, where, how many prompts and how long (vllm's dataset
// flags and their checks).
absl::Status ReadDataset(const ParsedFlags& flags, BenchConfig& config) {
  if (flags.Has("--dataset-name")) {
    ASSIGN_OR_RETURN(std::string name, flags.GetString("--dataset-name"));
    if (name == "sharegpt") {
      config.dataset_name = DatasetName::kSharegpt;
    } else if (name == "random") {
      config.dataset_name = DatasetName::kRandom;
    } else if (name == "trace") {
      config.dataset_name = DatasetName::kTrace;
    } else {
      return Bad("--dataset-name",
                 absl::StrCat("unsupported \"", name, "\" (servesim has sharegpt, random, trace)"));
    }
  }
  ASSIGN_OR_RETURN(config.dataset_path, flags.GetStringOr("--dataset-path", ""));
  // vllm's _ValidateDatasetArgs, a parser error.
  if (config.dataset_name == DatasetName::kRandom && !config.dataset_path.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--bench: Cannot use 'random' dataset with --dataset-path. Please specify the "
        "appropriate --dataset-name (e.g., 'sharegpt', 'custom', 'sonnet') for your dataset "
        "file: ", config.dataset_path));
  }
  // ShareGPTDataset.load_data: vllm bench serve reads the file, so a command
  // without one does not run live. servesim reads its length table instead,
  // whatever the path names.
  if (config.dataset_name == DatasetName::kSharegpt && config.dataset_path.empty()) {
    return Bad("--dataset-path",
               "dataset_path must be provided for loading data. (vllm bench serve's ShareGPT "
               "loader; servesim does not read the file, but a command without one does not "
               "run live)");
  }
  RETURN_IF_ERROR(ReadInt(flags, "--num-prompts", 1, &config.num_prompts, kMaxPrompts));
  config.num_prompts_given = flags.Has("--num-prompts");
  // numpy.random.default_rng, which vLLM seeds with it, rejects negative seeds.
  RETURN_IF_ERROR(ReadInt(flags, "--seed", 0, &config.seed));
  RETURN_IF_ERROR(ReadInt(flags, "--random-input-len", 1, &config.random_input_len,
                          kMaxRequestTokens));
  RETURN_IF_ERROR(ReadInt(flags, "--random-output-len", 1, &config.random_output_len,
                          kMaxRequestTokens));
  RETURN_IF_ERROR(ReadInt(flags, "--random-prefix-len", 0, &config.random_prefix_len,
                          kMaxRequestTokens));
  ASSIGN_OR_RETURN(config.random_range_ratio, flags.GetDoubleOr("--random-range-ratio", 0.0));
  if (!(config.random_range_ratio >= 0.0 && config.random_range_ratio < 1.0)) {
    return Bad("--random-range-ratio",
               absl::StrCat("must be in [0, 1), got ", FormatDecimal(config.random_range_ratio)));
  }
  if (flags.Has("--sharegpt-output-len")) {
    int64_t len = 0;
    RETURN_IF_ERROR(ReadInt(flags, "--sharegpt-output-len", 1, &len, kMaxRequestTokens));
    config.sharegpt_output_len = len;
  }
  ASSIGN_OR_RETURN(config.disable_shuffle, flags.GetBool("--disable-shuffle"));
  ASSIGN_OR_RETURN(config.no_oversample, flags.GetBool("--no-oversample"));
  ASSIGN_OR_RETURN(config.ignore_eos, flags.GetBool("--ignore-eos"));

  return absl::OkStatus();
}

// When requests are sent: the rate, its burstiness or ramp-up, the
// concurrency limit.
absl::Status ReadArrivals(const ParsedFlags& flags, BenchConfig& config) {
  config.request_rate_given = flags.Has("--request-rate");
  ASSIGN_OR_RETURN(config.request_rate,
                   flags.GetDoubleOr("--request-rate", config.request_rate));
  if (std::isnan(config.request_rate) || config.request_rate <= 0.0) {
    return Bad("--request-rate",
               absl::StrCat("must be > 0 or inf, got ", FormatDecimal(config.request_rate)));
  }
  ASSIGN_OR_RETURN(config.burstiness, flags.GetDoubleOr("--burstiness", 1.0));
  config.burstiness_given = flags.Has("--burstiness");
  if (!(config.burstiness > 0.0) || std::isinf(config.burstiness)) {
    return Bad("--burstiness",
               absl::StrCat("must be finite and > 0, got ", FormatDecimal(config.burstiness)));
  }
  RETURN_IF_ERROR(ReadRampUp(flags, config));
  if (flags.Has("--max-concurrency")) {
    int64_t limit = 0;
    RETURN_IF_ERROR(ReadInt(flags, "--max-concurrency", 1, &limit));
    config.max_concurrency = limit;
  }
  return absl::OkStatus();
}

// The sampling parameters each request carries.
absl::Status ReadSampling(const ParsedFlags& flags, BenchConfig& config) {
  if (flags.Has("--top-p")) {
    ASSIGN_OR_RETURN(double p, flags.GetDouble("--top-p"));
    if (!(p > 0.0 && p <= 1.0))
      return Bad("--top-p", absl::StrCat("must be in (0, 1], got ", FormatDecimal(p)));
    config.top_p = p;
  }
  if (flags.Has("--top-k")) {
    ASSIGN_OR_RETURN(int64_t k, flags.GetInt("--top-k"));
    if (k == 0 || k < -1) return Bad("--top-k", absl::StrCat("must be -1 (off) or >= 1, got ", k));
    config.top_k = k;
  }
  if (flags.Has("--min-p")) {
    ASSIGN_OR_RETURN(double p, flags.GetDouble("--min-p"));
    if (!(p >= 0.0 && p <= 1.0))
      return Bad("--min-p", absl::StrCat("must be in [0, 1], got ", FormatDecimal(p)));
    config.min_p = p;
  }
  if (flags.Has("--temperature")) {
    ASSIGN_OR_RETURN(double t, flags.GetDouble("--temperature"));
    if (!(t >= 0.0) || std::isinf(t)) {
      return Bad("--temperature", absl::StrCat("must be finite and >= 0, got ", FormatDecimal(t)));
    }
    config.temperature = t;
  }
  return absl::OkStatus();
}

// The items of vllm's KEY=VALUE flags (--metadata, --header); an item
// without '=' is its error.
absl::StatusOr<std::vector<std::string>> KeyValueItems(const ParsedFlags& flags, const char* flag,
                                                       const char* noun) {
  ASSIGN_OR_RETURN(std::vector<std::string> items, flags.GetStrings(flag));
  for (const std::string& item : items) {
    if (item.find('=') == std::string::npos) {
      return Bad(flag, absl::StrCat("\"", item, "\": Invalid ", noun,
                                    " format. Please use KEY=VALUE format."));
    }
  }
  return items;
}

// The client: backend and endpoint (with vllm's URL checks), the model it
// names, the result's labels.
absl::Status ReadClient(const ParsedFlags& flags, BenchConfig& config) {
  ASSIGN_OR_RETURN(config.backend, flags.GetStringOr("--backend", config.backend));
  // vllm bench serve's text-generation backends: openai-chat sends chat
  // messages, the rest a bare prompt (vllm/benchmarks/lib/endpoint_request_func.py
  // [U: list pinned to a late-2025 copy]). Audio and embedding backends do
  // not generate text.
  static const auto* kGenerationBackends = new std::vector<std::string>{
      kChatBackend, "openai", "vllm", "sglang", "tgi", "lmdeploy",
      "deepspeed-mii", "tensorrt-llm", "scalellm", "llama.cpp"};
  if (std::find(kGenerationBackends->begin(), kGenerationBackends->end(), config.backend) ==
      kGenerationBackends->end()) {
    return Bad("--backend", absl::StrCat("\"", config.backend,
                                         "\" is not a text-generation backend of vllm bench "
                                         "serve (",
                                         absl::StrJoin(*kGenerationBackends, ", "), ")"));
  }
  ASSIGN_OR_RETURN(config.endpoint, flags.GetStringOr("--endpoint", config.endpoint));
  // The request functions check their URL before sending (_validate_api_url
  // in endpoint_request_func.py): the chat client needs a chat endpoint, and
  // the default /v1/completions is not one.
  if (config.backend == kChatBackend &&
      !absl::EndsWith(config.endpoint, "chat/completions") &&
      !absl::EndsWith(config.endpoint, "profile")) {
    return Bad("--endpoint", absl::StrCat("\"", config.endpoint,
                                          "\": OpenAI Chat Completions API URL must end with "
                                          "'chat/completions' (--backend openai-chat)"));
  }
  // The completions client (backends openai and vllm [U: the others' request
  // functions not read]) checks its URL the same way.
  if ((config.backend == "openai" || config.backend == "vllm") &&
      !absl::EndsWith(config.endpoint, "completions") &&
      !absl::EndsWith(config.endpoint, "profile")) {
    return Bad("--endpoint", absl::StrCat("\"", config.endpoint,
                                          "\": OpenAI Completions API URL must end with "
                                          "'completions' or 'profile' (--backend ",
                                          config.backend, ")"));
  }
  // The other way round the URL check passes ("completions"), but the body
  // is a bare prompt, which the chat endpoint answers with 400 for want of
  // `messages`: vllm bench serve's initial test request fails and it stops.
  if (config.backend != kChatBackend && absl::EndsWith(config.endpoint, "chat/completions")) {
    return Bad("--endpoint", absl::StrCat("\"", config.endpoint, "\" with --backend ",
                                          config.backend,
                                          ": the backend posts a bare prompt, which a chat "
                                          "endpoint refuses (it needs messages), so vllm bench "
                                          "serve's initial test run fails; use --backend "
                                          "openai-chat"));
  }
  ASSIGN_OR_RETURN(config.model, flags.GetStringOr("--model", ""));
  ASSIGN_OR_RETURN(config.served_model_name, flags.GetStringOr("--served-model-name", ""));
  ASSIGN_OR_RETURN(config.tokenizer, flags.GetStringOr("--tokenizer", ""));
  if (flags.Has("--label")) {
    ASSIGN_OR_RETURN(std::string label, flags.GetString("--label"));
    config.label = label;
  }
  if (flags.Has("--metadata")) {
    ASSIGN_OR_RETURN(std::vector<std::string> items,
                     KeyValueItems(flags, "--metadata", "metadata"));
    for (const std::string& item : items) {
      // As vllm: item.split("=") gives the key and the value (what follows
      // a second '=' is dropped).
      std::vector<std::string> kv = absl::StrSplit(item, '=');
      config.metadata.emplace_back(std::string(absl::StripAsciiWhitespace(kv[0])),
                                   std::string(absl::StripAsciiWhitespace(kv[1])));
    }
  }
  // The headers change nothing servesim models, but the client refuses a
  // bad item before it sends a request (main_async in
  // vllm/benchmarks/serve.py [U: recalled, not pinned to v0.13]).
  if (flags.Has("--header")) {
    RETURN_IF_ERROR(KeyValueItems(flags, "--header", "header").status());
  }
  return absl::OkStatus();
}

// What the report prints beyond its defaults: percentiles and goodput SLOs.
absl::Status ReadReportOptions(const ParsedFlags& flags, BenchConfig& config) {
  if (flags.Has("--percentile-metrics")) {
    ASSIGN_OR_RETURN(std::string text, flags.GetString("--percentile-metrics"));
    config.percentile_metrics.clear();
    for (absl::string_view metric : absl::StrSplit(text, ',')) {
      if (metric != "ttft" && metric != "tpot" && metric != "itl" && metric != "e2el") {
        return Bad("--percentile-metrics",
                   absl::StrCat("unknown metric \"", metric, "\" (ttft, tpot, itl, e2el)"));
      }
      config.percentile_metrics.emplace_back(metric);
    }
  }
  if (flags.Has("--metric-percentiles")) {
    ASSIGN_OR_RETURN(std::string text, flags.GetString("--metric-percentiles"));
    config.metric_percentiles.clear();
    for (absl::string_view item : absl::StrSplit(text, ',')) {
      double p;
      if (!ParseDecimal(item, &p) || !(p >= 0.0 && p <= 100.0)) {
        return Bad("--metric-percentiles",
                   absl::StrCat("expected numbers in [0, 100], got \"", item, "\""));
      }
      config.metric_percentiles.push_back(p);
    }
  }

  if (flags.Has("--goodput")) {
    // vllm's parse_goodput: KEY:VALUE pairs, KEY in ttft/tpot/e2el, VALUE
    // non-negative milliseconds.
    ASSIGN_OR_RETURN(std::vector<std::string> items, flags.GetStrings("--goodput"));
    for (const std::string& item : items) {
      std::vector<std::string> kv = absl::StrSplit(item, ':');
      double ms = 0;
      if (kv.size() != 2 || !ParseDecimal(kv[1], &ms)) {
        return Bad("--goodput", absl::StrCat("expected KEY:VALUE pairs such as ttft:500, got \"",
                                             item, "\""));
      }
      if (kv[0] != "ttft" && kv[0] != "tpot" && kv[0] != "e2el") {
        return Bad("--goodput", absl::StrCat("invalid metric name \"", kv[0],
                                             "\" (the SLO name should be one of ttft, tpot, e2el)"));
      }
      if (!(ms >= 0) || std::isinf(ms)) {
        return Bad("--goodput", absl::StrCat("invalid value \"", kv[1], "\" for ", kv[0],
                                             " (the SLO value should be non-negative)"));
      }
      config.goodput_slo_ms[kv[0]] = ms;
    }
  }
  return absl::OkStatus();
}

// --save-result (or --append-result: vllm saves on either) writes the
// result JSON where vllm would: os.path.join(dir, name), which keeps an
// absolute name as it is. Without either, vllm ignores the directory and
// name, and so does servesim.
absl::Status ReadSaveResult(const ParsedFlags& flags, BenchConfig& config) {
  ASSIGN_OR_RETURN(config.append_result, flags.GetBool("--append-result"));
  ASSIGN_OR_RETURN(config.save_result, flags.GetBool("--save-result"));
  config.save_result = config.save_result || config.append_result;
  ASSIGN_OR_RETURN(config.save_detailed, flags.GetBool("--save-detailed"));
  if (config.save_result) {
    ASSIGN_OR_RETURN(config.save_result_dir, flags.GetStringOr("--result-dir", ""));
  }
  if (config.save_result && flags.Has("--result-filename")) {
    ASSIGN_OR_RETURN(std::string name, flags.GetString("--result-filename"));
    config.save_result_path = ResultFilePath(config, name);
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<BenchConfig> ParseBenchCommand(std::string_view command) {
  auto split = SplitShellWords(command);
  if (!split.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(kContext, ": ", split.status().message()));
  }
  std::vector<std::string> words = *std::move(split);
  if (words.size() < 3 || words[0] != "vllm" || words[1] != "bench" || words[2] != "serve") {
    return absl::InvalidArgumentError(
        absl::StrCat(kContext, ": must start with \"vllm bench serve\", got \"",
                     ToAbsl(command.substr(0, 40)), "\""));
  }
  words.erase(words.begin(), words.begin() + 3);
  FlagParseOptions options;
  options.context = kContext;
  // vLLM's FlexibleArgumentParser accepts --num_prompts for --num-prompts.
  options.underscores_match_dashes = true;
  ASSIGN_OR_RETURN(ParsedFlags flags, ParseFlags(words, BenchFlagSpecs(), options));

  BenchConfig config;
  for (const IgnoredBenchFlag& flag : IgnoredBenchFlags()) {
    if (flag.integer && flags.Has(flag.name)) RETURN_IF_ERROR(flags.GetInt(flag.name).status());
  }
  RETURN_IF_ERROR(ReadDataset(flags, config));
  RETURN_IF_ERROR(ReadArrivals(flags, config));
  RETURN_IF_ERROR(ReadSampling(flags, config));
  RETURN_IF_ERROR(ReadClient(flags, config));
  RETURN_IF_ERROR(ReadReportOptions(flags, config));
  RETURN_IF_ERROR(ReadSaveResult(flags, config));
  RETURN_IF_ERROR(ReadInt(flags, "--num-warmups", 0, &config.num_warmups, kMaxPrompts));
  RETURN_IF_ERROR(RefuseUnmodelledGeneration(flags));

  ASSIGN_OR_RETURN(config.trace_time_scale, flags.GetDoubleOr("--trace-time-scale", 1.0));
  if (!(config.trace_time_scale > 0.0) || std::isinf(config.trace_time_scale)) {
    return Bad("--trace-time-scale", absl::StrCat("must be finite and > 0, got ",
                                                  FormatDecimal(config.trace_time_scale)));
  }
  if (flags.Has("--trace-time-scale")) {
    config.trace_time_scale_given = true;
    if (config.dataset_name != DatasetName::kTrace) {
      return Bad("--trace-time-scale", "needs --dataset-name trace");
    }
    if (config.request_rate_given) {
      return Bad("--trace-time-scale", "cannot be combined with --request-rate");
    }
  }
  if (config.dataset_name == DatasetName::kTrace && config.dataset_path.empty()) {
    return Bad("--dataset-path", "required with --dataset-name trace");
  }
  return config;
}

}  // namespace servesim::workload
