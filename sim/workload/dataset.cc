#include "sim/workload/dataset.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <numeric>
#include <random>
#include <sstream>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "base/decimal.h"
#include "base/read_file.h"
#include "base/status_macros.h"
#include "sim/workload/random_variates.h"
#include "sim/workload/string_view_compat.h"
#include "sim/workload/trace_file.h"

namespace servesim::workload {
namespace {

// vLLM's is_valid_sequence defaults (vllm/benchmarks/dataset_utils.py).
constexpr int64_t kMinSequenceTokens = 4;
constexpr int64_t kMaxPromptTokens = 1024;
constexpr int64_t kMaxTotalTokens = 2048;

// DeepSeek's tokenizer adds one special token (BOS) per encode, which vLLM's
// RandomDataset subtracts from --random-input-len (engine-defaults.md B2 [U]).
constexpr int64_t kSpecialTokensPerPrompt = 1;

absl::StatusOr<std::vector<BenchRequest>> SampleRandom(const BenchConfig& config,
                                                       std::string* notice) {
  const double r = config.random_range_ratio;
  const int64_t real_input = config.random_input_len - kSpecialTokensPerPrompt;
  const int64_t in_low = static_cast<int64_t>(std::floor(real_input * (1.0 - r)));
  const int64_t in_high = static_cast<int64_t>(std::ceil(real_input * (1.0 + r)));
  const int64_t out_len = config.random_output_len;
  const int64_t out_low =
      std::max<int64_t>(1, static_cast<int64_t>(std::floor(out_len * (1.0 - r))));
  const int64_t out_high =
      std::max<int64_t>(1, static_cast<int64_t>(std::ceil(out_len * (1.0 + r))));
  if (config.random_prefix_len + in_low < 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--bench: --random-input-len: ", config.random_input_len, " with --random-range-ratio ",
        FormatDecimal(r), " allows prompts of 0 tokens (vLLM reserves 1 for the BOS)"));
  }
  std::mt19937_64 rng(static_cast<uint64_t>(config.seed));
  std::vector<BenchRequest> requests(config.num_prompts);
  // Same draw order as vLLM (all input lengths, then all output lengths).
  for (int64_t i = 0; i < config.num_prompts; ++i) {
    requests[i].id = i;
    requests[i].prompt_tokens = config.random_prefix_len + UniformInt(rng, in_low, in_high);
    if (config.random_prefix_len > 0) {
      requests[i].prefix_node_keys = {0};
      requests[i].prefix_node_tokens = {config.random_prefix_len};
    }
  }
  for (int64_t i = 0; i < config.num_prompts; ++i) {
    requests[i].output_tokens = UniformInt(rng, out_low, out_high);
  }
  if (notice != nullptr) {
    *notice = absl::StrFormat(
        "random dataset: prompt %d..%d tokens (prefix %d + input, --random-input-len %d minus "
        "1 BOS, as vLLM counts), output %d..%d tokens, seed %d; drawn with servesim's "
        "mt19937_64, not numpy's PCG64, so per-request lengths differ from vLLM's; every "
        "request generates its full output%s%s",
        config.random_prefix_len + in_low, config.random_prefix_len + in_high,
        config.random_prefix_len, config.random_input_len, out_low, out_high, config.seed,
        config.ignore_eos ? " (--ignore-eos)"
                          : " (EOS is not modelled: without --ignore-eos a live run may stop "
                            "some requests earlier)",
        config.random_prefix_len > 0
            ? "; every prompt starts with the same prefix, whose full KV blocks vLLM's "
              "prefix cache and SGLang's radix cache compute once and reuse (TensorRT-LLM's "
              "block reuse is not modelled: there every request prefills it)"
            : "");
  }
  return requests;
}

// Rows 0..n-1, shuffled as Python's random.shuffle (which vLLM uses) does:
// Fisher-Yates from the back, drawing from `rng`.
std::vector<size_t> RowOrder(size_t n, bool shuffle, std::mt19937_64& rng) {
  std::vector<size_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  if (shuffle && n > 1) {
    for (size_t i = n - 1; i > 0; --i) {
      std::swap(order[i], order[UniformIndex(rng, i + 1)]);
    }
  }
  return order;
}

absl::StatusOr<std::vector<BenchRequest>> SampleSharegpt(const BenchConfig& config,
                                                         const std::string& traces_dir,
                                                         std::string* notice) {
  const std::string table_path = absl::StrCat(traces_dir, "/", kSharegptTableFile);
  ASSIGN_OR_RETURN(std::vector<SharegptLengths> table, ReadSharegptTable(table_path));
  std::mt19937_64 rng(static_cast<uint64_t>(config.seed));
  // traces/make_sharegpt_lengths.py replays this shuffle to fit the table.
  const std::vector<size_t> order = RowOrder(table.size(), !config.disable_shuffle, rng);
  const bool fixed_output = config.sharegpt_output_len.has_value();
  std::vector<BenchRequest> requests;
  for (size_t k : order) {
    if (static_cast<int64_t>(requests.size()) == config.num_prompts) break;
    // vLLM filters on the completion length it will ask for; the request then
    // generates the table's output (the shipped table's is the completion; a
    // table of one's own may stop earlier) or, with a fixed length or
    // --ignore-eos (the client sends ignore_eos), exactly its completion.
    const int64_t completion =
        fixed_output ? *config.sharegpt_output_len : table[k].completion_tokens;
    if (!PassesSharegptFilter(table[k].prompt_tokens, completion, fixed_output)) continue;
    BenchRequest request;
    request.id = static_cast<int64_t>(requests.size());
    request.prompt_tokens = table[k].prompt_tokens;
    request.output_tokens =
        fixed_output || config.ignore_eos ? completion : table[k].output_tokens;
    request.max_completion_tokens = completion;
    requests.push_back(request);
  }
  if (requests.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("--bench: no ShareGPT row passes vLLM's length filters",
                     fixed_output ? " with this --sharegpt-output-len" : ""));
  }
  const size_t passing = requests.size();
  std::string oversampled;
  if (static_cast<int64_t>(passing) < config.num_prompts) {
    if (config.no_oversample) {
      oversampled = absl::StrCat("; only ", passing, " rows pass, --no-oversample: sending ",
                                 passing);
    } else {
      // vLLM: random.choices over the accepted requests.
      while (static_cast<int64_t>(requests.size()) < config.num_prompts) {
        BenchRequest copy = requests[UniformIndex(rng, passing)];
        copy.id = static_cast<int64_t>(requests.size());
        requests.push_back(copy);
      }
      oversampled = absl::StrCat("; only ", passing, " rows pass, oversampled to ",
                                 config.num_prompts);
    }
  }
  if (notice != nullptr) {
    std::string path_note = "no --dataset-path";
    if (!config.dataset_path.empty()) {
      std::error_code ec;
      path_note = std::filesystem::exists(config.dataset_path, ec)
                      ? absl::StrCat(config.dataset_path, " exists but is not read (no tokenizer)")
                      : absl::StrCat(config.dataset_path, " not read");
    }
    *notice = absl::StrCat(
        "sharegpt: lengths from traces/", kSharegptTableFile,
        " (ShareGPT first turns, Llama-2 counts; prompts rescaled and replies shortened by a "
        "geometric length law, fitted to the live runs' totals; every reply runs to its "
        "max_completion_tokens",
        config.ignore_eos ? ", as --ignore-eos asks" : "",
        "; traces/README.md) stand in for the ShareGPT JSON (", path_note, "); ",
        config.disable_shuffle ? "file order" : absl::StrCat("shuffle seed ", config.seed),
        oversampled);
  }
  return requests;
}

absl::StatusOr<std::vector<BenchRequest>> SampleTrace(const BenchConfig& config,
                                                      std::string* notice) {
  ASSIGN_OR_RETURN(TraceFile trace, ReadTraceFile(config.dataset_path));
  const int64_t rows = static_cast<int64_t>(trace.rows.size());
  int64_t count = rows;
  if (config.num_prompts_given) {
    if (config.num_prompts > rows) {
      return absl::InvalidArgumentError(absl::StrCat("--bench: --num-prompts: ", config.num_prompts,
                                                     " but ", config.dataset_path, " has ", rows,
                                                     " rows"));
    }
    count = config.num_prompts;
  }
  // A trace with arrival times is replayed in its own order. A table of
  // lengths only is sampled as vLLM samples ShareGPT: shuffled with the
  // bench seed (rows of one conversation sit together in such tables), in
  // file order with --disable-shuffle.
  const bool shuffled = !trace.has_arrivals && !config.disable_shuffle;
  std::mt19937_64 rng(static_cast<uint64_t>(config.seed));
  const std::vector<size_t> order = RowOrder(trace.rows.size(), shuffled, rng);
  std::vector<BenchRequest> requests(count);
  for (int64_t i = 0; i < count; ++i) {
    const TraceRow& row = trace.rows[order[i]];
    requests[i].id = i;
    requests[i].prompt_tokens = row.input_tokens;
    requests[i].output_tokens = row.output_tokens;
    requests[i].arrival_offset_ns = row.arrival_offset_ns;
    // Mooncake's hash_ids: block j spans 512 tokens, the last what is left.
    for (size_t j = 0; j < row.hash_ids.size(); ++j) {
      const int64_t start = static_cast<int64_t>(j) * kMooncakeHashBlockTokens;
      if (start >= row.input_tokens) break;
      requests[i].prefix_node_keys.push_back(row.hash_ids[j]);
      requests[i].prefix_node_tokens.push_back(
          std::min(kMooncakeHashBlockTokens, row.input_tokens - start));
    }
    requests[i].trace_without_arrivals = !trace.has_arrivals;
  }
  if (notice != nullptr) {
    const bool hashed = std::any_of(requests.begin(), requests.end(), [](const BenchRequest& r) {
      return !r.prefix_node_keys.empty();
    });
    const double span_s = requests.back().arrival_offset_ns * 1e-9;
    *notice =
        trace.has_arrivals
            ? absl::StrCat(
                  absl::StrFormat("trace: %s (%s), first %d of %d rows, span %.3f s in the file",
                                  config.dataset_path, trace.format, count, rows, span_s),
                  config.trace_time_scale_given
                      ? absl::StrFormat(", replayed x %g (--trace-time-scale): %.3f s",
                                        config.trace_time_scale, span_s * config.trace_time_scale)
                      : std::string())
            : absl::StrFormat(
                  "trace: %s (%s, no arrival times: --request-rate sets them), %d of "
                  "%d rows, %s",
                  config.dataset_path, trace.format, count, rows,
                  shuffled ? absl::StrCat("shuffle seed ", config.seed)
                           : std::string("file order"));
    if (hashed) {
      absl::StrAppend(notice, "; hash_ids name shared 512-token prefix blocks, which vLLM's "
                              "prefix cache and SGLang's radix cache reuse within a DP rank "
                              "(TensorRT-LLM's block reuse is not modelled)");
    }
  }
  return requests;
}

}  // namespace

bool PassesSharegptFilter(int64_t prompt_tokens, int64_t output_tokens,
                          bool skip_min_output_check) {
  if (prompt_tokens < kMinSequenceTokens) return false;
  if (!skip_min_output_check && output_tokens < kMinSequenceTokens) return false;
  return prompt_tokens <= kMaxPromptTokens && prompt_tokens + output_tokens <= kMaxTotalTokens;
}

absl::StatusOr<std::vector<SharegptLengths>> ReadSharegptTable(const std::string& path) {
  RETURN_IF_ERROR(CheckInputFile(path));
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrCat(path, ": cannot open the ShareGPT table"));
  std::vector<SharegptLengths> table;
  std::string line;
  int line_no = 0;
  while (std::getline(in, line)) {
    ++line_no;
    absl::string_view text = absl::StripAsciiWhitespace(line);
    if (line_no == 1) {
      if (text != "prompt_tokens,completion_tokens,output_tokens") {
        return absl::InvalidArgumentError(absl::StrCat(
            path, ":1: expected header prompt_tokens,completion_tokens,output_tokens, got \"", text,
            "\""));
      }
      continue;
    }
    if (text.empty()) continue;
    std::vector<absl::string_view> fields = absl::StrSplit(text, ',');
    SharegptLengths row;
    if (fields.size() != 3 || !absl::SimpleAtoi(fields[0], &row.prompt_tokens) ||
        !absl::SimpleAtoi(fields[1], &row.completion_tokens) ||
        !absl::SimpleAtoi(fields[2], &row.output_tokens) || row.prompt_tokens < 1 ||
        row.completion_tokens < 1 || row.output_tokens < 1) {
      return absl::InvalidArgumentError(
          absl::StrCat(path, ":", line_no, ": expected three integers >= 1, got \"", text, "\""));
    }
    if (row.output_tokens > row.completion_tokens) {
      // Generation stops at max_completion_tokens = the completion length.
      return absl::InvalidArgumentError(
          absl::StrCat(path, ":", line_no, ": output_tokens ", row.output_tokens,
                       " exceeds completion_tokens ", row.completion_tokens));
    }
    table.push_back(row);
  }
  if (table.empty()) return absl::InvalidArgumentError(absl::StrCat(path, ": no rows"));
  return table;
}

absl::StatusOr<std::vector<BenchRequest>> SampleRequests(const BenchConfig& config,
                                                         const std::string& traces_dir,
                                                         std::string* notice) {
  if (config.num_prompts < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("--bench: --num-prompts: must be >= 1, got ", config.num_prompts));
  }
  switch (config.dataset_name) {
    case DatasetName::kRandom:
      return SampleRandom(config, notice);
    case DatasetName::kSharegpt:
      return SampleSharegpt(config, traces_dir, notice);
    case DatasetName::kTrace:
      return SampleTrace(config, notice);
  }
  return absl::InternalError("unknown dataset");
}

int64_t EnginePromptTokens(const BenchConfig& config, int64_t client_prompt_tokens,
                           int chat_template_tokens) {
  if (config.dataset_name == DatasetName::kTrace) return client_prompt_tokens;
  const int64_t bos = config.dataset_name == DatasetName::kRandom ? kSpecialTokensPerPrompt : 0;
  const int64_t markup = SendsChatMessages(config) ? chat_template_tokens : 0;
  return client_prompt_tokens + bos + markup;
}

int64_t EngineSharedPrefixTokens(const BenchConfig& config, int64_t client_prefix_tokens) {
  // Of DeepSeek's chat markers only <｜User｜> precedes the message.
  constexpr int kChatTokensBeforeMessage = 1;
  if (client_prefix_tokens <= 0) return 0;
  return EnginePromptTokens(config, client_prefix_tokens, kChatTokensBeforeMessage);
}

}  // namespace servesim::workload
