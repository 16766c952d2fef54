// The requests of one benchmark run: how many tokens each prompt has and asks
// for, sampled the way `vllm bench serve` samples its datasets.
#ifndef SERVESIM_SIM_WORKLOAD_DATASET_H_
#define SERVESIM_SIM_WORKLOAD_DATASET_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "sim/workload/bench_config.h"

namespace servesim::workload {

struct BenchRequest {
  // Position in send order, 0-based (vLLM's request_id suffix).
  int64_t id = 0;
  // The client-side prompt length vLLM counts in "Total input tokens": for
  // sharegpt the tokenized first human turn (BOS included, as the live totals
  // are); for random prefix + sampled input length, i.e. random_input_len - 1
  // at range ratio 0, since vLLM subtracts the BOS it will not send. The chat
  // template the server adds is not included.
  int64_t prompt_tokens = 0;
  // Tokens the request generates (>= 1); the simulator runs every request to
  // this length. For random and --sharegpt-output-len it is the
  // max_completion_tokens the client asks for; for the ShareGPT table it is the
  // table's output_tokens (at most the completion length vLLM asks for; the
  // shipped table's replies run to it, traces/README.md).
  int64_t output_tokens = 0;
  // The max_completion_tokens the client sends (>= output_tokens): what the
  // engine plans KV and admission with. 0 = output_tokens.
  int64_t max_completion_tokens = 0;
  // Arrival relative to the first request; only trace datasets set it, others 0.
  int64_t arrival_offset_ns = 0;
  // The prompt's shareable prefix as a chain of nodes (client tokens): node i
  // spans prefix_node_tokens[i] tokens, and a key names the same tokens,
  // after the same chain, in every request that has it. --random-prefix-len:
  // one node, key 0, the prefix vLLM draws once for all prompts; a Mooncake
  // trace: one node per hash_ids entry, 512 tokens each (the last as many as
  // the prompt has left). Empty: nothing shared.
  std::vector<int64_t> prefix_node_keys;
  std::vector<int64_t> prefix_node_tokens;
  // A trace of lengths only has no clock of its own: its requests arrive as
  // the random dataset's do, by --request-rate and --burstiness.
  bool trace_without_arrivals = false;
};

// File name of the ShareGPT stand-in inside the repository's traces/ folder.
inline constexpr char kSharegptTableFile[] = "sharegpt_v3_first_turn_lengths.csv";

// Samples config.num_prompts requests (a trace without --num-prompts: all rows).
// `traces_dir` is the repository's traces/ folder (for the ShareGPT table).
// `notice` (may be null) receives one line for the report header saying what
// stood in for what, e.g. which table replaced ShareGPT.
//  - random: vLLM's RandomDataset lengths, drawn from std::mt19937_64(seed)
//    through random_variates.h; numpy's PCG64 stream is not reproduced, so the
//    per-request lengths differ from vLLM's (the ranges and, at r = 0, the
//    lengths themselves are the same).
//  - sharegpt: seeded Fisher-Yates shuffle of the table, first num_prompts rows
//    passing vLLM's filters on (prompt, completion) (both >= 4; prompt <= 1024;
//    sum <= 2048), each generating the row's output_tokens; oversampled with
//    replacement if too few (unless --no-oversample).
//  - trace: the first num_prompts rows of --dataset-path (trace_file.h); more
//    prompts than rows is an error.
absl::StatusOr<std::vector<BenchRequest>> SampleRequests(const BenchConfig& config,
                                                         const std::string& traces_dir,
                                                         std::string* notice);

// The prompt tokens the engine prefills for a request the client counts as
// `client_prompt_tokens`. A chat-completions client (`--backend openai-chat`)
// sends the text as one user message, which the server wraps in the model's
// chat template (`chat_template_tokens` special tokens beyond the BOS); the
// server's tokenizer adds the BOS, which the random dataset's count leaves
// out (vLLM re-encodes its prompts without special tokens) and ShareGPT's
// includes (engine-defaults.md B1, B2). Trace rows are the engine's own
// counts already and are prefilled as they are.
int64_t EnginePromptTokens(const BenchConfig& config, int64_t client_prompt_tokens,
                           int chat_template_tokens);

// The engine-side length of a prompt's first `client_prefix_tokens` tokens:
// EnginePromptTokens with only the chat template's token before the message
// (DeepSeek's <｜User｜>, after the BOS; through the completions endpoint the
// BOS alone; a trace counts the engine's tokens already). 0 stays 0.
int64_t EngineSharedPrefixTokens(const BenchConfig& config, int64_t client_prefix_tokens);

// One row of the ShareGPT stand-in table.
struct SharegptLengths {
  int64_t prompt_tokens = 0;
  // The dataset reply's length: what vLLM's filters see and what it asks for
  // as max_completion_tokens.
  int64_t completion_tokens = 0;
  // What the served model generates: <= completion_tokens (EOS may come first).
  int64_t output_tokens = 0;
};

// Reads traces/sharegpt_v3_first_turn_lengths.csv (header
// prompt_tokens,completion_tokens,output_tokens; all >= 1 and
// output <= completion). Errors name the file and line.
absl::StatusOr<std::vector<SharegptLengths>> ReadSharegptTable(const std::string& path);

// vLLM's is_valid_sequence with its defaults (engine-defaults.md B1.6).
bool PassesSharegptFilter(int64_t prompt_tokens, int64_t output_tokens,
                          bool skip_min_output_check);

}  // namespace servesim::workload

#endif  // SERVESIM_SIM_WORKLOAD_DATASET_H_
