// The benchmark client's configuration: what `vllm bench serve ...` asks for,
// reduced to the fields that shape the simulated workload and report.
#ifndef SERVESIM_SIM_WORKLOAD_BENCH_CONFIG_H_
#define SERVESIM_SIM_WORKLOAD_BENCH_CONFIG_H_

#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"

namespace servesim::workload {

// --dataset-name. kTrace is servesim's own: replay a public arrival trace
// (vllm bench serve has no such dataset; see dataset.h for the formats).
enum class DatasetName { kSharegpt, kRandom, kTrace };

std::string_view DatasetNameToString(DatasetName name);

// vllm bench serve's --ramp-up-strategy: the request rate changes with each
// request sent instead of staying at --request-rate (vllm/benchmarks/serve.py,
// _get_current_request_rate). Request i of n is sent at the rate
// start + (end - start) * i / (n - 1) (linear) or
// start * (end / start)^(i / (n - 1)) (exponential).
struct RampUp {
  enum class Shape { kLinear, kExponential };
  Shape shape = Shape::kLinear;
  int64_t start_rps = 0;  // --ramp-up-start-rps (an integer in vllm's parser)
  int64_t end_rps = 0;    // --ramp-up-end-rps
};

std::string_view RampUpShapeName(RampUp::Shape shape);

// Defaults are vllm bench serve's (shared/reference/engine-defaults.md B1-B3).
struct BenchConfig {
  // --dataset-name: sharegpt | random | trace. vLLM default: random
  // (add_dataset_parser in vllm/benchmarks/datasets.py [U: recalled for
  // v0.13; the older benchmark_serving.py defaulted to sharegpt]).
  DatasetName dataset_name = DatasetName::kRandom;
  // --dataset-path: the file vLLM would read. For sharegpt it is only echoed
  // (servesim uses traces/sharegpt_v3_first_turn_lengths.csv); for trace it is
  // the trace file and is required. Default: empty (none).
  std::string dataset_path;
  // --num-prompts: number of requests. Default 1000.
  int64_t num_prompts = 1000;
  // Whether --num-prompts was given: a trace without it replays every row.
  bool num_prompts_given = false;
  // --seed: seeds dataset sampling and arrivals. Default 0. Must be >= 0.
  int64_t seed = 0;
  // --random-input-len: tokens per random prompt, BOS included. Default 1024.
  int64_t random_input_len = 1024;
  // --random-output-len: max output tokens per random request. Default 128.
  int64_t random_output_len = 128;
  // --random-range-ratio r: lengths uniform in [L(1-r), L(1+r)]. Default 0, in [0, 1).
  double random_range_ratio = 0.0;
  // --random-prefix-len: tokens of a prefix shared by every random prompt. Default 0.
  int64_t random_prefix_len = 0;
  // --sharegpt-output-len: if set, every ShareGPT request asks for exactly this
  // many output tokens and the min-output filter is skipped. Default: unset.
  std::optional<int64_t> sharegpt_output_len;
  // --disable-shuffle: ShareGPT rows in file order instead of the seeded shuffle.
  bool disable_shuffle = false;
  // --no-oversample: if too few ShareGPT rows pass the filters, send fewer
  // requests instead of repeating some. Default false (oversample).
  bool no_oversample = false;
  // --request-rate in requests per second; +inf sends everything at t = 0. Default inf.
  double request_rate = std::numeric_limits<double>::infinity();
  // --burstiness: gamma shape of the inter-arrival gaps (1 = Poisson). Default 1, > 0.
  double burstiness = 1.0;
  bool burstiness_given = false;
  // --ramp-up-strategy with --ramp-up-start-rps and --ramp-up-end-rps. Unset:
  // the rate is --request-rate throughout.
  std::optional<RampUp> ramp_up;
  // --max-concurrency: at most this many requests in flight. Default: unset (no limit).
  std::optional<int64_t> max_concurrency;
  // --ignore-eos: sent to the server so every request generates its full
  // output length. Default false.
  bool ignore_eos = false;
  // Sampling parameters sent with every request (vllm bench serve's
  // --top-p, --top-k, --min-p, --temperature; openai backends only). Unset:
  // none is sent and the server's defaults apply.
  std::optional<double> top_p;        // in (0, 1]
  std::optional<int64_t> top_k;       // -1 (off) or >= 1
  std::optional<double> min_p;        // in [0, 1]
  std::optional<double> temperature;  // >= 0; 0 is greedy
  // --backend: client backend. "openai-chat" sends chat messages, which the
  // server wraps in its chat template (EnginePromptTokens). vLLM default "openai".
  std::string backend = "openai";
  // --endpoint: API path, echoed only. vLLM default "/v1/completions".
  std::string endpoint = "/v1/completions";
  // --model: echoed only. Default empty (vLLM asks the server).
  std::string model;
  // --served-model-name: the model name the requests carry, else --model.
  std::string served_model_name;
  // --tokenizer, --label, --metadata KEY=VALUE...: echoed into the saved
  // JSON only (servesim counts tokens from tables, not text).
  std::string tokenizer;
  std::optional<std::string> label;
  std::vector<std::pair<std::string, std::string>> metadata;
  // --percentile-metrics: which metrics get percentile lines. Default ttft,tpot,itl.
  std::vector<std::string> percentile_metrics = {"ttft", "tpot", "itl"};
  // --metric-percentiles: which percentiles, each in [0, 100]. Default 99.
  std::vector<double> metric_percentiles = {99.0};
  // --goodput ttft:MS tpot:MS e2el:MS: the SLOs a request must all meet to
  // count towards "Request goodput". Empty: no goodput line.
  std::map<std::string, double> goodput_slo_ms;
  // --save-result with --result-dir/--result-filename: where the result JSON
  // goes; --append-result adds it as a new line. Without --result-filename
  // the path is "" and `servesim run` names the file as vllm does, by the
  // wall-clock time (metrics::VllmResultFileName).
  bool save_result = false;
  std::string save_result_path;
  std::string save_result_dir;  // --result-dir, made if missing (vllm's os.makedirs)
  bool append_result = false;
  // --save-detailed: the saved JSON keeps the per-request arrays (input_lens,
  // output_lens, ttfts, itls, errors), which vllm deletes otherwise.
  bool save_detailed = false;
  // --trace-time-scale (servesim): trace arrival offsets are multiplied by this
  // (2 = half the rate). Default 1, > 0; not combinable with --request-rate.
  double trace_time_scale = 1.0;
  bool trace_time_scale_given = false;
  // Whether --request-rate was given (a trace keeps its own clock otherwise).
  bool request_rate_given = false;
  // --num-warmups: requests vllm sends and waits for before the timed run;
  // they leave the measured figures alone (engine-defaults.md B3).
  int64_t num_warmups = 0;
};

// Flags accepted because they do not change the simulated workload; each is
// documented with why. Exposed so the report can list them.
struct IgnoredBenchFlag {
  std::string_view name;
  bool takes_value;
  std::string_view why;
  // argparse still types its value as an integer: vllm bench serve refuses
  // `--port abc` before it sends anything.
  bool integer = false;
};
const std::vector<IgnoredBenchFlag>& IgnoredBenchFlags();

// Whether the client sends chat messages (`--backend openai-chat`), which the
// server renders through the model's chat template; the other backends send
// a bare prompt.
bool SendsChatMessages(const BenchConfig& config);

// Where a result file named `file_name` is saved: os.path.join(--result-dir,
// file_name) as vllm joins them (an absolute name ignores the directory).
std::string ResultFilePath(const BenchConfig& config, const std::string& file_name);

// Parses `vllm bench serve [flags]` (the whole line, as recorded in
// shared/validation). Bad input gives one line naming the flag, e.g.
// "--bench: --random-range-ratio: must be in [0, 1), got 1.5".
absl::StatusOr<BenchConfig> ParseBenchCommand(std::string_view command);

}  // namespace servesim::workload

#endif  // SERVESIM_SIM_WORKLOAD_BENCH_CONFIG_H_
