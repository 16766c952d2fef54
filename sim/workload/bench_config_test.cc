#include "sim/workload/bench_config.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <string>

#include "gtest/gtest.h"

namespace servesim::workload {
namespace {

constexpr char kLive[] =
    "vllm bench serve --model deepseek-ai/DeepSeek-V3.2 --backend openai-chat --endpoint "
    "/v1/chat/completions --dataset-name sharegpt --dataset-path "
    "ShareGPT_V3_unfiltered_cleaned_split.json --num-prompts 1000";

TEST(ParseBenchCommandTest, ReadsTheLiveSharegptCommand) {
  auto config = ParseBenchCommand(kLive);
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->dataset_name, DatasetName::kSharegpt);
  EXPECT_EQ(config->dataset_path, "ShareGPT_V3_unfiltered_cleaned_split.json");
  EXPECT_EQ(config->num_prompts, 1000);
  EXPECT_TRUE(config->num_prompts_given);
  EXPECT_EQ(config->backend, "openai-chat");
  EXPECT_EQ(config->endpoint, "/v1/chat/completions");
  EXPECT_EQ(config->model, "deepseek-ai/DeepSeek-V3.2");
  EXPECT_TRUE(std::isinf(config->request_rate));
  EXPECT_FALSE(config->max_concurrency.has_value());
}

TEST(ParseBenchCommandTest, DefaultsAreVllmDefaults) {
  auto config = ParseBenchCommand("vllm bench serve");
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->dataset_name, DatasetName::kRandom);
  EXPECT_EQ(config->num_prompts, 1000);
  EXPECT_FALSE(config->num_prompts_given);
  EXPECT_EQ(config->seed, 0);
  EXPECT_EQ(config->random_input_len, 1024);
  EXPECT_EQ(config->random_output_len, 128);
  EXPECT_EQ(config->random_range_ratio, 0.0);
  EXPECT_EQ(config->random_prefix_len, 0);
  EXPECT_TRUE(std::isinf(config->request_rate));
  EXPECT_EQ(config->burstiness, 1.0);
  EXPECT_FALSE(config->ignore_eos);
  EXPECT_FALSE(config->sharegpt_output_len.has_value());
  EXPECT_EQ(config->percentile_metrics, (std::vector<std::string>{"ttft", "tpot", "itl"}));
  EXPECT_EQ(config->metric_percentiles, std::vector<double>{99.0});
}

TEST(ParseBenchCommandTest, ReadsTheLiveRandomWorkloadFlags) {
  auto config = ParseBenchCommand(
      "vllm bench serve --dataset-name random --random-input-len 32000 --random-output-len 100 "
      "--num-prompts 100 --seed 42 --request-rate 2.5 --burstiness 0.5 --max-concurrency 64 "
      "--ignore-eos --random-range-ratio 0.25 --random-prefix-len 16 "
      "--percentile-metrics ttft,e2el --metric-percentiles 50,90,99.9");
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->dataset_name, DatasetName::kRandom);
  EXPECT_EQ(config->random_input_len, 32000);
  EXPECT_EQ(config->random_output_len, 100);
  EXPECT_EQ(config->num_prompts, 100);
  EXPECT_EQ(config->seed, 42);
  EXPECT_DOUBLE_EQ(config->request_rate, 2.5);
  EXPECT_DOUBLE_EQ(config->burstiness, 0.5);
  EXPECT_EQ(config->max_concurrency, 64);
  EXPECT_TRUE(config->ignore_eos);
  EXPECT_DOUBLE_EQ(config->random_range_ratio, 0.25);
  EXPECT_EQ(config->random_prefix_len, 16);
  EXPECT_EQ(config->percentile_metrics, (std::vector<std::string>{"ttft", "e2el"}));
  EXPECT_EQ(config->metric_percentiles, (std::vector<double>{50, 90, 99.9}));
}

TEST(ParseBenchCommandTest, AcceptsEveryDocumentedNoEffectFlag) {
  ASSERT_GE(IgnoredBenchFlags().size(), 5u);  // an empty list would pass vacuously
  std::string command = kLive;
  for (const IgnoredBenchFlag& flag : IgnoredBenchFlags()) {
    // --metadata and --header take KEY=VALUE items (vllm refuses others); some take
    // integers.
    const bool key_value =
        flag.name == std::string_view("--metadata") || flag.name == std::string_view("--header");
    const char* value = key_value ? " k=v" : flag.integer ? " 8000" : " x";
    command += " " + std::string(flag.name) + (flag.takes_value ? value : "");
  }
  auto config = ParseBenchCommand(command);
  ASSERT_TRUE(config.ok()) << config.status();
  // No effect: the workload is the live command's.
  auto live = ParseBenchCommand(kLive);
  ASSERT_TRUE(live.ok());
  EXPECT_EQ(config->num_prompts, live->num_prompts);
  EXPECT_EQ(config->dataset_name, live->dataset_name);
  EXPECT_EQ(config->backend, live->backend);
  // argparse still types them: a value that is not an integer is refused.
  for (const char* flag : {"--port", "--ready-check-timeout-sec"}) {
    ASSERT_TRUE(
        std::any_of(IgnoredBenchFlags().begin(), IgnoredBenchFlags().end(),
                    [&](const IgnoredBenchFlag& f) { return f.name == flag && f.integer; }));
    auto bad = ParseBenchCommand(std::string(kLive) + " " + flag + " abc");
    EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument) << flag;
    EXPECT_NE(bad.status().message().find(std::string(flag) + ": expected an integer"),
              std::string::npos)
        << bad.status();
  }
}

// Warm-up requests finish before vllm starts the clock: accepted, and an
// integer >= 0 as vllm's parser wants.
TEST(ParseBenchCommandTest, AcceptsWarmupsAndHeaders) {
  auto config = ParseBenchCommand(std::string(kLive) + " --num-warmups 5 --header a=1 b=2");
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->num_warmups, 5);
  EXPECT_EQ(std::string(
                ParseBenchCommand(std::string(kLive) + " --num-warmups -1").status().message()),
            "--bench: --num-warmups: must be >= 0, got -1");
  EXPECT_EQ(std::string(
                ParseBenchCommand(std::string(kLive) + " --num-warmups two").status().message()),
            "--bench: --num-warmups: expected an integer, got \"two\"");
}

// Flags that change the engine's work per token or per request are refused
// by name, at any value but vLLM's neutral one.
TEST(ParseBenchCommandTest, RefusesUnmodelledGenerationFlagsByName) {
  for (const char* flag :
       {" --use-beam-search", " --logprobs 5", " --profile", " --lora-modules a b",
        " --frequency-penalty 0.5", " --presence-penalty -1", " --repetition-penalty 1.1",
        " --random-batch-size 4"}) {
    auto config = ParseBenchCommand(std::string(kLive) + flag);
    ASSERT_FALSE(config.ok()) << flag;
    EXPECT_EQ(config.status().code(), absl::StatusCode::kUnimplemented) << flag;
    const std::string name = std::string(flag).substr(1, std::string(flag).find(' ', 1) - 1);
    EXPECT_NE(config.status().message().find(name + " "), std::string::npos)
        << config.status().message();
    EXPECT_NE(config.status().message().find("is not modelled"), std::string::npos);
  }
  for (const char* neutral : {" --frequency-penalty 0", " --presence-penalty 0.0",
                              " --repetition-penalty 1", " --random-batch-size 1"}) {
    EXPECT_TRUE(ParseBenchCommand(std::string(kLive) + neutral).ok()) << neutral;
  }
}

TEST(ParseBenchCommandTest, ReadsGoodputSlos) {
  auto config = ParseBenchCommand(std::string(kLive) + " --goodput ttft:500 tpot:50.5 --seed 1");
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->goodput_slo_ms, (std::map<std::string, double>{{"ttft", 500}, {"tpot", 50.5}}));
  EXPECT_EQ(config->seed, 1);
  EXPECT_TRUE(ParseBenchCommand(kLive)->goodput_slo_ms.empty());
}

// Echoed into the saved JSON only: --tokenizer, --label and --metadata's
// KEY=VALUE items, split as vllm splits them (item.split("=")[0] and [1]);
// an item without '=' is vllm's error.
TEST(ParseBenchCommandTest, KeepsTheResultFilesSetupFlags) {
  auto config = ParseBenchCommand(std::string(kLive) +
                                  " --tokenizer tok --label run1 --metadata gpu=h200 note=a=b");
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->tokenizer, "tok");
  EXPECT_EQ(config->label, "run1");
  EXPECT_EQ(config->metadata, (std::vector<std::pair<std::string, std::string>>{
                                  {"gpu", "h200"}, {"note", "a"}}));
  EXPECT_FALSE(ParseBenchCommand(kLive)->label.has_value());
  EXPECT_EQ(ParseBenchCommand(std::string(kLive) + " --metadata gpu=h200 x").status().message(),
            "--bench: --metadata: \"x\": Invalid metadata format. Please use KEY=VALUE format.");
  EXPECT_TRUE(ParseBenchCommand(std::string(kLive) + " --header Authorization=x").ok());
  EXPECT_EQ(ParseBenchCommand(std::string(kLive) + " --header foo").status().message(),
            "--bench: --header: \"foo\": Invalid header format. Please use KEY=VALUE format.");
}

TEST(ParseBenchCommandTest, SaveResultPathIsDirAndFilename) {
  auto config = ParseBenchCommand(std::string(kLive) +
                                  " --save-result --result-dir out --result-filename r.json");
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->save_result_path, "out/r.json");
  EXPECT_FALSE(config->append_result);
  // Without --save-result the name changes nothing, as in vllm.
  config = ParseBenchCommand(std::string(kLive) + " --result-filename r.json");
  ASSERT_TRUE(config.ok());
  EXPECT_FALSE(config->save_result);
  EXPECT_EQ(config->save_result_path, "");
  // vllm's own time-stamped name: the command parses (a live run's command
  // is read back by `validate`), with no path; `servesim run` refuses it.
  config = ParseBenchCommand(std::string(kLive) + " --save-result");
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_TRUE(config->save_result);
  EXPECT_EQ(config->save_result_path, "");
}

TEST(ParseBenchCommandTest, AcceptsUnderscoreSpellings) {
  auto config = ParseBenchCommand("vllm bench serve --num_prompts 7 --request_rate=3");
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->num_prompts, 7);
  EXPECT_EQ(config->request_rate, 3.0);
}

TEST(ParseBenchCommandTest, ReadsTraceOptions) {
  auto config = ParseBenchCommand(
      "vllm bench serve --dataset-name trace --dataset-path t.jsonl --trace-time-scale 2");
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->dataset_name, DatasetName::kTrace);
  EXPECT_EQ(config->trace_time_scale, 2.0);
  EXPECT_FALSE(config->request_rate_given);
}

struct BadCase {
  const char* flags;
  const char* message;
};

TEST(ParseBenchCommandTest, EachBadFlagGivesOneLineNamingIt) {
  const BadCase cases[] = {
      {"--num-prompts -5", "--bench: --num-prompts: must be >= 1, got -5"},
      {"--num-prompts abc", "--bench: --num-prompts: expected an integer, got \"abc\""},
      {"--num-prompts 1000001", "--bench: --num-prompts: must be <= 1000000, got 1000001"},
      {"--seed -1", "--bench: --seed: must be >= 0, got -1"},
      {"--seed -9223372036854775808", "--bench: --seed: must be >= 0, got -9223372036854775808"},
      {"--random-range-ratio 1", "--bench: --random-range-ratio: must be in [0, 1), got 1"},
      {"--random-range-ratio -0.1", "--bench: --random-range-ratio: must be in [0, 1), got -0.1"},
      {"--random-input-len 0", "--bench: --random-input-len: must be >= 1, got 0"},
      {"--random-output-len 0", "--bench: --random-output-len: must be >= 1, got 0"},
      {"--random-prefix-len -1", "--bench: --random-prefix-len: must be >= 0, got -1"},
      {"--random-output-len 9223372036854775806",
       "--bench: --random-output-len: must be <= 1073741824, got 9223372036854775806"},
      {"--random-input-len 1073741825",
       "--bench: --random-input-len: must be <= 1073741824, got 1073741825"},
      {"--random-prefix-len 9223372036854775807",
       "--bench: --random-prefix-len: must be <= 1073741824, got 9223372036854775807"},
      {"--sharegpt-output-len 2000000000",
       "--bench: --sharegpt-output-len: must be <= 1073741824, got 2000000000"},
      {"--request-rate 0", "--bench: --request-rate: must be > 0 or inf, got 0"},
      {"--request-rate fast", "--bench: --request-rate: expected a number, got \"fast\""},
      {"--burstiness 0", "--bench: --burstiness: must be finite and > 0, got 0"},
      {"--max-concurrency 0", "--bench: --max-concurrency: must be >= 1, got 0"},
      {"--sharegpt-output-len 0", "--bench: --sharegpt-output-len: must be >= 1, got 0"},
      {"--dataset-name sonnet",
       "--bench: --dataset-name: unsupported \"sonnet\" (servesim has sharegpt, random, trace)"},
      {"--dataset-name trace", "--bench: --dataset-path: required with --dataset-name trace"},
      {"--trace-time-scale 2", "--bench: --trace-time-scale: needs --dataset-name trace"},
      {"--dataset-name trace --dataset-path a --trace-time-scale 2 --request-rate 3",
       "--bench: --trace-time-scale: cannot be combined with --request-rate"},
      {"--percentile-metrics ttft,foo",
       "--bench: --percentile-metrics: unknown metric \"foo\" (ttft, tpot, itl, e2el)"},
      {"--metric-percentiles 50,101",
       "--bench: --metric-percentiles: expected numbers in [0, 100], got \"101\""},
      {"--goodput ttft=500",
       "--bench: --goodput: expected KEY:VALUE pairs such as ttft:500, got \"ttft=500\""},
      {"--goodput itl:50",
       "--bench: --goodput: invalid metric name \"itl\" (the SLO name should be one of ttft, tpot, "
       "e2el)"},
      {"--goodput ttft:0x10",
       "--bench: --goodput: expected KEY:VALUE pairs such as ttft:500, got \"ttft:0x10\""},
      {"--metric-percentiles 0x10",
       "--bench: --metric-percentiles: expected numbers in [0, 100], got \"0x10\""},
      {"--goodput ttft:-1",
       "--bench: --goodput: invalid value \"-1\" for ttft (the SLO value should be non-negative)"},
      {"--backend openai-embeddings",
       "--bench: --backend: \"openai-embeddings\" is not a text-generation backend of vllm "
       "bench serve (openai-chat, openai, vllm, sglang, tgi, lmdeploy, deepspeed-mii, "
       "tensorrt-llm, scalellm, llama.cpp)"},
      {"--temperature -0.5", "--bench: --temperature: must be finite and >= 0, got -0.5"},
      {"--top-p 0", "--bench: --top-p: must be in (0, 1], got 0"},
      // The value as given: six significant digits would print it as 1, inside the range.
      {"--top-p 1.0000001", "--bench: --top-p: must be in (0, 1], got 1.0000001"},
      {"--random-range-ratio 1.0000001",
       "--bench: --random-range-ratio: must be in [0, 1), got 1.0000001"},
      {"--top-k 0", "--bench: --top-k: must be -1 (off) or >= 1, got 0"},
      {"--min-p 1.5", "--bench: --min-p: must be in [0, 1], got 1.5"},
      {"--ramp-up-strategy step --ramp-up-start-rps 1 --ramp-up-end-rps 2",
       "--bench: --ramp-up-strategy: invalid choice \"step\" (choose from linear, exponential)"},
      {"--ramp-up-strategy linear --ramp-up-end-rps 2",
       "--bench: --ramp-up-strategy: When using --ramp-up-strategy, both --ramp-up-start-rps "
       "and --ramp-up-end-rps must be specified"},
      {"--ramp-up-strategy linear --ramp-up-start-rps 1 --ramp-up-end-rps 2 --request-rate 4",
       "--bench: --ramp-up-strategy: When using ramp-up, do not specify --request-rate. The "
       "request rate will be controlled by ramp-up parameters. Please remove the --request-rate "
       "argument."},
      {"--ramp-up-strategy linear --ramp-up-start-rps -1 --ramp-up-end-rps 2",
       "--bench: --ramp-up-start-rps: Ramp-up start and end RPS must be non-negative"},
      {"--ramp-up-strategy linear --ramp-up-start-rps 5 --ramp-up-end-rps 2",
       "--bench: --ramp-up-start-rps: Ramp-up start RPS must be less than end RPS"},
      {"--ramp-up-strategy exponential --ramp-up-start-rps 0 --ramp-up-end-rps 2",
       "--bench: --ramp-up-start-rps: For exponential ramp-up, the start RPS cannot be 0."},
      {"--ramp-up-strategy linear --ramp-up-start-rps 0 --ramp-up-end-rps 2",
       "--bench: --ramp-up-start-rps: 0: the first request would be sent at 0 req/s (vllm "
       "bench serve stops on it: \"Obtained non-positive request rate\")"},
      {"--ramp-up-strategy linear --ramp-up-start-rps 0.5 --ramp-up-end-rps 2",
       "--bench: --ramp-up-start-rps: expected an integer, got \"0.5\""},
      {"--ramp-up-end-rps 2",
       "--bench: --ramp-up-end-rps: needs --ramp-up-strategy linear|exponential"},
      {"--frobnicate 0.7", "--bench: unknown flag --frobnicate"},
      // vllm's own refusals: a dataset file for the random dataset (the
      // default), and the chat client on the completions endpoint (the default).
      {"--dataset-path ShareGPT.json",
       "--bench: Cannot use 'random' dataset with --dataset-path. Please specify the "
       "appropriate --dataset-name (e.g., 'sharegpt', 'custom', 'sonnet') for your dataset "
       "file: ShareGPT.json"},
      {"--backend openai-chat",
       "--bench: --endpoint: \"/v1/completions\": OpenAI Chat Completions API URL must end "
       "with 'chat/completions' (--backend openai-chat)"},
      {"--dataset-name sharegpt",
       "--bench: --dataset-path: dataset_path must be provided for loading data. (vllm bench "
       "serve's ShareGPT loader; servesim does not read the file, but a command without one "
       "does not run live)"},
      {"--backend openai --endpoint /v1/foo",
       "--bench: --endpoint: \"/v1/foo\": OpenAI Completions API URL must end with "
       "'completions' or 'profile' (--backend openai)"},
      {"--backend vllm --endpoint /v1/chat/completions",
       "--bench: --endpoint: \"/v1/chat/completions\" with --backend vllm: the backend posts a "
       "bare prompt, which a chat endpoint refuses (it needs messages), so vllm bench serve's "
       "initial test run fails; use --backend openai-chat"},
      {"--ignore-eos=yes", "--bench: --ignore-eos: is a switch and takes no value, got \"yes\""},
      {"--num-prompts", "--bench: --num-prompts: expected a value"},
      {"stray", "--bench: unexpected argument \"stray\""},
      {"--model 'unterminated", "--bench: unterminated single quote at column 26"},
  };
  for (const BadCase& c : cases) {
    auto config = ParseBenchCommand(std::string("vllm bench serve ") + c.flags);
    ASSERT_FALSE(config.ok()) << c.flags;
    EXPECT_EQ(config.status().message(), c.message) << c.flags;
    EXPECT_EQ(std::string(config.status().message()).find('\n'), std::string::npos);
  }
}

TEST(ParseBenchCommandTest, ReadsARampUp) {
  auto none = ParseBenchCommand("vllm bench serve");
  ASSERT_TRUE(none.ok()) << none.status();
  EXPECT_FALSE(none->ramp_up.has_value());
  // --request-rate inf is vllm's default written out, which vllm lets through.
  auto ramp = ParseBenchCommand(
      "vllm bench serve --ramp-up-strategy exponential --ramp-up-start-rps 2 "
      "--ramp-up-end-rps 32 --request-rate inf");
  ASSERT_TRUE(ramp.ok()) << ramp.status();
  ASSERT_TRUE(ramp->ramp_up.has_value());
  EXPECT_EQ(ramp->ramp_up->shape, RampUp::Shape::kExponential);
  EXPECT_EQ(ramp->ramp_up->start_rps, 2);
  EXPECT_EQ(ramp->ramp_up->end_rps, 32);
}

TEST(ParseBenchCommandTest, SamplingParametersAreSentOnlyWhenGiven) {
  auto none = ParseBenchCommand("vllm bench serve");
  ASSERT_TRUE(none.ok()) << none.status();
  EXPECT_FALSE(none->top_p.has_value());
  EXPECT_FALSE(none->temperature.has_value());
  auto set = ParseBenchCommand("vllm bench serve --top-p 0.9 --top-k 50 --min-p 0.05 --temperature 0");
  ASSERT_TRUE(set.ok()) << set.status();
  EXPECT_DOUBLE_EQ(*set->top_p, 0.9);
  EXPECT_EQ(*set->top_k, 50);
  EXPECT_DOUBLE_EQ(*set->min_p, 0.05);
  EXPECT_DOUBLE_EQ(*set->temperature, 0.0);
}

TEST(ParseBenchCommandTest, MustStartWithVllmBenchServe) {
  for (const char* bad : {"vllm serve deepseek-ai/DeepSeek-V3.2", "bench serve", ""}) {
    auto config = ParseBenchCommand(bad);
    ASSERT_FALSE(config.ok()) << bad;
    EXPECT_NE(config.status().message().find("must start with \"vllm bench serve\""),
              std::string::npos);
  }
}

}  // namespace
}  // namespace servesim::workload
