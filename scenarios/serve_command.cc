#include "scenarios/serve_command.h"

#include <algorithm>
#include <cmath>
#include <iterator>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "base/status_macros.h"
#include "sim/workload/command_line.h"

namespace servesim::scenarios {

absl::StatusOr<std::pair<std::string, std::string>> ParseEnvAssignment(std::string_view text) {
  const size_t eq = text.find('=');
  if (eq == std::string_view::npos || eq == 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("--env: expected KEY=VALUE, got \"", std::string(text), "\""));
  }
  return std::make_pair(std::string(text.substr(0, eq)), std::string(text.substr(eq + 1)));
}

absl::Status CheckDraftTokensPerStep(int64_t k, std::string_view where) {
  if (k <= kMaxDraftTokensPerStep) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(
      std::string(where), ": ", k, " draft tokens per step; servesim models at most ",
      kMaxDraftTokensPerStep));
}

void NoteDefault(const workload::ParsedFlags& flags, EngineConfig& config, const std::string& flag,
                 const std::string& what) {
  if (!flags.Has(flag)) config.add_defaults_applied(what);
}

void AppendIgnoredFlagSpecs(const std::vector<IgnoredFlag>& flags,
                            std::vector<workload::FlagSpec>* specs) {
  for (const IgnoredFlag& f : flags) {
    specs->push_back({f.name, {}, f.takes_value, f.multiple_values});
  }
}

absl::Status CheckIgnoredFlagValues(const workload::ParsedFlags& flags,
                                    const std::vector<IgnoredFlag>& ignored) {
  // Every engine's parser wants a port number in range, beyond its type.
  ASSIGN_OR_RETURN(int64_t port, flags.GetIntOr("--port", 8000));
  if (port < 0 || port > 65535) {
    return absl::InvalidArgumentError(
        absl::StrCat("--serve: --port: expected 0..65535, got ", port));
  }
  for (const IgnoredFlag& f : ignored) {
    if (!f.takes_value || f.multiple_values || !flags.Has(f.name)) continue;
    switch (f.value) {
      case IgnoredFlag::Value::kInteger:
        RETURN_IF_ERROR(flags.GetInt(f.name).status());
        break;
      case IgnoredFlag::Value::kNumber:
        RETURN_IF_ERROR(flags.GetDouble(f.name).status());
        break;
      case IgnoredFlag::Value::kText:
        break;
    }
    if (f.choices.empty()) continue;
    ASSIGN_OR_RETURN(std::string value, flags.GetString(f.name));
    if (std::find(f.choices.begin(), f.choices.end(), value) == f.choices.end()) {
      return absl::InvalidArgumentError(absl::StrCat("--serve: ", f.name, ": invalid choice \"",
                                                     value, "\" (choose from ",
                                                     absl::StrJoin(f.choices, ", "), ")"));
    }
  }
  return absl::OkStatus();
}

void AppendUnmodelledFlagSpecs(const std::vector<UnmodelledFlag>& flags,
                               std::vector<workload::FlagSpec>* specs) {
  for (const UnmodelledFlag& f : flags) {
    specs->push_back({f.name, f.aliases, f.takes_value, f.multiple_values});
  }
}

namespace {

const UnmodelledFlag* FindUnmodelledFlag(const std::vector<UnmodelledFlag>& flags,
                                         const std::string& flag) {
  auto it = std::find_if(flags.begin(), flags.end(),
                         [&](const UnmodelledFlag& f) { return f.name == flag; });
  return it == flags.end() ? nullptr : &*it;
}

}  // namespace

absl::Status CheckUnmodelledFlags(const workload::ParsedFlags& parsed,
                                  const std::vector<UnmodelledFlag>& flags,
                                  std::string_view engine) {
  for (const std::string& given : parsed.given()) {
    const UnmodelledFlag* f = FindUnmodelledFlag(flags, given);
    if (f == nullptr) continue;
    std::string value;
    // A list has no inert value here: its name is the answer.
    if (f->takes_value && !f->multiple_values) {
      ASSIGN_OR_RETURN(value, parsed.GetString(f->name));
    }
    const std::vector<std::string>& inert = f->inert_values;
    if (std::find(inert.begin(), inert.end(), value) != inert.end()) continue;
    if (!inert.empty()) {
      return absl::UnimplementedError(absl::StrCat(
          "--serve: ", f->name, " ", value, " is not modelled (", absl::StrJoin(inert, ", "), ")"));
    }
    return absl::UnimplementedError(
        absl::StrCat("--serve: ", f->name, " is not modelled (servesim does not model this ",
                     std::string(engine), " flag; docs/engines.md lists the flags it reads)"));
  }
  return absl::OkStatus();
}

void ListFlagsWithoutEffect(const workload::ParsedFlags& parsed,
                            const std::vector<IgnoredFlag>& ignored,
                            const std::vector<UnmodelledFlag>& unmodelled, EngineConfig& config) {
  for (const std::string& f : parsed.given()) {
    const bool without_effect = std::any_of(ignored.begin(), ignored.end(),
                                            [&](const IgnoredFlag& i) { return i.name == f; }) ||
                                FindUnmodelledFlag(unmodelled, f) != nullptr;
    if (without_effect) config.add_ignored_flags(f);
  }
}

workload::FlagParseOptions ServeFlagParseOptions(bool python_style) {
  workload::FlagParseOptions options;
  options.max_int = kMaxServeInt;
  options.context = "--serve";
  options.underscores_match_dashes = python_style;
  options.allow_positionals = python_style;
  return options;
}

absl::StatusOr<double> MeanAcceptedDrafts(int num_draft_tokens, const ServeContext& context) {
  if (context.mtp_mean_accepted_drafts >= 0) {
    if (context.mtp_mean_accepted_drafts > num_draft_tokens) {
      return absl::InvalidArgumentError(absl::StrCat(
          "--mtp-acceptance: ", context.mtp_mean_accepted_drafts,
          " accepted drafts per step, but the engine proposes ", num_draft_tokens, " per step"));
    }
    return context.mtp_mean_accepted_drafts;
  }
  // Per-draft acceptance p, chained: draft i is accepted only if drafts
  // 1..i-1 were. Chat text: DeepSeek-V3 reports 85-90 % acceptance of the
  // second token (arXiv 2412.19437 §5.4.3); 0.85 is the low end. Random
  // tokens: no published figure (vllm#33497 only says "much lower"); 0.6 is
  // the assumption LMSYS used for simulated MTP (large-scale-EP blog).
  const double p = context.chat_workload ? 0.85 : 0.6;
  double mean = 0, chain = 1;
  for (int i = 0; i < num_draft_tokens; ++i) mean += (chain *= p);
  return mean;
}

std::string ServeCommandEngine(const std::vector<std::string>& words, size_t from,
                               size_t* program_words) {
  auto is = [&](std::initializer_list<const char*> head) {
    if (words.size() < from || words.size() - from < head.size()) return false;
    size_t i = from;
    for (const char* h : head) {
      if (words[i++] != h) return false;
    }
    return true;
  };
  size_t n = 0;
  std::string engine;
  if (is({"vllm", "serve"})) {
    engine = "vllm", n = 2;
  } else if (is({"python3", "-m", "sglang.launch_server"}) ||
             is({"python", "-m", "sglang.launch_server"})) {
    engine = "sglang", n = 3;
  } else if (is({"trtllm-serve", "serve"})) {
    // `trtllm-serve serve MODEL` and `trtllm-serve MODEL` are the same command.
    engine = "trtllm", n = 2;
  } else if (is({"trtllm-serve"})) {
    engine = "trtllm", n = 1;
  }
  if (program_words != nullptr) *program_words = n;
  return engine;
}

std::string CanonicalServeFlag(std::string_view command, const std::string& flag) {
  absl::StatusOr<std::vector<std::string>> w = workload::SplitShellWords(command);
  if (!w.ok()) return flag;
  const std::string engine = ServeCommandEngine(*w);
  std::vector<workload::FlagSpec> specs;
  bool underscores = false;
  if (engine == "vllm") {
    specs = VllmServeFlagSpecs();
    underscores = true;
  } else if (engine == "sglang") {
    specs = SglangServeFlagSpecs();
  } else if (engine == "trtllm") {
    specs = TrtllmServeFlagSpecs();
    underscores = true;
  }
  // Spec names keep the engine's own spelling (TensorRT-LLM's --tp_size), so
  // both sides are compared with dashes where the engine takes either.
  auto normal = [&](const std::string& f) {
    return underscores && f.rfind("--", 0) == 0
               ? "--" + absl::StrReplaceAll(f.substr(2), {{"_", "-"}})
               : f;
  };
  const std::string spelling = normal(flag);
  for (const workload::FlagSpec& s : specs) {
    if (normal(s.name) == spelling) return s.name;
    for (const std::string& alias : s.aliases) {
      if (normal(alias) == spelling) return s.name;
    }
  }
  return flag;
}

bool EnvWithoutEffect(std::string_view key) {
  // Each read at start-up for paths, credentials, downloads, logging or
  // usage reporting only (the libraries' and engines' documented meanings).
  static constexpr std::string_view kInert[] = {"HF_HOME",
                                                "HF_HUB_CACHE",
                                                "HF_HUB_OFFLINE",
                                                "HF_HUB_ENABLE_HF_TRANSFER",
                                                "HF_HUB_DISABLE_TELEMETRY",
                                                "HF_HUB_DOWNLOAD_TIMEOUT",
                                                "HF_HUB_ETAG_TIMEOUT",
                                                "HF_DATASETS_CACHE",
                                                "HF_ENDPOINT",
                                                "HF_TOKEN",
                                                "HUGGING_FACE_HUB_TOKEN",
                                                "TRANSFORMERS_CACHE",
                                                "TRANSFORMERS_OFFLINE",
                                                "TRANSFORMERS_VERBOSITY",
                                                "XDG_CACHE_HOME",
                                                "VLLM_CACHE_ROOT",
                                                "VLLM_CONFIG_ROOT",
                                                "TRITON_CACHE_DIR",
                                                "TORCHINDUCTOR_CACHE_DIR",
                                                "NCCL_DEBUG",
                                                "NCCL_DEBUG_SUBSYS",
                                                "NCCL_DEBUG_FILE",
                                                "VLLM_LOGGING_LEVEL",
                                                "VLLM_CONFIGURE_LOGGING",
                                                "TLLM_LOG_LEVEL",
                                                "PYTHONUNBUFFERED",
                                                "PYTHONWARNINGS",
                                                "PYTHONDONTWRITEBYTECODE",
                                                "VLLM_NO_USAGE_STATS",
                                                "VLLM_DO_NOT_TRACK",
                                                "DO_NOT_TRACK"};
  return std::find(std::begin(kInert), std::end(kInert), key) != std::end(kInert);
}

absl::StatusOr<EngineConfig> ParseServeCommand(std::string_view command, const EnvVars& env,
                                               const ServeContext& context) {
  if (context.max_position_embeddings <= 0) {
    return absl::InternalError("serve context without the model's max_position_embeddings");
  }
  absl::StatusOr<std::vector<std::string>> words = workload::SplitShellWords(command);
  if (!words.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("--serve: ", words.status().message()));
  }
  const std::vector<std::string>& w = *words;
  size_t program_words = 0;
  const std::string engine = ServeCommandEngine(w, 0, &program_words);
  const std::vector<std::string> flags(w.begin() + program_words, w.end());
  EnvVars modelled;
  std::vector<std::string> inert;
  for (const auto& [key, value] : env) {
    if (EnvWithoutEffect(key)) {
      inert.push_back(key);
    } else {
      modelled.emplace_back(key, value);
    }
  }
  absl::StatusOr<EngineConfig> config;
  if (engine == "vllm") {
    config = ParseVllmServe(flags, modelled, context);
  } else if (engine == "sglang") {
    config = ParseSglangServe(flags, modelled, context);
  } else if (engine == "trtllm") {
    config = ParseTrtllmServe(flags, modelled, context);
  } else {
    return absl::InvalidArgumentError(absl::StrCat(
        "--serve: unrecognised engine command \"", w.empty() ? "" : w[0],
        "\"; expected `vllm serve`, `python3 -m sglang.launch_server` or `trtllm-serve`"));
  }
  if (config.ok()) {
    for (const std::string& key : inert) config->add_ignored_env(key);
  }
  return config;
}

}  // namespace servesim::scenarios
