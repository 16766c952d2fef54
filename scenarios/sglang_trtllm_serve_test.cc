// The SGLang and TensorRT-LLM launch commands: every one recorded in
// shared/validation parses (or is refused with the engine's reason), with the
// engines' documented defaults.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/scratch_path_for_test.h"
#include "scenarios/serve_command_for_test.h"

namespace servesim::scenarios {
namespace {

constexpr char kSglangBase[] =
    "python3 -m sglang.launch_server --model-path deepseek-ai/DeepSeek-V3.2 --host 0.0.0.0 "
    "--port 8000 --chat-template ./tool_chat_template_deepseekv32.jinja --tp-size 8";

// serve_command of every SGLang and TensorRT-LLM row of
// shared/validation/sharegpt_runs.csv, verbatim.
const char* const kValidationCommands[] = {
    "python3 -m sglang.launch_server --model-path deepseek-ai/DeepSeek-V3.2 --host 0.0.0.0 --port 8000 --chat-template ./tool_chat_template_deepseekv32.jinja --tp-size 8",
    "trtllm-serve /workspace/DeepSeek-v3.2 --tp_size 8",
    "python3 -m sglang.launch_server --model-path deepseek-ai/DeepSeek-V3.2 --host 0.0.0.0 --port 8000 --chat-template ./tool_chat_template_deepseekv32.jinja --tp-size 8 --enable-dp-attention",
    "python3 -m sglang.launch_server --model-path deepseek-ai/DeepSeek-V3.2 --host 0.0.0.0 --port 8000 --chat-template ./tool_chat_template_deepseekv32.jinja --tp-size 8 --dp-size 8 --enable-dp-attention",
    "python3 -m sglang.launch_server --model-path deepseek-ai/DeepSeek-V3.2 --host 0.0.0.0 --port 8000 --chat-template ./tool_chat_template_deepseekv32.jinja --tp-size 8 --dp-size 8 --enable-dp-attention --ep-size 8",
    "python3 -m sglang.launch_server --model-path deepseek-ai/DeepSeek-V3.2 --host 0.0.0.0 --port 8000 --tp-size 8 --speculative-algorithm EAGLE --speculative-num-steps 1 --speculative-eagle-topk 1 --speculative-num-draft-tokens 2",
    "python3 -m sglang.launch_server --model-path deepseek-ai/DeepSeek-V3.2 --host 0.0.0.0 --port 8000 --chat-template ./tool_chat_template_deepseekv32.jinja --tp-size 8 --enable-dp-attention --dp 8 --reasoning-parser deepseek-v3 --tool-call-parser deepseekv32",
    "python3 -m sglang.launch_server --model-path deepseek-ai/DeepSeek-V3.2 --host 0.0.0.0 --port 8000 --chat-template ./tool_chat_template_deepseekv32.jinja --tp-size 8 --enable-dp-attention --dp 8 --reasoning-parser deepseek-v3 --tool-call-parser deepseekv32 --context-length=32768",
    "python3 -m sglang.launch_server --model-path deepseek-ai/DeepSeek-V3.2 --host 0.0.0.0 --port 8000 --chat-template ./tool_chat_template_deepseekv32.jinja --tp-size 8 --enable-dp-attention --dp 8 --reasoning-parser deepseek-v3 --tool-call-parser deepseekv32 --context-length=32768 --kv-cache-dtype fp8_e4m3",
    "python3 -m sglang.launch_server --model-path deepseek-ai/DeepSeek-V3.2 --host 0.0.0.0 --port 8000 --chat-template ./tool_chat_template_deepseekv32.jinja --tp-size 8 --enable-dp-attention --dp 8 --reasoning-parser deepseek-v3 --tool-call-parser deepseekv32 --context-length=32768 --attention-backend nsa --nsa-prefill-backend fa3 --nsa-decode-backend fa3",
    "python3 -m sglang.launch_server --model-path deepseek-ai/DeepSeek-V3.2 --host 0.0.0.0 --port 8000 --chat-template ./tool_chat_template_deepseekv32.jinja --tp-size 8 --enable-dp-attention --dp 8 --reasoning-parser deepseek-v3 --tool-call-parser deepseekv32 --context-length=32768 --attention-backend nsa --nsa-prefill-backend flashmla_sparse --nsa-decode-backend flashmla_kv",
    "trtllm-serve /workspace/DeepSeek-v3.2 --tp_size 8 --ep_size 8 --pp_size 1",
};

TEST(SglangTrtllmServeTest, EveryValidationCommandParses) {
  for (const char* command : kValidationCommands) {
    auto c = ParseV32ServeCommand(command);
    EXPECT_TRUE(c.ok()) << command << "\n" << c.status();
  }
  // trtllm-tp8-ep8-no-deepgemm: the same command with TRTLLM_DG_ENABLED=0.
  auto c = ParseV32ServeCommand(kValidationCommands[11], {{"TRTLLM_DG_ENABLED", "0"}});
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_FALSE(c->deep_gemm());
}

TEST(SglangServeTest, AppliesTheH200DefaultsForTp8) {
  auto c = ParseV32ServeCommand(kSglangBase);
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->engine(), SGLANG);
  EXPECT_EQ(c->model(), "deepseek-ai/DeepSeek-V3.2");
  EXPECT_EQ(c->tp(), 8);
  EXPECT_FALSE(c->enable_dp_attention());
  EXPECT_EQ(c->max_num_batched_tokens(), 8192);
  EXPECT_EQ(c->chunked_prefill_size_before_dp(), 8192);
  EXPECT_EQ(c->max_prefill_tokens(), 16384);
  EXPECT_EQ(c->max_num_seqs(), 0);  // derived from the KV pool at setup
  EXPECT_EQ(c->max_model_len(), 163840);
  EXPECT_EQ(c->kv_cache_dtype(), KV_BF16);
  EXPECT_EQ(c->kv_block_size(), 64);
  EXPECT_EQ(c->prefill_attention_backend(), "flashmla_sparse");
  EXPECT_EQ(c->decode_attention_backend(), "fa3");
  EXPECT_TRUE(c->overlap_schedule());
  EXPECT_DOUBLE_EQ(c->schedule_conservativeness(), 1.0);
  EXPECT_EQ(c->schedule_policy(), "fcfs");
  // [1,2,4,8,12] + 16..256 step 8 (31) + 272..496 step 16 (15) + 512.
  EXPECT_EQ(c->cuda_graph_sizes_size(), 5 + 31 + 15 + 1);
  EXPECT_EQ(c->cuda_graph_max_bs(), 512);
  // --model-path, --host, --port, --chat-template.
  EXPECT_EQ(c->ignored_flags_size(), 4);
  // Each default the header echoes (engines.md: every default applied is).
  const std::string defaults = absl::StrJoin(c->defaults_applied(), "; ");
  for (const char* d : {"schedule_policy=fcfs", "schedule_conservativeness=1.0",
                        "enable_mixed_chunk=False", "page_size=64", "radix cache on",
                        "cuda_graph_max_bs=512", "chunked_prefill_size=8192"}) {
    EXPECT_NE(defaults.find(d), std::string::npos) << d << " not in: " << defaults;
  }
  // A value given is no default; lpm is run as fcfs, and says so.
  auto given = ParseV32ServeCommand(absl::StrCat(
      kSglangBase, " --schedule-policy lpm --schedule-conservativeness 0.5 --page-size 64"));
  ASSERT_TRUE(given.ok()) << given.status();
  const std::string noted = absl::StrJoin(given->defaults_applied(), "; ");
  EXPECT_NE(noted.find("schedule_policy lpm run as fcfs"), std::string::npos) << noted;
  for (const char* d : {"schedule_policy=fcfs", "schedule_conservativeness=", "page_size=64"}) {
    EXPECT_EQ(noted.find(d), std::string::npos) << d << " in: " << noted;
  }
}

TEST(SglangServeTest, RadixCacheIsOnUnlessDisabled) {
  auto on = ParseV32ServeCommand(kSglangBase);
  ASSERT_TRUE(on.ok()) << on.status();
  EXPECT_TRUE(on->prefix_caching());
  auto off = ParseV32ServeCommand(absl::StrCat(kSglangBase, " --disable-radix-cache"));
  ASSERT_TRUE(off.ok()) << off.status();
  EXPECT_FALSE(off->prefix_caching());
}

TEST(SglangServeTest, DpAttentionSplitsTheChunkAndScalesConservativeness) {
  auto c = ParseV32ServeCommand(std::string(kSglangBase) + " --dp 8 --enable-dp-attention");
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_TRUE(c->enable_dp_attention());
  EXPECT_EQ(c->dp(), 8);
  EXPECT_EQ(c->max_num_batched_tokens(), 1024);  // 8192 // 8
  EXPECT_EQ(c->chunked_prefill_size_before_dp(), 8192);
  EXPECT_NEAR(c->schedule_conservativeness(), 0.3, 1e-12);
}

// Under DP attention each rank runs max_running_requests // dp_size: 64 over
// 8 ranks is 8 each; 4 over 8 is none, which would never run a request.
TEST(SglangServeTest, DpAttentionSplitsMaxRunningRequests) {
  const std::string dp8 = std::string(kSglangBase) + " --dp 8 --enable-dp-attention";
  auto c = ParseV32ServeCommand(dp8 + " --max-running-requests 64");
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->max_num_seqs(), 8);
  EXPECT_EQ(ParseV32ServeCommand(dp8 + " --max-running-requests 4").status().message(),
            "--serve: --max-running-requests: 4 over 8 DP-attention ranks is 0 per rank "
            "(SGLang divides it by --dp-size): no request would ever run");
}

TEST(SglangServeTest, DpAttentionWithoutDpSizeIsPlainTp) {
  auto c = ParseV32ServeCommand(std::string(kSglangBase) + " --enable-dp-attention");
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_FALSE(c->enable_dp_attention());
  EXPECT_EQ(c->dp(), 1);
  EXPECT_EQ(c->max_num_batched_tokens(), 8192);
  EXPECT_DOUBLE_EQ(c->schedule_conservativeness(), 1.0);
}

TEST(SglangServeTest, EagleCapsRunningRequestsAndTurnsOverlapOff) {
  auto c = ParseV32ServeCommand(kValidationCommands[5]);
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->num_speculative_tokens(), 1);  // 2 draft tokens = root + 1 draft
  EXPECT_NEAR(c->mean_accepted_drafts(), 0.85, 1e-12);
  EXPECT_EQ(c->max_num_seqs(), 48);
  EXPECT_FALSE(c->overlap_schedule());
}

TEST(SglangServeTest, Fp8KvSwitchesTheNsaBackends) {
  auto c = ParseV32ServeCommand(kValidationCommands[8]);
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->kv_cache_dtype(), KV_FP8);
  EXPECT_EQ(c->prefill_attention_backend(), "flashmla_auto");
  EXPECT_EQ(c->decode_attention_backend(), "flashmla_kv");
  EXPECT_EQ(c->max_model_len(), 32768);
}

TEST(SglangServeTest, RefusesDisabledDeepGemmWithTheEnginesReason) {
  auto c = ParseV32ServeCommand(kSglangBase, {{"SGLANG_ENABLE_JIT_DEEPGEMM", "0"}});
  EXPECT_EQ(c.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(c.status().message().find("server fails to start when DeepGEMM is disabled"),
            std::string::npos);
  EXPECT_NE(c.status().message().find("fp8_paged_mqa_logits"), std::string::npos);
  EXPECT_TRUE(ParseV32ServeCommand(kSglangBase, {{"SGLANG_ENABLE_JIT_DEEPGEMM", "1"}}).ok());
}

TEST(SglangServeTest, UnknownFlagAndUnmodelledFeaturesAreNamed) {
  auto unknown = ParseV32ServeCommand(std::string(kSglangBase) + " --frobnicate 3");
  EXPECT_EQ(unknown.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(unknown.status().message().find("--frobnicate"), std::string::npos);
  auto policy = ParseV32ServeCommand(std::string(kSglangBase) + " --schedule-policy lof");
  EXPECT_EQ(policy.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_NE(policy.status().message().find("--schedule-policy lof is not modelled"),
            std::string::npos)
      << policy.status();
  auto backend = ParseV32ServeCommand(std::string(kSglangBase) + " --nsa-decode-backend xyz");
  EXPECT_EQ(backend.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(backend.status().message().find("--nsa-decode-backend: unknown NSA backend \"xyz\""),
            std::string::npos)
      << backend.status();
  auto env = ParseV32ServeCommand(kSglangBase, {{"SGLANG_FOO", "1"}});
  EXPECT_EQ(env.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(env.status().message().find("SGLANG_FOO"), std::string::npos);
}

TEST(TrtllmServeTest, AppliesTheTrtllmServeDefaults) {
  auto c = ParseV32ServeCommand("trtllm-serve /workspace/DeepSeek-v3.2 --tp_size 8");
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->engine(), TRTLLM);
  EXPECT_EQ(c->model(), "/workspace/DeepSeek-v3.2");
  EXPECT_EQ(c->tp(), 8);
  EXPECT_EQ(c->ep(), 1);
  EXPECT_EQ(c->max_num_seqs(), 2048);
  EXPECT_EQ(c->max_num_batched_tokens(), 8192);
  EXPECT_FALSE(c->chunked_prefill());
  EXPECT_EQ(c->schedule_policy(), "GUARANTEED_NO_EVICT");
  EXPECT_TRUE(c->overlap_schedule());
  EXPECT_DOUBLE_EQ(c->gpu_memory_fraction(), 0.9);
  EXPECT_EQ(c->kv_block_size(), 32);
  EXPECT_EQ(c->kv_cache_dtype(), KV_BF16);
  // 1..31, 32, 64, 128 without padding.
  EXPECT_EQ(c->cuda_graph_sizes_size(), 34);
  EXPECT_EQ(c->cuda_graph_max_bs(), 128);
  EXPECT_FALSE(c->cuda_graph_padding());
  EXPECT_TRUE(c->deep_gemm());
}

class TrtllmYamlTest : public ::testing::Test {
 protected:
  // One file per test: ctest runs each test as its own process, in parallel.
  std::string Write(const std::string& text) {
    const std::string path = ScratchPathForTest("yaml");
    std::ofstream(path) << text;
    return path;
  }
};

// SGLang's DP controller is round robin unless --load-balance-method says
// otherwise; other methods, and real flags such as --enable-dp-lm-head, are
// named as not modelled rather than unknown.
TEST(SglangServeTest, UnmodelledFlagsAreNamedAndInertValuesListed) {
  const std::string base =
      "python3 -m sglang.launch_server --model-path deepseek-ai/DeepSeek-V3.2 --tp-size 8 "
      "--dp-size 8 --enable-dp-attention ";
  auto rr = ParseV32ServeCommand(base + "--load-balance-method round_robin");
  ASSERT_TRUE(rr.ok()) << rr.status();
  EXPECT_NE(
      std::find(rr->ignored_flags().begin(), rr->ignored_flags().end(), "--load-balance-method"),
      rr->ignored_flags().end());
  auto sq = ParseV32ServeCommand(base + "--load-balance-method shortest_queue");
  EXPECT_EQ(sq.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_EQ(sq.status().message(),
            "--serve: --load-balance-method shortest_queue is not modelled (round_robin)");
  auto lm = ParseV32ServeCommand(base + "--enable-dp-lm-head");
  EXPECT_EQ(lm.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_EQ(lm.status().message(),
            "--serve: --enable-dp-lm-head is not modelled (servesim does not model this SGLang "
            "flag; docs/engines.md lists the flags it reads)");
  EXPECT_TRUE(ParseV32ServeCommand(base + "--moe-a2a-backend none").ok());  // its default
  EXPECT_EQ(ParseV32ServeCommand(base + "--frobnicate").status().code(),
            absl::StatusCode::kInvalidArgument);
}

// SGLang's pipeline parallelism is a real flag servesim does not model: named
// as such, not as an unknown flag; --pp-size 1 is the default, accepted.
TEST(SglangServeTest, PipelineParallelIsNotModelledButKnown) {
  const std::string base =
      "python3 -m sglang.launch_server --model-path deepseek-ai/DeepSeek-V3.2 --tp-size 8 ";
  auto two = ParseV32ServeCommand(base + "--pp-size 2");
  EXPECT_EQ(two.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_EQ(two.status().message(),
            "--serve: --pp-size > 1 (pipeline parallelism) is not modelled");
  EXPECT_TRUE(ParseV32ServeCommand(base + "--pipeline-parallel-size 1").ok());
}

TEST_F(TrtllmYamlTest, ReadsTheOptionsThatMatter) {
  const std::string path = Write(
      "enable_attention_dp: true   # per-rank attention\n"
      "cuda_graph_config:\n"
      "  enable_padding: true\n"
      "  max_batch_size: 256\n"
      "kv_cache_config:\n"
      "  free_gpu_memory_fraction: 0.8\n"
      "  dtype: fp8\n"
      "  tokens_per_block: 64\n"
      "scheduler_config:\n"
      "  capacity_scheduler_policy: MAX_UTILIZATION\n"
      "speculative_config:\n"
      "  decoding_type: MTP\n"
      "  num_nextn_predict_layers: 2\n"
      "disable_overlap_scheduler: true\n");
  auto c = ParseV32ServeCommand(
      "trtllm-serve /m --tp_size 8 --ep_size 8 --extra_llm_api_options " + path);
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_TRUE(c->enable_dp_attention());
  EXPECT_EQ(c->dp(), 8);
  EXPECT_TRUE(c->cuda_graph_padding());
  // [1, 2, 4] + 8..128 step 8 + 256.
  EXPECT_EQ(c->cuda_graph_sizes_size(), 3 + 16 + 1);
  EXPECT_EQ(c->cuda_graph_max_bs(), 256);
  EXPECT_DOUBLE_EQ(c->gpu_memory_fraction(), 0.8);
  EXPECT_EQ(c->kv_cache_dtype(), KV_FP8);
  // Run, but the header carries the report that doubts FP8 FlashMLA on H200.
  EXPECT_NE(absl::StrJoin(c->defaults_applied(), "; ")
                .find("kv_cache_config.dtype=fp8 priced as FlashMLA's FP8 layout (uncertain"),
            std::string::npos);
  EXPECT_EQ(c->kv_block_size(), 64);
  EXPECT_EQ(c->schedule_policy(), "MAX_UTILIZATION");
  EXPECT_EQ(c->num_speculative_tokens(), 2);
  EXPECT_FALSE(c->overlap_schedule());
}

// MTPDecodingConfig's num_nextn_predict_layers defaults to 1 (an audit
// found the file without it aborted servesim with std::out_of_range).
TEST_F(TrtllmYamlTest, MtpWithoutALayerCountDraftsOneToken) {
  const std::string path = Write("speculative_config:\n  decoding_type: MTP\n");
  auto c = ParseV32ServeCommand("trtllm-serve /m --tp_size 8 --extra_llm_api_options " + path);
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->num_speculative_tokens(), 1);
}

// The header's defaults are what ran: a value the YAML sets is no default
// (found by an audit: max_batch_size: 32 ran, the header said 2048).
TEST_F(TrtllmYamlTest, AValueTheYamlSetsIsNotNotedAsADefault) {
  const std::string path = Write(
      "max_batch_size: 32\n"
      "enable_chunked_prefill: false\n"
      "kv_cache_config:\n"
      "  free_gpu_memory_fraction: 0.5\n"
      "  tokens_per_block: 32\n");
  auto c = ParseV32ServeCommand("trtllm-serve /m --tp_size 8 --config " + path);
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->max_num_seqs(), 32);
  const std::string defaults = absl::StrJoin(c->defaults_applied(), "; ");
  for (const char* set : {"max_batch_size=2048", "free_gpu_memory_fraction=",
                          "enable_chunked_prefill=", "tokens_per_block="}) {
    EXPECT_EQ(defaults.find(set), std::string::npos) << set << " in: " << defaults;
  }
  EXPECT_NE(defaults.find("max_num_tokens=8192 (BuildConfig default)"), std::string::npos)
      << defaults;
}

// A quoted key is the key (PyYAML reads "enable_attention_dp" so); a section
// given a scalar is named as a section, not as an unknown option.
TEST_F(TrtllmYamlTest, QuotedKeysAndScalarSections) {
  auto quoted = ParseV32ServeCommand("trtllm-serve /m --tp_size 8 --config " +
                                     Write("\"enable_attention_dp\": true\n"));
  ASSERT_TRUE(quoted.ok()) << quoted.status();
  EXPECT_TRUE(quoted->enable_dp_attention());
  EXPECT_EQ(quoted->dp(), 8);
  auto scalar =
      ParseV32ServeCommand("trtllm-serve /m --tp_size 8 --config " + Write("kv_cache_config: 5\n"));
  ASSERT_FALSE(scalar.ok());
  EXPECT_NE(scalar.status().message().find(
                "line 1: kv_cache_config: expected a mapping of its options "
                "(kv_cache_config.free_gpu_memory_fraction, kv_cache_config.dtype"),
            std::string::npos)
      << scalar.status();
}

// The YAML's integers are capped as the command line's are (a review found
// max_batch_size: 2^63 - 1 reaching the int64 products the flags' cap closed).
TEST_F(TrtllmYamlTest, AbsurdIntegersAreRefusedWithTheLine) {
  const std::string path = Write("max_batch_size: 9223372036854775807\n");
  auto c = ParseV32ServeCommand("trtllm-serve /m --tp_size 8 --config " + path);
  EXPECT_EQ(c.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(c.status().message().find(
                "max_batch_size: must be within +-2147483647, got 9223372036854775807"),
            std::string::npos)
      << c.status();
}

TEST_F(TrtllmYamlTest, BlockListOfBatchSizes) {
  const std::string path = Write("cuda_graph_config:\n  batch_sizes:\n    - 8\n    - 1\n    - 64\n");
  auto c = ParseV32ServeCommand("trtllm-serve /m --config " + path);
  ASSERT_TRUE(c.ok()) << c.status();
  ASSERT_EQ(c->cuda_graph_sizes_size(), 3);
  EXPECT_EQ(c->cuda_graph_sizes(0), 1);
  EXPECT_EQ(c->cuda_graph_max_bs(), 64);
}

TEST_F(TrtllmYamlTest, NullCudaGraphConfigDisablesGraphs) {
  auto c = ParseV32ServeCommand("trtllm-serve /m --config " + Write("cuda_graph_config: null\n"));
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->cuda_graph_sizes_size(), 0);
}

// TensorRT-LLM's option models refuse values of the wrong type, also for
// options servesim reads only to check them.
TEST_F(TrtllmYamlTest, ValuesOfTheWrongTypeAreRefusedWithTheLine) {
  const std::pair<const char*, const char*> cases[] = {
      {"cuda_graph_config: 5\n",
       "line 1: cuda_graph_config: expected a mapping or null, got \"5\""},
      {"kv_cache_config:\n  enable_block_reuse: maybe\n",
       "line 2: kv_cache_config.enable_block_reuse: expected true or false, got \"maybe\""},
      {"print_iter_log: banana\n", "line 1: print_iter_log: expected true or false"},
  };
  for (const auto& [yaml, message] : cases) {
    auto c = ParseV32ServeCommand("trtllm-serve /m --config " + Write(yaml));
    ASSERT_FALSE(c.ok()) << yaml;
    EXPECT_NE(c.status().message().find(message), std::string::npos) << c.status();
  }
  EXPECT_TRUE(ParseV32ServeCommand("trtllm-serve /m --config " +
                                   Write("kv_cache_config:\n  enable_block_reuse: false\n"
                                         "print_iter_log: true\n"))
                  .ok());
  // PyYAML's YAML 1.1 booleans.
  auto yes = ParseV32ServeCommand("trtllm-serve /m --config " +
                                  Write("enable_chunked_prefill: yes\nprint_iter_log: Off\n"));
  ASSERT_TRUE(yes.ok()) << yes.status();
  EXPECT_TRUE(yes->chunked_prefill());
}

TEST_F(TrtllmYamlTest, UnknownKeyIsNamedWithItsLine) {
  auto c = ParseV32ServeCommand(
      "trtllm-serve /m --config " + Write("kv_cache_config:\n  dtype: auto\n  frob: 1\n"));
  EXPECT_EQ(c.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(c.status().message().find("line 3: kv_cache_config.frob"), std::string::npos)
      << c.status();
}

TEST_F(TrtllmYamlTest, ADirectoryIsNotAnOptionsFile) {
  auto c = ParseV32ServeCommand("trtllm-serve /m --config " + ::testing::TempDir());
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.status().message().find("cannot read"), std::string::npos) << c.status();
}

TEST(TrtllmServeTest, UnknownFlagAndEnvAreNamed) {
  auto c = ParseV32ServeCommand("trtllm-serve /m --frobnicate 1");
  EXPECT_EQ(c.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(c.status().message().find("--frobnicate"), std::string::npos);
  auto e = ParseV32ServeCommand("trtllm-serve /m", {{"TRTLLM_FOO", "1"}});
  EXPECT_NE(e.status().message().find("TRTLLM_FOO"), std::string::npos);
  auto missing = ParseV32ServeCommand("trtllm-serve --tp_size 8");
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(missing.status().message().find("trtllm-serve takes one model argument, got 0"),
            std::string::npos)
      << missing.status();
}

// Found by fuzzing: values that overflowed int64 products or passed as
// settings no engine takes.
TEST(ServeCommandTest, AbsurdIntegersAndSettingsAreRefusedByName) {
  const std::pair<const char*, const char*> cases[] = {
      {"vllm serve m -tp 8 --max-model-len 9223372036854775807",
       "--serve: --max-model-len: must be within +-2147483647, got 9223372036854775807"},
      {"vllm serve m -tp 9223372036854775807",
       "--serve: --tensor-parallel-size: must be within +-2147483647, got 9223372036854775807"},
      {"trtllm-serve m --tp_size 8 --max_batch_size 9223372036854775807",
       "--serve: --max_batch_size: must be within +-2147483647, got 9223372036854775807"},
      {"python3 -m sglang.launch_server --model-path m --tp-size 8 --moe-dense-tp-size 0",
       "--serve: --moe-dense-tp-size: must be >= 1, got 0"},
      {"python3 -m sglang.launch_server --model-path m --tp-size 8 "
       "--schedule-conservativeness inf",
       "--serve: --schedule-conservativeness: must be finite and > 0, got inf"},
  };
  for (const auto& [command, message] : cases) {
    auto c = ParseV32ServeCommand(command);
    EXPECT_EQ(c.status().code(), absl::StatusCode::kInvalidArgument) << command;
    EXPECT_EQ(c.status().message(), message) << command;
  }
}

TEST(TrtllmServeTest, BeamWidthOneIsTheDefaultAndBeamSearchIsNotModelled) {
  auto one = ParseV32ServeCommand("trtllm-serve /m --tp_size 8 --max_beam_width 1");
  ASSERT_TRUE(one.ok()) << one.status();
  auto beams = ParseV32ServeCommand("trtllm-serve /m --tp_size 8 --max_beam_width 4");
  EXPECT_EQ(beams.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_EQ(beams.status().message(),
            "--serve: --max_beam_width 4 (beam search) is not modelled (1)");
  auto zero = ParseV32ServeCommand("trtllm-serve /m --max_beam_width 0");
  EXPECT_EQ(zero.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(zero.status().message().find("--max_beam_width: must be >= 1, got 0"),
            std::string::npos)
      << zero.status();
}

TEST(SglangServeTest, NnodesSpreadsOneInstanceOverNodes) {
  auto c = ParseV32ServeCommand(
      "python3 -m sglang.launch_server --model-path m --tp-size 16 --dp-size 16 "
      "--enable-dp-attention --nnodes 2 --node-rank 0 --dist-init-addr 10.0.0.1:5000");
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->nnodes(), 2);
  EXPECT_EQ(c->tp(), 16);
  auto none = ParseV32ServeCommand("python3 -m sglang.launch_server --model-path m --nnodes 0");
  EXPECT_EQ(none.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(none.status().message().find("--nnodes: must be >= 1, got 0"), std::string::npos)
      << none.status();
  auto rank = ParseV32ServeCommand(
      "python3 -m sglang.launch_server --model-path m --tp-size 16 --nnodes 2 --node-rank 2");
  EXPECT_EQ(rank.status().code(), absl::StatusCode::kInvalidArgument);  // ranks 0 and 1 only
  EXPECT_NE(rank.status().message().find("--node-rank: 2 is not a node of --nnodes 2"),
            std::string::npos)
      << rank.status();
  // --tp-size counts every GPU of the instance: 8 over 2 nodes is not two
  // of servesim's 8-GPU nodes.
  auto half = ParseV32ServeCommand(
      "python3 -m sglang.launch_server --model-path m --tp-size 8 --nnodes 2");
  ASSERT_FALSE(half.ok());
  EXPECT_NE(half.status().message().find("--tp-size 16"), std::string::npos);
}

TEST(SglangServeTest, PageSizeMustBePositive) {
  auto zero = ParseV32ServeCommand(
      "python3 -m sglang.launch_server --model-path m --tp-size 8 --page-size 0");
  EXPECT_EQ(zero.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(zero.status().message().find("--page-size: must be >= 1, got 0"), std::string::npos)
      << zero.status();
  auto c = ParseV32ServeCommand(
      "python3 -m sglang.launch_server --model-path m --tp-size 8 --page-size 32");
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->kv_block_size(), 64);  // DeepSeek NSA forces 64
}

}  // namespace
}  // namespace servesim::scenarios
