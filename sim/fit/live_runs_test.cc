#include "sim/fit/live_runs.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "sim/workload/command_line.h"

namespace servesim::fit {
namespace {

TEST(ParseCsvTest, QuotedFieldsKeepCommasQuotesAndNewlines) {
  auto rows = ParseCsv("a,b\n\"x, y\",\"say \"\"hi\"\"\nthere\"\n");
  ASSERT_TRUE(rows.ok());
  ASSERT_EQ(rows->size(), 2u);
  EXPECT_EQ((*rows)[1][0], "x, y");
  EXPECT_EQ((*rows)[1][1], "say \"hi\"\nthere");
}

TEST(ParseCsvTest, ReadsQuotedCommasQuotesAndLineBreaks) {
  absl::StatusOr<std::vector<std::vector<std::string>>> r =
      ParseCsv("a,\"b,c\",\"d\"\"e\"\r\n\"x\ny\",,\n");
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->size(), 2u);
  EXPECT_EQ((*r)[0], (std::vector<std::string>{"a", "b,c", "d\"e"}));
  EXPECT_EQ((*r)[1], (std::vector<std::string>{"x\ny", "", ""}));
  EXPECT_FALSE(ParseCsv("a,\"open\n").ok());
}

TEST(ParseCsvTest, UnterminatedQuoteIsAnError) {
  EXPECT_FALSE(ParseCsv("a\n\"open\n").ok());
}

TEST(ReadLiveRunsTest, ReadsTheSharedValidationRuns) {
  auto runs = ReadLiveRuns(std::string(SERVESIM_SHARED_DIR) + "/validation/sharegpt_runs.csv");
  ASSERT_TRUE(runs.ok()) << runs.status();
  ASSERT_EQ(runs->size(), 19u);
  const LiveRun& first = runs->front();
  EXPECT_EQ(first.name, "vllm-tp8-base");
  EXPECT_DOUBLE_EQ(first.measured.at("total_token_throughput"), 5713.95);
  // The MTP row's JSON keeps its quotes after CSV unescaping.
  EXPECT_NE((*runs)[4].serve_command.find("{\"method\":\"mtp\""), std::string::npos);
  EXPECT_EQ((*runs)[5].env.size(), 1u);
  EXPECT_EQ((*runs)[5].env[0].first, "VLLM_USE_DEEP_GEMM");
}

TEST(ReadLiveRunsTest, ReadsExpectedFailures) {
  auto runs =
      ReadLiveRuns(std::string(SERVESIM_SHARED_DIR) + "/validation/expected_failures.csv");
  ASSERT_TRUE(runs.ok()) << runs.status();
  ASSERT_EQ(runs->size(), 6u);
  for (const LiveRun& r : *runs) EXPECT_TRUE(r.expected_failure);
}

TEST(ParseRunCommandsTest, ReadsAScriptOfExportsContinuationsAndLeadingEnv) {
  absl::StatusOr<RunCommands> c = ParseRunCommands(
      "#!/bin/bash\n"
      "export HF_HOME=/data/hf\n"
      "\n"
      "VLLM_USE_DEEP_GEMM=0 vllm serve deepseek-ai/DeepSeek-V3.2 -tp 8 \\\n"
      "  --speculative-config '{\"method\": \"mtp\", \"num_speculative_tokens\": 1}'  # MTP-1\n"
      "vllm bench serve --dataset-name random --random-input-len 2000 \\\n"
      "    --num-prompts 500 --seed 42\n");
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->env, (scenarios::EnvVars{{"HF_HOME", "/data/hf"}, {"VLLM_USE_DEEP_GEMM", "0"}}));
  absl::StatusOr<std::vector<std::string>> serve = workload::SplitShellWords(c->serve_command);
  ASSERT_TRUE(serve.ok()) << serve.status();
  EXPECT_EQ(*serve, (std::vector<std::string>{
                        "vllm", "serve", "deepseek-ai/DeepSeek-V3.2", "-tp", "8",
                        "--speculative-config",
                        "{\"method\": \"mtp\", \"num_speculative_tokens\": 1}"}));
  EXPECT_EQ(c->bench_command,
            "vllm bench serve --dataset-name random --random-input-len 2000 --num-prompts 500 "
            "--seed 42");
}

TEST(ParseRunCommandsTest, NeedsOneServeAndOneBenchCommandAndNothingElse) {
  EXPECT_FALSE(ParseRunCommands("vllm serve m -tp 8\n").ok());
  EXPECT_FALSE(ParseRunCommands("vllm bench serve --num-prompts 5\n").ok());
  EXPECT_FALSE(ParseRunCommands("vllm serve m\ntrtllm-serve m\nvllm bench serve\n").ok());
  absl::StatusOr<RunCommands> other =
      ParseRunCommands("vllm serve m\nsleep 600\nvllm bench serve\n");
  ASSERT_FALSE(other.ok());
  EXPECT_NE(other.status().message().find("line 2"), std::string::npos) << other.status();
  absl::StatusOr<RunCommands> bad_export =
      ParseRunCommands("export NOVALUE\nvllm serve m\nvllm bench serve\n");
  ASSERT_FALSE(bad_export.ok());
  EXPECT_NE(bad_export.status().message().find("line 1"), std::string::npos) << bad_export.status();
  EXPECT_TRUE(ParseRunCommands("python3 -m sglang.launch_server --model-path m\n"
                               "vllm bench serve\n")
                  .ok());
}

// A confirmation run's directory: one run saved as JSON (with its console
// log, which the JSON supersedes), one as a console log only.
TEST(ReadLiveRunsFromTest, ReadsEachRunsResultWithItsCommands) {
  const std::filesystem::path dir = std::filesystem::path(testing::TempDir()) / "confirmation";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  auto write = [&](const std::string& name, const std::string& text) {
    std::ofstream(dir / name) << text;
  };
  const std::string block =
      "============ Serving Benchmark Result ============\n"
      "Successful requests:                     500       \n"
      "Benchmark duration (s):                  120.00    \n"
      "Total token throughput (tok/s):          8750.00   \n"
      "==================================================\n";
  write("a.cmd", "vllm serve m -tp 8\nvllm bench serve --num-prompts 500\n");
  write("a.json", "{\"completed\": 500, \"duration\": 119.5, \"total_token_throughput\": 8790.1}");
  write("a.log", block);
  write("b.cmd", "trtllm-serve m --tp_size 8\nvllm bench serve --num-prompts 500\n");
  write("b.txt", "INFO starting\n" + block);
  write("notes.md", "not a result");
  absl::StatusOr<std::vector<LiveRun>> runs = ReadLiveRunsFrom(dir.string());
  ASSERT_TRUE(runs.ok()) << runs.status();
  ASSERT_EQ(runs->size(), 2u);
  EXPECT_EQ((*runs)[0].name, "a");
  EXPECT_DOUBLE_EQ((*runs)[0].measured.at("total_token_throughput"), 8790.1);
  EXPECT_EQ((*runs)[1].name, "b");
  EXPECT_EQ((*runs)[1].serve_command, "trtllm-serve m --tp_size 8");
  EXPECT_DOUBLE_EQ((*runs)[1].measured.at("duration"), 120.0);

  write("c.json", "{\"completed\": 1, \"duration\": 1.0}");
  absl::StatusOr<std::vector<LiveRun>> missing = ReadLiveRunsFrom(dir.string());
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("c.cmd"), std::string::npos) << missing.status();
}

}  // namespace
}  // namespace servesim::fit
