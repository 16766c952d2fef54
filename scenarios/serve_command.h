// From an engine's launch command, as a user pastes it, to the effective
// EngineConfig: the engine is recognised from the program, each flag is read
// with the engine's own defaults, and configurations the engine refuses are
// refused with its reason.
//
// Status codes carry the outcome class the CLI maps to exit codes:
//   InvalidArgument    bad usage or input (exit 2): unknown flag, bad value;
//   Unimplemented      a real engine feature servesim does not model (exit 2);
//   FailedPrecondition the engine itself would refuse to start (exit 1).
#ifndef SERVESIM_SCENARIOS_SERVE_COMMAND_H_
#define SERVESIM_SCENARIOS_SERVE_COMMAND_H_

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "scenarios/engine_config.pb.h"
#include "sim/workload/command_line.h"

namespace servesim::scenarios {

using EnvVars = std::vector<std::pair<std::string, std::string>>;

// What the serve command cannot know but its defaults depend on.
struct ServeContext {
  // Mean accepted draft tokens per step for MTP, by workload: natural chat text
  // accepts far more than random tokens (see docs/engines.md). Negative: use
  // the documented default for `chat_workload`.
  double mtp_mean_accepted_drafts = -1;
  bool chat_workload = true;  // sharegpt / traces of real text; false for random
  // Sampling parameters every request carries (vllm bench serve --top-p,
  // --temperature); unset: the request sends none.
  std::optional<double> request_top_p;
  std::optional<double> request_temperature;
  // The model's max_position_embeddings (its model spec): each engine's
  // default context length, and the longest one it accepts. Required (> 0).
  int64_t max_position_embeddings = 0;
  // The model has DSA's lightning indexer (DeepSeek-V3.2): the engines serve
  // it only on their sparse MLA backends, whose limits they enforce; a model
  // without it (DeepSeek-V3) is not bound by them.
  bool dsa_attention = true;
};

absl::StatusOr<EngineConfig> ParseServeCommand(std::string_view command, const EnvVars& env,
                                               const ServeContext& context);

// Environment variables of a launch script that change where files go, what
// is logged or reported, or how the weights are fetched, and nothing a step
// or the API server does (HF_HOME, NCCL_DEBUG, VLLM_LOGGING_LEVEL, ...):
// accepted by every engine and listed in the header. Any other variable an
// engine does not model is refused, as one might change performance.
bool EnvWithoutEffect(std::string_view key);

// "K=V" -> {K, V}; InvalidArgument naming the text otherwise.
absl::StatusOr<std::pair<std::string, std::string>> ParseEnvAssignment(std::string_view text);

// Per-engine parsers, given the words after the program name (ParseServeCommand
// checks `context` for them).
absl::StatusOr<EngineConfig> ParseVllmServe(const std::vector<std::string>& args,
                                            const EnvVars& env, const ServeContext& context);
absl::StatusOr<EngineConfig> ParseSglangServe(const std::vector<std::string>& args,
                                              const EnvVars& env, const ServeContext& context);
absl::StatusOr<EngineConfig> ParseTrtllmServe(const std::vector<std::string>& args,
                                              const EnvVars& env, const ServeContext& context);

// The engine whose serve command `words` holds from `from` on: "vllm"
// (`vllm serve`), "sglang" (`python3 -m sglang.launch_server`) or "trtllm"
// (`trtllm-serve [serve]`); empty for any other program. `program_words`, if
// set, gets how many words name the program (the engine's flags follow).
std::string ServeCommandEngine(const std::vector<std::string>& words, size_t from = 0,
                               size_t* program_words = nullptr);

// Every flag each engine's serve command takes, with its aliases.
std::vector<workload::FlagSpec> VllmServeFlagSpecs();
std::vector<workload::FlagSpec> SglangServeFlagSpecs();
std::vector<workload::FlagSpec> TrtllmServeFlagSpecs();

// The name `command`'s engine knows `flag` by: its long name for an alias
// ("-tp" -> "--tensor-parallel-size") or an underscore spelling where the
// engine takes one ("--max_num_seqs"); `flag` as given for an unknown
// engine or flag.
std::string CanonicalServeFlag(std::string_view command, const std::string& flag);

// The NSA backends SGLang's --nsa-prefill-backend and --nsa-decode-backend
// accept (on Hopper).
std::vector<std::string> SglangNsaBackends();

// The largest integer a serve flag takes (2^31 - 1, the engines' int32 proto
// fields): token budgets, lengths and GPU counts past it are typos, and their
// products (budget x length, batch x vocabulary) would leave int64.
inline constexpr int64_t kMaxServeInt = 2147483647;

// The most draft tokens per step servesim models. Published MTP and EAGLE
// settings use 1-7; far more is a typo, and each draft is a pass of the
// model the simulator builds every step.
inline constexpr int64_t kMaxDraftTokensPerStep = 32;
// The most GPUs one engine instance may span (512 nodes of 8): beyond it a
// layout is a typo, and GPU and node counts would leave int.
inline constexpr int64_t kMaxInstanceGpus = 4096;

// InvalidArgument led by `where` (e.g. "--serve: --speculative-num-steps")
// when `k` drafts per step is more than that.
absl::Status CheckDraftTokensPerStep(int64_t k, std::string_view where);

// A real flag of an engine that servesim does not model. It is read, so that
// a command carrying it is refused as a feature servesim lacks
// (Unimplemented, naming the flag) rather than as an unknown flag, which reads
// as a typo. Given one of `inert_values` (what the engine does anyway, e.g.
// --dtype auto on a BF16 checkpoint) it changes nothing modelled and is
// listed among the flags without effect.
// Records `what` among the defaults the run applied (EngineConfig's
// defaults_applied, echoed in the header) where the command leaves `flag` out.
void NoteDefault(const workload::ParsedFlags& flags, EngineConfig& config, const std::string& flag,
                 const std::string& what);

// A flag that does not change what the GPUs compute or when (an address, a
// parser, a log level): accepted and listed in the run's header.
// Its value is still typed as the engine's parser types it: the engine
// refuses `--seed abc` at start-up, so servesim does too.
struct IgnoredFlag {
  enum class Value { kText, kInteger, kNumber };
  std::string name;
  bool takes_value = true;
  bool multiple_values = false;  // a list (argparse nargs="+")
  Value value = Value::kText;
  std::vector<std::string> choices;  // argparse choices; empty: any
};

// An error naming the first given ignored flag whose value the engine's
// parser would refuse (not an integer, not a number, not one of its choices;
// a --port outside 0..65535).
absl::Status CheckIgnoredFlagValues(const workload::ParsedFlags& flags,
                                    const std::vector<IgnoredFlag>& ignored);

// The FlagSpecs ParseFlags needs to read `flags`.
void AppendIgnoredFlagSpecs(const std::vector<IgnoredFlag>& flags,
                            std::vector<workload::FlagSpec>* specs);

struct UnmodelledFlag {
  std::string name;
  bool takes_value = true;
  std::vector<std::string> inert_values;
  std::vector<std::string> aliases;  // other spellings ("-q")
  bool multiple_values = false;      // a list (argparse nargs="+")
};

// The FlagSpecs ParseFlags needs to read `flags`.
void AppendUnmodelledFlagSpecs(const std::vector<UnmodelledFlag>& flags,
                               std::vector<workload::FlagSpec>* specs);

// Unimplemented for the first of `flags` the command gives with a value that
// is not inert ("--serve: --enable-eplb is not modelled (servesim does not
// model this vLLM flag; ...)", "--serve: --dtype float16 is not modelled
// (auto, bfloat16)"); OK when every one given is inert. `engine` names the
// engine in the message ("vLLM").
absl::Status CheckUnmodelledFlags(const workload::ParsedFlags& parsed,
                                  const std::vector<UnmodelledFlag>& flags,
                                  std::string_view engine);

// Lists in `config`'s ignored_flags, in command order, every flag the command
// gave that is one of `ignored` or of `unmodelled` (once CheckUnmodelledFlags
// passed, one given with an inert value: a flag without effect).
void ListFlagsWithoutEffect(const workload::ParsedFlags& parsed,
                            const std::vector<IgnoredFlag>& ignored,
                            const std::vector<UnmodelledFlag>& unmodelled, EngineConfig& config);

// What every serve command is parsed with: integers up to kMaxServeInt,
// errors named "--serve". vLLM's and TensorRT-LLM's Python parsers also take
// the model as a positional argument and --max_num_seqs for --max-num-seqs
// (`python_style`); SGLang's argparse takes neither.
workload::FlagParseOptions ServeFlagParseOptions(bool python_style);

// Mean accepted drafts per step: --mtp-acceptance where given (no more than
// the step's num_draft_tokens: error), else the published acceptance of
// DeepSeek's MTP on chat text, a far lower one on random tokens.
absl::StatusOr<double> MeanAcceptedDrafts(int num_draft_tokens, const ServeContext& context);

}  // namespace servesim::scenarios

#endif  // SERVESIM_SCENARIOS_SERVE_COMMAND_H_
