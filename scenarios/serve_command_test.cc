#include "scenarios/serve_command_for_test.h"

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace servesim::scenarios {
namespace {

constexpr char kVllmTp8[] =
    "vllm serve deepseek-ai/DeepSeek-V3.2 -tp 8 --tokenizer-mode deepseek_v32 "
    "--reasoning-parser deepseek_v3";

TEST(VllmServeTest, AppliesTheOpenAiServerDefaultsOnH200) {
  auto c = ParseV32ServeCommand(kVllmTp8);
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->engine(), VLLM);
  EXPECT_EQ(c->tp(), 8);
  EXPECT_EQ(c->dp(), 1);
  EXPECT_EQ(c->max_num_batched_tokens(), 8192);
  EXPECT_EQ(c->max_num_seqs(), 1024);
  EXPECT_EQ(c->max_model_len(), 163840);
  EXPECT_DOUBLE_EQ(c->gpu_memory_fraction(), 0.9);
  EXPECT_EQ(c->kv_block_size(), 64);
  EXPECT_EQ(c->model(), "deepseek-ai/DeepSeek-V3.2");
  // Capture sizes 1, 2, 4, 8..248 step 8, 256..512 step 16: 3 + 31 + 17.
  EXPECT_EQ(c->cuda_graph_sizes_size(), 51);
  EXPECT_EQ(c->cuda_graph_max_bs(), 512);
  EXPECT_EQ(c->ignored_flags_size(), 2);
}

// Under MTP the capture sizes are rounded up to multiples of 1 + k and kept
// within the largest: one draft drops size 1 (50 sizes, 2..512); two drafts
// give multiples of 3 up to 498 (496 rounds to 498, 512 past the largest).
TEST(VllmServeTest, MtpCaptureSizesAreMultiplesOfTheRowTokens) {
  auto one = ParseV32ServeCommand(absl::StrCat(
      kVllmTp8, " --speculative-config '{\"method\":\"mtp\",\"num_speculative_tokens\":1}'"));
  ASSERT_TRUE(one.ok()) << one.status();
  EXPECT_EQ(one->cuda_graph_sizes_size(), 50);
  EXPECT_EQ(one->cuda_graph_sizes(0), 2);
  EXPECT_EQ(one->cuda_graph_max_bs(), 512);
  auto two = ParseV32ServeCommand(absl::StrCat(
      kVllmTp8, " --speculative-config '{\"method\":\"mtp\",\"num_speculative_tokens\":2}'"));
  ASSERT_TRUE(two.ok()) << two.status();
  for (int32_t s : two->cuda_graph_sizes()) EXPECT_EQ(s % 3, 0) << s;
  EXPECT_EQ(two->cuda_graph_sizes(0), 3);
  EXPECT_EQ(two->cuda_graph_max_bs(), 498);
}

TEST(VllmServeTest, DefaultedBatchLimitsAreCappedByEachOther) {
  // A smaller token budget caps the defaulted sequence limit (1024 -> 512).
  auto seqs = ParseV32ServeCommand(absl::StrCat(kVllmTp8, " --max-num-batched-tokens 512"));
  ASSERT_TRUE(seqs.ok()) << seqs.status();
  EXPECT_EQ(seqs->max_num_seqs(), 512);
  // A short context caps the defaulted token budget at max_num_seqs x max_model_len.
  auto tokens =
      ParseV32ServeCommand(absl::StrCat(kVllmTp8, " --max-num-seqs 4 --max-model-len 1000"));
  ASSERT_TRUE(tokens.ok()) << tokens.status();
  EXPECT_EQ(tokens->max_num_batched_tokens(), 4000);
}

// Each batch limit below 1 is named with its value; an environment variable
// servesim does not model is the answer before vLLM's own checks, one of
// which (max_model_len past the model's) VLLM_ALLOW_LONG_MAX_MODEL_LEN lifts.
TEST(VllmServeTest, NamesTheBadLimitAndTheUnmodelledEnvFirst) {
  const std::pair<const char*, const char*> limits[] = {
      {" --max-num-seqs 0", "--serve: --max-num-seqs: must be >= 1, got 0"},
      {" --max-model-len -1", "--serve: --max-model-len: must be >= 1, got -1"},
      {" --max-num-batched-tokens -100",
       "--serve: --max-num-batched-tokens: must be >= 1, got -100"}};
  for (const auto& [flag, message] : limits) {
    EXPECT_EQ(ParseV32ServeCommand(absl::StrCat(kVllmTp8, flag)).status().message(), message);
  }
  auto long_len = ParseV32ServeCommand(absl::StrCat(kVllmTp8, " --max-model-len 200000"),
                                       {{"VLLM_ALLOW_LONG_MAX_MODEL_LEN", "1"}});
  EXPECT_EQ(long_len.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(
      absl::StartsWith(long_len.status().message(),
                       "--env: VLLM_ALLOW_LONG_MAX_MODEL_LEN is not an environment variable"))
      << long_len.status();
}

// vLLM reads --max-model-len and --max-num-batched-tokens as human-readable
// integers: k/m decimal (25.6k = 25600), K/M binary on whole numbers (32K =
// 32768).
TEST(VllmServeTest, MaxModelLenTakesHumanReadableSuffixes) {
  const std::pair<const char*, int64_t> cases[] = {
      {"32768", 32768}, {"32k", 32000}, {"32K", 32768}, {"25.6k", 25600}, {"0.1m", 100000},
      {"1m", 1000000}};
  for (const auto& [text, expected] : cases) {
    auto c = ParseV32ServeCommand(absl::StrCat(kVllmTp8, " --max-model-len ", text));
    if (expected > 163840) {  // past the model's context
      EXPECT_EQ(c.status().code(), absl::StatusCode::kFailedPrecondition) << text;
      EXPECT_NE(c.status().message().find(absl::StrCat(
                    "max_model_len (", expected, ") is greater than the derived max_model_len "
                    "(max_position_embeddings=163840)")),
                std::string::npos)
          << c.status();
      continue;
    }
    ASSERT_TRUE(c.ok()) << text << ": " << c.status();
    EXPECT_EQ(c->max_model_len(), expected) << text;
  }
  for (const char* bad : {"1.5K", "32x", "k", "-", ".5k", "5.k", "auto"}) {
    auto c = ParseV32ServeCommand(absl::StrCat(kVllmTp8, " --max-model-len ", bad));
    EXPECT_EQ(c.status().code(), absl::StatusCode::kInvalidArgument) << bad;
    // e.g. --serve: --max-model-len: expected an integer or one with a suffix (32k, 32K), got "k"
    EXPECT_TRUE(absl::StartsWith(c.status().message(), "--serve: --max-model-len: ")) << c.status();
    EXPECT_TRUE(absl::EndsWith(c.status().message(), absl::StrCat("got \"", bad, "\"")))
        << c.status();
  }
  // The token budget reads the same way.
  auto budget = ParseV32ServeCommand(absl::StrCat(kVllmTp8, " --max-num-batched-tokens 16K"));
  ASSERT_TRUE(budget.ok()) << budget.status();
  EXPECT_EQ(budget->max_num_batched_tokens(), 16384);
}

TEST(VllmServeTest, RefusesATokenBudgetBelowTheSequenceLimit) {
  auto c = ParseV32ServeCommand(
      absl::StrCat(kVllmTp8, " --max-num-seqs 1024 --max-num-batched-tokens 512"));
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(c.status().message(),
            "ValueError: max_num_batched_tokens (512) must be greater than or equal to "
            "max_num_seqs (1024).");
}

TEST(VllmServeTest, MemoryFractionOutOfRangeIsPrintedAsGiven) {
  // Six significant digits would print 1.0000001 as 1, which the range allows.
  auto c = ParseV32ServeCommand(absl::StrCat(kVllmTp8, " --gpu-memory-utilization 1.0000001"));
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().message(),
            "--serve: --gpu-memory-utilization: must be in (0, 1], got 1.0000001");
}

TEST(VllmServeTest, PrefixCachingIsOnUnlessDisabled) {
  auto on = ParseV32ServeCommand(kVllmTp8);
  ASSERT_TRUE(on.ok()) << on.status();
  EXPECT_TRUE(on->prefix_caching());
  auto off = ParseV32ServeCommand(absl::StrCat(kVllmTp8, " --no-enable-prefix-caching"));
  ASSERT_TRUE(off.ok()) << off.status();
  EXPECT_FALSE(off->prefix_caching());
  auto both = ParseV32ServeCommand(
      absl::StrCat(kVllmTp8, " --no-enable-prefix-caching --enable-prefix-caching"));
  ASSERT_FALSE(both.ok());
  EXPECT_EQ(both.status().message(),
            "--serve: --enable-prefix-caching and --no-enable-prefix-caching contradict each other");
}

TEST(VllmServeTest, DataParallelExpertParallelSpansAllRanks) {
  auto c = ParseV32ServeCommand(
      "vllm serve deepseek-ai/DeepSeek-V3.2 -tp 1 -dp 8 --enable-expert-parallel "
      "--max-model-len 81920");
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->dp(), 8);
  EXPECT_EQ(c->ep(), 8);
  EXPECT_EQ(c->max_model_len(), 81920);
}

TEST(VllmServeTest, MtpSpeculativeConfigFromAnUnquotedJsonWord) {
  auto c = ParseV32ServeCommand(
      std::string(kVllmTp8) + " --speculative-config {\"method\":\"mtp\",\"num_speculative_tokens\":1}");
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->num_speculative_tokens(), 1);
  EXPECT_NEAR(c->mean_accepted_drafts(), 0.85, 1e-12);
  EXPECT_EQ(c->cuda_graph_max_bs(), 512);  // min(1024 * 2 * 2, 512)
}

// The JSON is read as json.loads reads it: \u006d is "m", and an escape
// JSON does not define is a malformed argument (bad input), not MTP.
TEST(VllmServeTest, SpeculativeConfigEscapesAreJsonEscapes) {
  auto c = ParseV32ServeCommand(
      std::string(kVllmTp8) +
      R"( --speculative-config '{"method":"\u006dtp","num_speculative_tokens":1}')");
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->num_speculative_tokens(), 1);
  auto bad = ParseV32ServeCommand(
      std::string(kVllmTp8) +
      R"( --speculative-config '{"method":"\mtp","num_speculative_tokens":1}')");
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(bad.status().message().find("invalid escape '\\m'"), std::string::npos) << bad.status();
}

// A flag without effect on performance is still typed as the engine's
// parser types it: each engine refuses these values at start-up.
TEST(ServeCommandTest, IgnoredFlagsTakeOnlyValuesTheEngineAccepts) {
  const std::pair<const char*, const char*> refused[] = {
      {"vllm serve m -tp 8 --seed abc", "--seed: expected an integer, got \"abc\""},
      {"vllm serve m -tp 8 --swap-space x", "--swap-space: expected a number"},
      {"vllm serve m -tp 8 --uvicorn-log-level bogus",
       "--uvicorn-log-level: invalid choice \"bogus\""},
      {"python3 -m sglang.launch_server --model-path m --tp 8 --random-seed abc",
       "--random-seed: expected an integer"},
      {"trtllm-serve m --tp_size 8 --log_level bogus", "--log_level: invalid choice"},
  };
  for (const auto& [command, error] : refused) {
    absl::StatusOr<EngineConfig> c = ParseV32ServeCommand(command);
    EXPECT_EQ(c.status().code(), absl::StatusCode::kInvalidArgument) << command;
    EXPECT_NE(c.status().message().find(error), std::string::npos) << c.status();
  }
  absl::StatusOr<EngineConfig> ok = ParseV32ServeCommand(
      "vllm serve m -tp 8 --seed 7 --swap-space 4.5 --uvicorn-log-level debug");
  ASSERT_TRUE(ok.ok()) << ok.status();
  EXPECT_EQ(absl::StrJoin(ok->ignored_flags(), " "), "--seed --swap-space --uvicorn-log-level");
}

TEST(VllmServeTest, RefusesDecodeContextParallelWithTheEnginesReason) {
  auto c = ParseV32ServeCommand(std::string(kVllmTp8) + " -dcp 8");
  EXPECT_EQ(c.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(c.status().message().find("#27544"), std::string::npos);
}

TEST(VllmServeTest, RefusesBackendsWithoutSparseSupport) {
  auto cutlass = ParseV32ServeCommand(kVllmTp8, {{"VLLM_ATTENTION_BACKEND", "CUTLASS_MLA"}});
  EXPECT_EQ(cutlass.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(cutlass.status().message().find(
                "['sparse not supported', 'compute capability not supported']"),
            std::string::npos);
  auto triton = ParseV32ServeCommand(kVllmTp8, {{"VLLM_ATTENTION_BACKEND", "TRITON_MLA"}});
  EXPECT_NE(triton.status().message().find("Reason: ['sparse not supported']"),
            std::string::npos);
  EXPECT_TRUE(ParseV32ServeCommand(kVllmTp8, {{"VLLM_ATTENTION_BACKEND", "FLASHMLA_SPARSE"}}).ok());
  // A non-MLA backend fails both checks, in validate_configuration's order.
  auto flash_attn = ParseV32ServeCommand(kVllmTp8, {{"VLLM_ATTENTION_BACKEND", "FLASH_ATTN"}});
  EXPECT_NE(flash_attn.status().message().find(
                "Reason: ['MLA not supported', 'sparse not supported']"),
            std::string::npos)
      << flash_attn.status();
}

// The sparse-backend and DCP refusals are DSA's: vLLM serves DeepSeek-V3
// (dense MLA, no indexer) on its dense MLA backends and refuses its sparse
// one, the non-MLA and compute-capability reasons stay, and SGLang would
// start without DeepGEMM on GEMMs servesim does not price (not modelled).
TEST(DenseMlaModelServeTest, FollowsTheDenseBackendRules) {
  ServeContext dense;
  dense.dsa_attention = false;
  EXPECT_TRUE(
      ParseV32ServeCommand(kVllmTp8, {{"VLLM_ATTENTION_BACKEND", "FLASHMLA"}}, dense).ok());
  EXPECT_TRUE(
      ParseV32ServeCommand(kVllmTp8, {{"VLLM_ATTENTION_BACKEND", "TRITON_MLA"}}, dense).ok());
  auto sparse =
      ParseV32ServeCommand(kVllmTp8, {{"VLLM_ATTENTION_BACKEND", "FLASHMLA_SPARSE"}}, dense);
  EXPECT_NE(sparse.status().message().find("Reason: ['non-sparse not supported']"),
            std::string::npos)
      << sparse.status();
  auto flash_attn =
      ParseV32ServeCommand(kVllmTp8, {{"VLLM_ATTENTION_BACKEND", "FLASH_ATTN"}}, dense);
  EXPECT_NE(flash_attn.status().message().find("Reason: ['MLA not supported']"),
            std::string::npos)
      << flash_attn.status();
  auto cutlass =
      ParseV32ServeCommand(kVllmTp8, {{"VLLM_ATTENTION_BACKEND", "CUTLASS_MLA"}}, dense);
  EXPECT_NE(cutlass.status().message().find("Reason: ['compute capability not supported']"),
            std::string::npos)
      << cutlass.status();
  auto dcp = ParseV32ServeCommand(std::string(kVllmTp8) + " -dcp 8", {}, dense);
  EXPECT_EQ(dcp.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_NE(dcp.status().message().find("-dcp"), std::string::npos) << dcp.status();
  // SGLang starts without DeepGEMM on a dense model, on GEMMs servesim does
  // not price: not modelled, rather than a silent DeepGEMM prediction.
  auto sglang = ParseV32ServeCommand(
      "python3 -m sglang.launch_server --model-path deepseek-ai/DeepSeek-V3 --tp-size 8",
      {{"SGLANG_ENABLE_JIT_DEEPGEMM", "0"}}, dense);
  EXPECT_EQ(sglang.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_NE(sglang.status().message().find("SGLANG_ENABLE_JIT_DEEPGEMM=0"), std::string::npos)
      << sglang.status();
}

TEST(VllmServeTest, DeepGemmSwitchIsAKernelChoiceNotARefusal) {
  auto c = ParseV32ServeCommand(kVllmTp8, {{"VLLM_USE_DEEP_GEMM", "0"}});
  ASSERT_TRUE(c.ok());
  EXPECT_FALSE(c->deep_gemm());
}

// vLLM's default --generation-config auto hands the checkpoint's sampling
// defaults to requests; its top-p sampler sorts unless FlashInfer's is
// opted into.
TEST(VllmServeTest, SamplerFollowsGenerationConfigAndFlashInferSwitch) {
  auto c = ParseV32ServeCommand(kVllmTp8);
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_TRUE(c->applies_generation_config());
  EXPECT_TRUE(c->sampler_sorts_vocab());
  auto own = ParseV32ServeCommand(absl::StrCat(kVllmTp8, " --generation-config vllm"));
  ASSERT_TRUE(own.ok()) << own.status();
  EXPECT_FALSE(own->applies_generation_config());
  auto flashinfer = ParseV32ServeCommand(kVllmTp8, {{"VLLM_USE_FLASHINFER_SAMPLER", "1"}});
  ASSERT_TRUE(flashinfer.ok()) << flashinfer.status();
  EXPECT_FALSE(flashinfer->sampler_sorts_vocab());
  auto folder = ParseV32ServeCommand(absl::StrCat(kVllmTp8, " --generation-config /cfg"));
  EXPECT_EQ(folder.status().message(),
            "--serve: --generation-config: \"/cfg\" is not modelled (auto, vllm): servesim does "
            "not read a generation config folder");
}

TEST(VllmServeTest, UnknownFlagIsAnErrorNamingIt) {
  auto c = ParseV32ServeCommand(std::string(kVllmTp8) + " --frobnicate 3");
  EXPECT_EQ(c.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(c.status().message().find("--frobnicate"), std::string::npos);
}

// A real vLLM flag whose behaviour servesim does not model is Unimplemented
// and named, not an unknown flag (an audit found it refused as unknown).
TEST(VllmServeTest, WholePromptSchedulingIsNamedAsNotModelled) {
  auto c = ParseV32ServeCommand(std::string(kVllmTp8) + " --no-enable-chunked-prefill");
  EXPECT_EQ(c.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_EQ(c.status().message(),
            "--serve: --no-enable-chunked-prefill is not modelled (servesim's vLLM V1 scheduler "
            "chunks prefills, vLLM's default)");
  EXPECT_TRUE(ParseV32ServeCommand(std::string(kVllmTp8) + " --enable-chunked-prefill").ok());
}

// Spellings vLLM's parser reads beyond argparse's (-O3, a JSON flag's one
// key) and a list-valued SGLang flag are named as not modelled, not as
// unknown flags or stray words; a dotted value after '=' is no such key.
TEST(ServeCommandTest, ParserSpellingsAndListFlagsAreNamedAsNotModelled) {
  const std::pair<std::string, std::string> cases[] = {
      {std::string(kVllmTp8) + " -O3",
       "--serve: -O3 (vLLM's compilation optimization level) is not modelled"},
      {std::string(kVllmTp8) + " -O 3",
       "--serve: -O (vLLM's compilation optimization level) is not modelled"},
      {std::string(kVllmTp8) + " --speculative-config.method=mtp",
       "--serve: --speculative-config.method: one key of a JSON flag is not read; give "
       "--speculative-config as one JSON object"},
      {std::string(kVllmTp8) + " --override-generation-config {}",
       "--serve: --override-generation-config is not modelled"},
      {"python3 -m sglang.launch_server --model-path deepseek-ai/DeepSeek-V3.2 --tp-size 8 "
       "--cuda-graph-bs 1 2 4",
       "--serve: --cuda-graph-bs is not modelled"},
  };
  for (const auto& [serve, expected] : cases) {
    auto c = ParseV32ServeCommand(serve);
    EXPECT_EQ(c.status().code(), absl::StatusCode::kUnimplemented) << serve;
    EXPECT_TRUE(absl::StartsWith(c.status().message(), expected)) << c.status();
  }
  EXPECT_TRUE(ParseV32ServeCommand(std::string(kVllmTp8) + " --chat-template=./tool.jinja").ok());
}

// Real vLLM flags servesim does not model are named as such (Unimplemented),
// also in vLLM's underscore spelling; with the value the engine uses anyway
// (--dtype auto: the checkpoint's BF16) they change nothing and are listed.
TEST(VllmServeTest, UnmodelledFlagsAreNamedAndInertValuesListed) {
  auto eplb = ParseV32ServeCommand(std::string(kVllmTp8) + " --enable_eplb");
  EXPECT_EQ(eplb.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_EQ(eplb.status().message(),
            "--serve: --enable-eplb is not modelled (servesim does not model this vLLM "
            "flag; docs/engines.md lists the flags it reads)");
  // vLLM's -q is --quantization, named by its long name.
  auto awq = ParseV32ServeCommand(std::string(kVllmTp8) + " -q awq");
  EXPECT_EQ(awq.status().message(), "--serve: --quantization awq is not modelled (fp8)");
  auto fp16 = ParseV32ServeCommand(std::string(kVllmTp8) + " --dtype float16");
  EXPECT_EQ(fp16.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_EQ(fp16.status().message(), "--serve: --dtype float16 is not modelled (auto, bfloat16)");
  auto inert = ParseV32ServeCommand(std::string(kVllmTp8) + " --dtype auto --seed 7");
  ASSERT_TRUE(inert.ok()) << inert.status();
  EXPECT_EQ(absl::StrJoin(inert->ignored_flags(), " "),
            "--tokenizer-mode --reasoning-parser --dtype --seed");
  // A flag's own default changes nothing either.
  EXPECT_TRUE(ParseV32ServeCommand(std::string(kVllmTp8) + " --data-parallel-backend mp").ok());
  // The first unmodelled flag given is the one named.
  auto two = ParseV32ServeCommand(std::string(kVllmTp8) + " --api-server-count 4 --enable-dbo");
  EXPECT_NE(two.status().message().find("--api-server-count"), std::string::npos) << two.status();
}

// A launch script's paths, credentials and logging (HF_HOME, NCCL_DEBUG) are
// accepted by every engine and listed; any other variable an engine does not
// model is refused naming it, CUDA_VISIBLE_DEVICES among them (it decides
// which GPUs the engine sees).
TEST(ServeCommandTest, EnvironmentWithoutEffectIsListedAndOtherVariablesRefused) {
  const EnvVars inert = {{"HF_HOME", "/data/hf"}, {"NCCL_DEBUG", "WARN"}};
  const std::pair<std::string, std::string> engines[] = {
      {kVllmTp8, "vLLM"},
      {"python3 -m sglang.launch_server --model-path deepseek-ai/DeepSeek-V3.2 --tp-size 8",
       "SGLang"},
      {"trtllm-serve deepseek-ai/DeepSeek-V3.2 --tp_size 8", "TensorRT-LLM"}};
  for (const auto& [serve, name] : engines) {
    auto c = ParseV32ServeCommand(serve, inert);
    ASSERT_TRUE(c.ok()) << name << ": " << c.status();
    EXPECT_EQ(absl::StrJoin(c->ignored_env(), " "), "HF_HOME NCCL_DEBUG") << name;
    for (const char* key : {"CUDA_VISIBLE_DEVICES", "NCCL_P2P_DISABLE"}) {
      auto refused = ParseV32ServeCommand(serve, {{"HF_HOME", "/x"}, {key, "1"}});
      ASSERT_FALSE(refused.ok()) << name << " " << key;
      EXPECT_EQ(refused.status().code(), absl::StatusCode::kInvalidArgument);
      EXPECT_TRUE(absl::StartsWith(refused.status().message(),
                                   absl::StrCat("--env: ", key,
                                                " is not an environment variable servesim "
                                                "models for ",
                                                name, " (")))
          << refused.status();
    }
  }
  EXPECT_TRUE(EnvWithoutEffect("HF_TOKEN"));
  EXPECT_FALSE(EnvWithoutEffect("hf_home"));  // names are case-sensitive
  EXPECT_FALSE(EnvWithoutEffect("VLLM_USE_DEEP_GEMM"));
}

// vLLM's --block-size is one of its choices (argparse refuses others);
// FlashMLA sparse then forces 64 whatever it was.
TEST(VllmServeTest, BlockSizeMustBeAChoiceAndIsForcedTo64) {
  const std::string choices = " (choose from 1, 8, 16, 32, 64, 128, 256)";
  const std::pair<const char*, std::string> cases[] = {
      {"0", "--serve: argument --block-size: invalid choice: 0" + choices},
      {"abc", "--serve: --block-size: expected an integer, got \"abc\""},
      {"-16", "--serve: argument --block-size: invalid choice: -16" + choices},
      {"7", "--serve: argument --block-size: invalid choice: 7" + choices},
  };
  for (const auto& [bad, message] : cases) {
    auto refused = ParseV32ServeCommand(absl::StrCat("vllm serve m -tp 8 --block-size ", bad));
    EXPECT_EQ(refused.status().code(), absl::StatusCode::kInvalidArgument) << bad;
    EXPECT_EQ(refused.status().message(), message) << bad;
  }
  auto c = ParseV32ServeCommand("vllm serve m -tp 8 --block-size 16");
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->kv_block_size(), 64);
  EXPECT_NE(absl::StrJoin(c->defaults_applied(), "; ").find("--block-size overridden to 64"),
            std::string::npos);
  // Without the flag the forced size is still a default the header echoes.
  auto plain = ParseV32ServeCommand("vllm serve m -tp 8");
  ASSERT_TRUE(plain.ok()) << plain.status();
  EXPECT_NE(absl::StrJoin(plain->defaults_applied(), "; ")
                .find("block_size=64 (forced for FlashMLA sparse)"),
            std::string::npos);
}

// A GPU count past one instance of 512 nodes is a typo, refused before it
// leaves int (-tp 2 x -dp 2^30 had printed a negative MoE TP size).
TEST(VllmServeTest, RefusesAnInstanceOfMoreThan4096Gpus) {
  EXPECT_EQ(ParseV32ServeCommand("vllm serve m -tp 2 -dp 1073741824 --data-parallel-size-local 1")
                .status()
                .message(),
            "--serve: -tp 2 x -dp 1073741824 = 2147483648 GPUs: servesim models one instance of "
            "at most 4096 GPUs (512 nodes)");
  EXPECT_TRUE(ParseV32ServeCommand("vllm serve m -tp 8 -dp 512 --data-parallel-size-local 1").ok());
}

// Every fp8* cache dtype is DeepSeek-V3.2's fp8_ds_mla layout (the model's
// config override tests the prefix), named in the header; a value outside
// CacheConfig's choices is argparse's error.
TEST(VllmServeTest, EveryFp8CacheDtypeIsTheDsMlaLayout) {
  for (const char* kv : {"fp8", "fp8_e4m3", "fp8_e5m2", "fp8_inc", "fp8_ds_mla"}) {
    auto c = ParseV32ServeCommand(absl::StrCat("vllm serve m -tp 8 --kv-cache-dtype ", kv));
    ASSERT_TRUE(c.ok()) << kv << ": " << c.status();
    EXPECT_EQ(c->kv_cache_dtype(), KV_FP8) << kv;
    const std::string defaults = absl::StrJoin(c->defaults_applied(), "; ");
    EXPECT_EQ(
        defaults.find(absl::StrCat("--kv-cache-dtype ", kv, " -> fp8_ds_mla")) != std::string::npos,
        std::string(kv) != "fp8_ds_mla")
        << defaults;
  }
  auto bf16 = ParseV32ServeCommand("vllm serve m -tp 8 --kv-cache-dtype bfloat16");
  ASSERT_TRUE(bf16.ok()) << bf16.status();
  EXPECT_EQ(bf16->kv_cache_dtype(), KV_BF16);
  EXPECT_EQ(ParseV32ServeCommand("vllm serve m -tp 8 --kv-cache-dtype int8").status().message(),
            "--serve: argument --kv-cache-dtype: invalid choice: 'int8' (choose from auto, "
            "bfloat16, fp8, fp8_ds_mla, fp8_e4m3, fp8_e5m2, fp8_inc)");
}

// vLLM's --served-model-name takes several names (nargs="+"), each answered.
TEST(VllmServeTest, ServedModelNamesAreEveryNameGiven) {
  auto named = ParseV32ServeCommand("vllm serve m -tp 8 --served-model-name a b --max-num-seqs 8");
  ASSERT_TRUE(named.ok()) << named.status();
  EXPECT_EQ(std::vector<std::string>(named->served_model_names().begin(),
                                     named->served_model_names().end()),
            (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(named->max_num_seqs(), 8);
  auto plain = ParseV32ServeCommand("vllm serve m -tp 8");
  ASSERT_TRUE(plain.ok()) << plain.status();
  EXPECT_EQ(plain->served_model_names_size(), 1);
  EXPECT_EQ(plain->served_model_names(0), "m");
}

TEST(VllmServeTest, TheModelIsRequired) {
  auto missing = ParseV32ServeCommand("vllm serve -tp 8");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().message(), "--serve: vllm serve needs the model: vllm serve MODEL");
  EXPECT_TRUE(ParseV32ServeCommand("vllm serve --model m -tp 8").ok());
}

TEST(VllmServeTest, MultiNodeDataParallelSpansDpOverLocalNodes) {
  auto c = ParseV32ServeCommand(
      "vllm serve m -tp 1 -dp 16 --data-parallel-size-local 8 --enable-expert-parallel "
      "--data-parallel-address 10.0.0.1 --data-parallel-rpc-port 13345");
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->nnodes(), 2);
  EXPECT_EQ(c->ep(), 16);
  auto bad = ParseV32ServeCommand("vllm serve m -dp 16 --data-parallel-size-local 5");
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(bad.status().message(),
            "--serve: --data-parallel-size-local: must divide --data-parallel-size (16), got 5");
}

TEST(ServeCommandTest, UnknownProgramIsAnError) {
  auto c = ParseV32ServeCommand("ollama serve");
  EXPECT_EQ(c.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(c.status().message().find("unrecognised engine command \"ollama\""),
            std::string::npos)
      << c.status();
}

// Each engine's default context is the model's max_position_embeddings, and a
// longer one is refused with the engine's message naming it.
TEST(ServeCommandTest, ContextLengthDefaultsAndLimitsFollowTheModel) {
  ServeContext short_model;
  short_model.max_position_embeddings = 65536;
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"vllm serve m -tp 8", " --max-model-len 65537"},
      {"python3 -m sglang.launch_server --model-path m --tp-size 8", " --context-length 65537"},
      {"trtllm-serve m --tp_size 8", " --max_seq_len 65537"},
  };
  for (const auto& [serve, too_long] : cases) {
    auto c = ParseServeCommand(serve, {}, short_model);
    ASSERT_TRUE(c.ok()) << serve << ": " << c.status();
    EXPECT_EQ(c->max_model_len(), 65536) << serve;
    auto refused = ParseServeCommand(serve + too_long, {}, short_model);
    ASSERT_FALSE(refused.ok()) << serve;
    EXPECT_EQ(refused.status().code(), absl::StatusCode::kFailedPrecondition) << serve;
    EXPECT_NE(refused.status().message().find("65536)"), std::string::npos)
        << refused.status();
    EXPECT_TRUE(ParseServeCommand(serve + too_long, {}, ServeContext{}).status().code() ==
                absl::StatusCode::kInternal)
        << "a context without the model's length is a caller's bug";
  }
}

TEST(ServeCommandTest, EnvAssignmentNeedsAKey) {
  EXPECT_EQ(std::string(ParseEnvAssignment("=3").status().message()),
            "--env: expected KEY=VALUE, got \"=3\"");
  auto kv = ParseEnvAssignment("VLLM_USE_DEEP_GEMM=0");
  ASSERT_TRUE(kv.ok());
  EXPECT_EQ(kv->second, "0");
}

TEST(MtpAcceptanceTest, ChainedAcceptanceOfTwoDrafts) {
  ServeContext chat;
  EXPECT_NEAR(*MeanAcceptedDrafts(2, chat), 0.85 + 0.85 * 0.85, 1e-12);
  ServeContext random;
  random.chat_workload = false;
  EXPECT_LT(*MeanAcceptedDrafts(1, random), *MeanAcceptedDrafts(1, chat));
}

// Far more drafts per step than any published setting is a typo, refused
// on every engine before the simulator builds a pass per draft.
TEST(MtpAcceptanceTest, AtMost32DraftTokensPerStep) {
  EXPECT_TRUE(ParseV32ServeCommand(
                  R"(vllm serve m -tp 8 --speculative-config {"method":"mtp","num_speculative_tokens":32})")
                  .ok());
  auto vllm = ParseV32ServeCommand(
      R"(vllm serve m -tp 8 --speculative-config {"method":"mtp","num_speculative_tokens":1000000000})");
  ASSERT_FALSE(vllm.ok());
  EXPECT_NE(vllm.status().message().find("servesim models at most 32"), std::string::npos);
  auto sglang = ParseV32ServeCommand(
      "python3 -m sglang.launch_server --model-path m --tp-size 8 "
      "--speculative-algorithm EAGLE --speculative-num-steps 100000");
  EXPECT_NE(sglang.status().message().find("--speculative-num-steps: 100000 draft tokens per "
                                           "step; servesim models at most 32"),
            std::string::npos)
      << sglang.status();
}

// vLLM's SpeculativeConfig without a draft model runs MTP (and the
// model-free methods, not modelled); an EAGLE method or none at all is its
// ValueError at start-up, a refusal, not "not modelled".
TEST(SpeculativeFlagsTest, VllmRefusesADraftMethodWithoutADraftModel) {
  for (const char* config : {R"({"num_speculative_tokens":1})",
                             R"({"method":"eagle","num_speculative_tokens":1})"}) {
    auto c = ParseV32ServeCommand(std::string("vllm serve m -tp 8 --speculative-config ") + config);
    ASSERT_FALSE(c.ok()) << config;
    EXPECT_EQ(c.status().code(), absl::StatusCode::kFailedPrecondition) << c.status();
    EXPECT_EQ(c.status().message(),
              "num_speculative_tokens was provided but without speculative model.");
  }
  auto ngram = ParseV32ServeCommand(
      R"(vllm serve m -tp 8 --speculative-config {"method":"ngram","num_speculative_tokens":1})");
  EXPECT_EQ(ngram.status().code(), absl::StatusCode::kUnimplemented) << ngram.status();
}

// SGLang: the algorithm's choices are argparse's, compared as given; the
// auto choice of steps/topk/draft tokens needs all three unset; without an
// algorithm the three are never read and the server starts without
// speculation.
TEST(SpeculativeFlagsTest, SglangFollowsItsSpeculativeArgumentRules) {
  const std::string base = "python3 -m sglang.launch_server --model-path m --tp-size 8 ";
  auto lower = ParseV32ServeCommand(base + "--speculative-algorithm eagle");
  ASSERT_FALSE(lower.ok());
  EXPECT_EQ(lower.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(lower.status().message().find("invalid choice: 'eagle'"), std::string::npos)
      << lower.status();
  for (const char* partial : {"--speculative-num-draft-tokens 2", "--speculative-eagle-topk 1"}) {
    auto c = ParseV32ServeCommand(base + "--speculative-algorithm EAGLE " + partial);
    ASSERT_FALSE(c.ok()) << partial;
    EXPECT_EQ(c.status().code(), absl::StatusCode::kFailedPrecondition) << c.status();
  }
  auto chosen = ParseV32ServeCommand(base + "--speculative-algorithm NEXTN");
  ASSERT_TRUE(chosen.ok()) << chosen.status();
  EXPECT_EQ(chosen->num_speculative_tokens(), 3);
  auto none = ParseV32ServeCommand(base + "--speculative-num-steps 2");
  ASSERT_TRUE(none.ok()) << none.status();
  EXPECT_EQ(none->num_speculative_tokens(), 0);
  EXPECT_NE(std::find(none->ignored_flags().begin(), none->ignored_flags().end(),
                      "--speculative-num-steps"),
            none->ignored_flags().end())
      << absl::StrJoin(none->ignored_flags(), " ");
}

// --mtp-acceptance is the mean of accepted drafts per step: at most the
// drafts a step proposes (3 here), and a step that proposes 1 cannot accept 5.
TEST(MtpAcceptanceTest, GivenAcceptanceIsAtMostTheDraftsPerStep) {
  ServeContext given;
  given.mtp_mean_accepted_drafts = 2.5;
  EXPECT_EQ(*MeanAcceptedDrafts(3, given), 2.5);
  EXPECT_EQ(std::string(MeanAcceptedDrafts(2, given).status().message()),
            "--mtp-acceptance: 2.5 accepted drafts per step, but the engine proposes 2 per step");
  auto c = ParseV32ServeCommand(
      R"(vllm serve deepseek-ai/DeepSeek-V3.2 -tp 8 --speculative-config {"method":"mtp","num_speculative_tokens":1})",
      {}, given);
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.status().message().find("--mtp-acceptance"), std::string::npos);
}

// An ignored switch takes no value: the flag after it is read as its own.
TEST(ServeCommandTest, IgnoredSwitchesLeaveTheNextFlagAlone) {
  auto vllm = ParseV32ServeCommand(
      "vllm serve m --enable-auto-tool-choice --trust-remote-code --disable-log-stats -tp 4");
  ASSERT_TRUE(vllm.ok()) << vllm.status();
  EXPECT_EQ(vllm->tp(), 4);
  auto sglang = ParseV32ServeCommand(
      "python3 -m sglang.launch_server --model-path m --trust-remote-code --skip-server-warmup "
      "--enable-metrics --tp-size 4");
  ASSERT_TRUE(sglang.ok()) << sglang.status();
  EXPECT_EQ(sglang->tp(), 4);
  auto trtllm = ParseV32ServeCommand("trtllm-serve m --trust_remote_code --tp_size 4");
  ASSERT_TRUE(trtllm.ok()) << trtllm.status();
  EXPECT_EQ(trtllm->tp(), 4);
}

}  // namespace
}  // namespace servesim::scenarios
