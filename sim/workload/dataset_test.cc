#include "sim/workload/dataset.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "base/scratch_path_for_test.h"
#include "gtest/gtest.h"

namespace servesim::workload {
namespace {

const std::string kTracesDir = std::string(SERVESIM_SOURCE_DIR) + "/traces";

BenchConfig RandomConfig(int64_t input_len, int64_t output_len, double ratio, int64_t n) {
  BenchConfig config;
  config.dataset_name = DatasetName::kRandom;
  config.random_input_len = input_len;
  config.random_output_len = output_len;
  config.random_range_ratio = ratio;
  config.num_prompts = n;
  config.seed = 42;
  return config;
}

int64_t SumPrompt(const std::vector<BenchRequest>& requests) {
  int64_t sum = 0;
  for (const auto& r : requests) sum += r.prompt_tokens;
  return sum;
}
int64_t SumOutput(const std::vector<BenchRequest>& requests) {
  int64_t sum = 0;
  for (const auto& r : requests) sum += r.output_tokens;
  return sum;
}

TEST(RandomDatasetTest, LengthsAreExactAtRangeRatioZero) {
  // vLLM subtracts the one BOS token from --random-input-len: 128 -> 127.
  auto requests = SampleRequests(RandomConfig(128, 4, 0.0, 1000), kTracesDir, nullptr);
  ASSERT_TRUE(requests.ok()) << requests.status();
  ASSERT_EQ(requests->size(), 1000u);
  for (size_t i = 0; i < requests->size(); ++i) {
    EXPECT_EQ((*requests)[i].id, static_cast<int64_t>(i));
    EXPECT_EQ((*requests)[i].prompt_tokens, 127);
    EXPECT_EQ((*requests)[i].output_tokens, 4);
    EXPECT_EQ((*requests)[i].arrival_offset_ns, 0);
  }
}

// engine-defaults.md B1/B2: ShareGPT's prompt_len counts the BOS, the random
// dataset's does not; a chat backend adds the template's markers.
TEST(EnginePromptTokensTest, AddsTheBosAndChatMarkersTheClientDoesNotCount) {
  BenchConfig sharegpt;
  sharegpt.dataset_name = DatasetName::kSharegpt;
  sharegpt.backend = "openai-chat";
  EXPECT_EQ(EnginePromptTokens(sharegpt, 219, 3), 222);
  sharegpt.backend = "openai";  // /v1/completions: the prompt as sent, BOS counted
  EXPECT_EQ(EnginePromptTokens(sharegpt, 219, 3), 219);
  BenchConfig random = RandomConfig(128, 4, 0.0, 1);
  random.backend = "openai-chat";
  EXPECT_EQ(EnginePromptTokens(random, 127, 3), 131);
  random.backend = "openai";
  EXPECT_EQ(EnginePromptTokens(random, 127, 3), 128);
  BenchConfig trace;
  trace.dataset_name = DatasetName::kTrace;
  trace.backend = "openai-chat";  // trace rows are the engine's own counts
  EXPECT_EQ(EnginePromptTokens(trace, 500, 3), 500);
}

TEST(RandomDatasetTest, PrefixAddsToEveryPrompt) {
  BenchConfig config = RandomConfig(2000, 100, 0.0, 10);
  config.random_prefix_len = 50;
  std::string notice;
  auto requests = SampleRequests(config, kTracesDir, &notice);
  ASSERT_TRUE(requests.ok());
  for (const auto& r : *requests) {
    EXPECT_EQ(r.prompt_tokens, 50 + 1999);
    // vLLM draws one prefix for all prompts: one node, the same key.
    EXPECT_EQ(r.prefix_node_keys, std::vector<int64_t>{0});
    EXPECT_EQ(r.prefix_node_tokens, std::vector<int64_t>{50});
  }
  EXPECT_NE(notice.find("every prompt starts with the same prefix"), std::string::npos) << notice;
  // The engine adds the BOS first; behind the chat endpoint the user marker too.
  EXPECT_EQ(EngineSharedPrefixTokens(config, 50), 51);
  config.backend = "openai-chat";
  EXPECT_EQ(EngineSharedPrefixTokens(config, 50), 52);
  EXPECT_EQ(EngineSharedPrefixTokens(config, 0), 0);
}

TEST(RandomDatasetTest, LengthsStayWithinVllmBoundsAndCoverThem) {
  // input 1001 -> real 1000 -> [floor(500), ceil(1500)]; output 100 -> [50, 150].
  auto requests = SampleRequests(RandomConfig(1001, 100, 0.5, 20000), kTracesDir, nullptr);
  ASSERT_TRUE(requests.ok());
  std::set<int64_t> inputs, outputs;
  for (const auto& r : *requests) {
    EXPECT_GE(r.prompt_tokens, 500);
    EXPECT_LE(r.prompt_tokens, 1500);
    EXPECT_GE(r.output_tokens, 50);
    EXPECT_LE(r.output_tokens, 150);
    inputs.insert(r.prompt_tokens);
    outputs.insert(r.output_tokens);
  }
  // 20000 draws over 101 output values: every value appears (P(miss) ~ 1e-85).
  EXPECT_EQ(outputs.size(), 101u);
  EXPECT_EQ(*inputs.begin(), 500);
  EXPECT_EQ(*inputs.rbegin(), 1500);
  // Uniform means: (500 + 1500) / 2 and (50 + 150) / 2, within ~6 sigma.
  EXPECT_NEAR(SumPrompt(*requests) / 20000.0, 1000.0, 6 * 289.0 / std::sqrt(20000.0));
  EXPECT_NEAR(SumOutput(*requests) / 20000.0, 100.0, 6 * 29.2 / std::sqrt(20000.0));
}

TEST(RandomDatasetTest, OutputLowerBoundIsAtLeastOne) {
  // O = 2, r = 0.9: [max(1, floor(0.2)), max(1, ceil(3.8))] = [1, 4].
  auto requests = SampleRequests(RandomConfig(100, 2, 0.9, 2000), kTracesDir, nullptr);
  ASSERT_TRUE(requests.ok());
  std::set<int64_t> outputs;
  for (const auto& r : *requests) outputs.insert(r.output_tokens);
  EXPECT_EQ(outputs, (std::set<int64_t>{1, 2, 3, 4}));
}

TEST(RandomDatasetTest, RangesThatAllowEmptyPromptsAreRejected) {
  auto requests = SampleRequests(RandomConfig(1, 10, 0.0, 10), kTracesDir, nullptr);
  EXPECT_EQ(requests.status().message(),
            "--bench: --random-input-len: 1 with --random-range-ratio 0 allows prompts of 0 "
            "tokens (vLLM reserves 1 for the BOS)");
  // real 9, floor(9 * 0.1) = 0.
  EXPECT_FALSE(SampleRequests(RandomConfig(10, 10, 0.9, 10), kTracesDir, nullptr).ok());
  // The ratio as given, not rounded to six digits (where it would read as 1).
  EXPECT_EQ(
      SampleRequests(RandomConfig(100, 10, 0.9999999, 10), kTracesDir, nullptr).status().message(),
      "--bench: --random-input-len: 100 with --random-range-ratio 0.9999999 allows "
      "prompts of 0 tokens (vLLM reserves 1 for the BOS)");
  BenchConfig with_prefix = RandomConfig(10, 10, 0.9, 10);
  with_prefix.random_prefix_len = 1;
  EXPECT_TRUE(SampleRequests(with_prefix, kTracesDir, nullptr).ok());
}

TEST(RandomDatasetTest, SameSeedSameRequestsOtherSeedOthers) {
  BenchConfig config = RandomConfig(1024, 128, 0.5, 100);
  auto a = SampleRequests(config, kTracesDir, nullptr);
  auto b = SampleRequests(config, kTracesDir, nullptr);
  config.seed = 43;
  auto c = SampleRequests(config, kTracesDir, nullptr);
  ASSERT_TRUE(a.ok() && b.ok() && c.ok());
  int same_ab = 0, same_ac = 0;
  for (int i = 0; i < 100; ++i) {
    same_ab += (*a)[i].prompt_tokens == (*b)[i].prompt_tokens;
    same_ac += (*a)[i].prompt_tokens == (*c)[i].prompt_tokens;
  }
  EXPECT_EQ(same_ab, 100);
  EXPECT_LT(same_ac, 10);  // 1025 possible values: ~0.1 coincidences expected
}

BenchConfig SharegptConfig(int64_t n) {
  BenchConfig config;
  config.dataset_name = DatasetName::kSharegpt;
  config.num_prompts = n;
  return config;
}

// A folder of this test's own for the files it writes (ctest runs each test as its own process,
// in parallel, and /tmp may hold a real ShareGPT_V3_unfiltered_cleaned_split.json).
std::string TestTempDir() {
  const std::string dir = ScratchPathForTest("files");
  std::filesystem::create_directories(dir);
  return dir;
}

// Writes a ShareGPT length table of `rows` into TestTempDir() and returns the folder, to pass as
// SampleRequests' traces dir.
std::string WriteSharegptTable(const std::string& rows) {
  const std::string dir = TestTempDir();
  std::ofstream(dir + "/" + kSharegptTableFile)
      << "prompt_tokens,completion_tokens,output_tokens\n"
      << rows;
  return dir;
}

// Rows on both sides of each bound of vLLM's ShareGPT filter (engine-defaults.md B1.6, with
// --sharegpt-output-len unset: drop if prompt_len < 4, output_len < 4, prompt_len > 1024 or
// prompt_len + output_len > 2048). The filter reads the completion column: the output column is
// where EOS ends the reply.
constexpr char kFilterBoundaryRows[] =
    "3,100,50\n"        // prompt 3 < 4: dropped
    "10,3,3\n"          // completion 3 < 4: dropped
    "1025,10,10\n"      // prompt 1025 > 1024: dropped
    "1000,1049,700\n"   // 2049 in all > 2048: dropped
    "1024,1024,1000\n"  // prompt 1024 and 2048 in all, both at the bound: kept
    "4,4,2\n"           // prompt and completion 4, at the minimum: kept
    "100,200,150\n";    // kept

// vLLM's is_valid_sequence (engine-defaults.md B1.6) drops below 4 and above 1024 / 2048, so 4,
// 1024 and a 2048 total are kept; a fixed --sharegpt-output-len skips only the output minimum
// (B1.5).
TEST(SharegptFilterTest, KeepsExactlyTheLengthsVllmKeeps) {
  EXPECT_FALSE(PassesSharegptFilter(3, 100, false));
  EXPECT_TRUE(PassesSharegptFilter(4, 100, false));
  EXPECT_FALSE(PassesSharegptFilter(100, 3, false));
  EXPECT_TRUE(PassesSharegptFilter(100, 4, false));
  EXPECT_TRUE(PassesSharegptFilter(1024, 4, false));
  EXPECT_FALSE(PassesSharegptFilter(1025, 4, false));
  EXPECT_TRUE(PassesSharegptFilter(1000, 1048, false));
  EXPECT_FALSE(PassesSharegptFilter(1000, 1049, false));
  EXPECT_TRUE(PassesSharegptFilter(1024, 1024, false));
  EXPECT_FALSE(PassesSharegptFilter(1024, 1025, false));
  // A fixed output length lifts the output minimum only.
  EXPECT_TRUE(PassesSharegptFilter(100, 3, true));
  EXPECT_TRUE(PassesSharegptFilter(100, 1, true));
  EXPECT_FALSE(PassesSharegptFilter(3, 100, true));
  EXPECT_FALSE(PassesSharegptFilter(1025, 4, true));
  EXPECT_FALSE(PassesSharegptFilter(1024, 1025, true));
}

TEST(SharegptDatasetTest, ThousandPromptsLandOnTheLiveTotals) {
  std::string notice;
  auto requests = SampleRequests(SharegptConfig(1000), kTracesDir, &notice);
  ASSERT_TRUE(requests.ok()) << requests.status();
  ASSERT_EQ(requests->size(), 1000u);
  // Live runs (shared/validation): 219,111 input tokens, about 197k output.
  EXPECT_NEAR(SumPrompt(*requests), 219111, 0.03 * 219111);
  EXPECT_NEAR(SumOutput(*requests), 197000, 0.05 * 197000);
  // traces/make_sharegpt_lengths.py --check replays this sampler in Python and
  // prints these sums; equality shows the two implementations agree.
  EXPECT_EQ(SumPrompt(*requests), 219174);
  EXPECT_EQ(SumOutput(*requests), 197283);
  EXPECT_NE(notice.find("sharegpt_v3_first_turn_lengths.csv"), std::string::npos);
}

TEST(SharegptDatasetTest, EveryRequestPassesVllmFilters) {
  auto requests = SampleRequests(SharegptConfig(1000), kTracesDir, nullptr);
  ASSERT_TRUE(requests.ok());
  int64_t max_prompt = 0;
  for (size_t i = 0; i < requests->size(); ++i) {
    const auto& r = (*requests)[i];
    EXPECT_EQ(r.id, static_cast<int64_t>(i));
    EXPECT_GE(r.prompt_tokens, 4);
    // The filter sees the completion (>= 4), which every reply writes out.
    EXPECT_GE(r.output_tokens, 4);
    EXPECT_EQ(r.output_tokens, r.max_completion_tokens);
    EXPECT_LE(r.prompt_tokens, 1024);
    EXPECT_LE(r.prompt_tokens + r.output_tokens, 2048);
    max_prompt = std::max(max_prompt, r.prompt_tokens);
  }
  // Heavy-tailed prompts: some reach the upper filter's neighbourhood.
  EXPECT_GT(max_prompt, 800);
}

TEST(SharegptDatasetTest, OutputsKeepALongTailBelowTheCompletionCap) {
  auto requests = SampleRequests(SharegptConfig(1000), kTracesDir, nullptr);
  ASSERT_TRUE(requests.ok());
  std::vector<int64_t> outputs;
  for (const auto& r : *requests) outputs.push_back(r.output_tokens);
  std::sort(outputs.begin(), outputs.end());
  // traces/make_sharegpt_lengths.py --stats: median 145, p99 755, max 968. A
  // mean-197 table without a tail (the old x0.423 scaling) had max 432.
  EXPECT_EQ(outputs[499], 145);
  EXPECT_EQ(outputs[989], 755);
  EXPECT_EQ(outputs.back(), 968);
  // vLLM's output >= 4 filter sees the completion, which is the reply.
  EXPECT_GE(outputs.front(), 4);
  // The completion cap: the dataset's replies are at most 1024 Llama-2 tokens.
  EXPECT_LE(outputs.back(), 1024);
}

TEST(SharegptDatasetTest, ShippedTableRepliesEndAtTheirCompletion) {
  auto table = ReadSharegptTable(kTracesDir + "/" + kSharegptTableFile);
  ASSERT_TRUE(table.ok()) << table.status();
  // The live runs' output totals agree to 0.15 % across engines and layouts:
  // replies end at max_completion_tokens, not at a sampled EOS
  // (traces/README.md), so the shipped table's output is its completion.
  for (const auto& row : *table) EXPECT_EQ(row.output_tokens, row.completion_tokens);
}

TEST(SharegptDatasetTest, SameSeedSameRequestsOtherSeedOthers) {
  BenchConfig config = SharegptConfig(200);
  auto a = SampleRequests(config, kTracesDir, nullptr);
  auto b = SampleRequests(config, kTracesDir, nullptr);
  config.seed = 1;
  auto c = SampleRequests(config, kTracesDir, nullptr);
  ASSERT_TRUE(a.ok() && b.ok() && c.ok());
  int same_ab = 0, same_ac = 0;
  for (int i = 0; i < 200; ++i) {
    same_ab += (*a)[i].prompt_tokens == (*b)[i].prompt_tokens &&
               (*a)[i].output_tokens == (*b)[i].output_tokens;
    same_ac += (*a)[i].prompt_tokens == (*c)[i].prompt_tokens &&
               (*a)[i].output_tokens == (*c)[i].output_tokens;
  }
  EXPECT_EQ(same_ab, 200);
  EXPECT_LT(same_ac, 20);
}

// In file order, the first three rows the filter keeps are the 5th to 7th of
// kFilterBoundaryRows, each with its reply as EOS cut it and its completion as the cap.
TEST(SharegptDatasetTest, DisableShuffleKeepsFileOrder) {
  BenchConfig config = SharegptConfig(3);
  config.disable_shuffle = true;
  auto requests = SampleRequests(config, WriteSharegptTable(kFilterBoundaryRows), nullptr);
  ASSERT_TRUE(requests.ok()) << requests.status();
  ASSERT_EQ(requests->size(), 3u);
  const int64_t expected[3][3] = {{1024, 1000, 1024}, {4, 2, 4}, {100, 150, 200}};
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ((*requests)[i].prompt_tokens, expected[i][0]) << i;
    EXPECT_EQ((*requests)[i].output_tokens, expected[i][1]) << i;
    EXPECT_EQ((*requests)[i].max_completion_tokens, expected[i][2]) << i;
  }
}

TEST(SharegptDatasetTest, IgnoreEosGeneratesEveryCompletionInFull) {
  // A table whose replies stop at EOS before their completion (the 5th and
  // 6th rows of kFilterBoundaryRows).
  BenchConfig config = SharegptConfig(3);
  config.disable_shuffle = true;
  const std::string dir = WriteSharegptTable(kFilterBoundaryRows);
  auto eos = SampleRequests(config, dir, nullptr);
  config.ignore_eos = true;
  auto full = SampleRequests(config, dir, nullptr);
  ASSERT_TRUE(eos.ok() && full.ok());
  ASSERT_EQ(eos->size(), full->size());
  int64_t cut_by_eos = 0;
  for (size_t i = 0; i < full->size(); ++i) {
    // The same prompts are drawn; only where generation stops changes.
    EXPECT_EQ((*full)[i].prompt_tokens, (*eos)[i].prompt_tokens);
    EXPECT_EQ((*full)[i].output_tokens, (*full)[i].max_completion_tokens);
    cut_by_eos += (*eos)[i].output_tokens < (*eos)[i].max_completion_tokens;
  }
  EXPECT_EQ(cut_by_eos, 3);
  EXPECT_EQ(SumOutput(*full) - SumOutput(*eos), (1024 - 1000) + (4 - 2) + (200 - 150));
}

TEST(SharegptDatasetTest, FixedOutputLengthSkipsTheMinimumButNotTheTotal) {
  BenchConfig config = SharegptConfig(300);
  config.sharegpt_output_len = 2;  // below the minimum of 4: allowed when fixed
  auto requests = SampleRequests(config, kTracesDir, nullptr);
  ASSERT_TRUE(requests.ok());
  for (const auto& r : *requests) EXPECT_EQ(r.output_tokens, 2);
  config.sharegpt_output_len = 1500;  // prompt <= 548 to keep the sum <= 2048
  requests = SampleRequests(config, kTracesDir, nullptr);
  ASSERT_TRUE(requests.ok());
  for (const auto& r : *requests) EXPECT_LE(r.prompt_tokens, 548);
}

// With --sharegpt-output-len 1025 the filter sees 1025 for every row: the completion-3 row now
// passes (no output minimum), prompt 3 and 1025 still drop, and prompt 1024 drops on 2049 in all
// while prompt 1000 (2025) passes.
TEST(SharegptDatasetTest, FixedOutputLengthFiltersTheBoundaryRows) {
  BenchConfig config = SharegptConfig(100);
  config.sharegpt_output_len = 1025;
  config.disable_shuffle = true;
  config.no_oversample = true;
  auto requests = SampleRequests(config, WriteSharegptTable(kFilterBoundaryRows), nullptr);
  ASSERT_TRUE(requests.ok()) << requests.status();
  std::vector<int64_t> prompts;
  for (const auto& r : *requests) {
    prompts.push_back(r.prompt_tokens);
    EXPECT_EQ(r.output_tokens, 1025);
  }
  EXPECT_EQ(prompts, (std::vector<int64_t>{10, 1000, 4, 100}));
}

// Three rows of kFilterBoundaryRows pass; vLLM fills 8 prompts by drawing from those three.
TEST(SharegptDatasetTest, OversamplesWithReplacementUnlessToldNot) {
  const std::string dir = WriteSharegptTable(kFilterBoundaryRows);
  BenchConfig config = SharegptConfig(8);
  std::string notice;
  auto requests = SampleRequests(config, dir, &notice);
  ASSERT_TRUE(requests.ok()) << requests.status();
  ASSERT_EQ(requests->size(), 8u);
  const std::set<std::pair<int64_t, int64_t>> passing = {{1024, 1000}, {4, 2}, {100, 150}};
  std::set<std::pair<int64_t, int64_t>> first_three;
  for (size_t i = 0; i < requests->size(); ++i) {
    const BenchRequest& r = (*requests)[i];
    EXPECT_EQ(r.id, static_cast<int64_t>(i));
    EXPECT_EQ(passing.count({r.prompt_tokens, r.output_tokens}), 1u) << r.prompt_tokens;
    if (i < 3) first_three.insert({r.prompt_tokens, r.output_tokens});
  }
  EXPECT_EQ(first_three, passing);
  EXPECT_NE(notice.find("only 3 rows pass, oversampled to 8"), std::string::npos) << notice;
  config.no_oversample = true;
  requests = SampleRequests(config, dir, &notice);
  ASSERT_TRUE(requests.ok()) << requests.status();
  EXPECT_EQ(requests->size(), 3u);
  EXPECT_NE(notice.find("only 3 rows pass, --no-oversample: sending 3"), std::string::npos)
      << notice;
}

TEST(SharegptDatasetTest, ExistingShareGptJsonIsReportedAsNotRead) {
  const std::string path = TestTempDir() + "/ShareGPT_V3_unfiltered_cleaned_split.json";
  std::ofstream(path) << "[]";
  BenchConfig config = SharegptConfig(10);
  config.dataset_path = path;
  std::string notice;
  ASSERT_TRUE(SampleRequests(config, kTracesDir, &notice).ok());
  EXPECT_NE(notice.find("exists but is not read (no tokenizer)"), std::string::npos);
}

TEST(SharegptDatasetTest, MalformedTableRowNamesTheLine) {
  const std::string dir = WriteSharegptTable("10,20,5\n5,x,3\n");
  auto requests = SampleRequests(SharegptConfig(1), dir, nullptr);
  ASSERT_FALSE(requests.ok());
  EXPECT_NE(requests.status().message().find(":3: expected three integers"), std::string::npos)
      << requests.status();
  // A reply longer than max_completion_tokens cannot be generated.
  WriteSharegptTable("10,20,5\n5,30,31\n");  // the same folder, rewritten
  requests = SampleRequests(SharegptConfig(1), dir, nullptr);
  ASSERT_FALSE(requests.ok());
  EXPECT_NE(requests.status().message().find(":3: output_tokens 31 exceeds completion_tokens 30"),
            std::string::npos)
      << requests.status();
  EXPECT_FALSE(SampleRequests(SharegptConfig(1), dir + "/missing", nullptr).ok());
}

TEST(TraceDatasetTest, TakesTheFirstRowsOrAllWithoutNumPrompts) {
  const std::string path = TestTempDir() + "/small_trace.csv";
  std::ofstream(path) << "arrival_s,input_tokens,output_tokens\n5.0,100,10\n5.5,200,20\n7,300,30\n";
  BenchConfig config;
  config.dataset_name = DatasetName::kTrace;
  config.dataset_path = path;
  auto all = SampleRequests(config, kTracesDir, nullptr);
  ASSERT_TRUE(all.ok()) << all.status();
  ASSERT_EQ(all->size(), 3u);
  EXPECT_EQ((*all)[2].prompt_tokens, 300);
  EXPECT_EQ((*all)[2].output_tokens, 30);
  EXPECT_EQ((*all)[1].arrival_offset_ns, 500'000'000);
  EXPECT_EQ((*all)[2].arrival_offset_ns, 2'000'000'000);
  config.num_prompts = 2;
  config.num_prompts_given = true;
  auto two = SampleRequests(config, kTracesDir, nullptr);
  ASSERT_TRUE(two.ok());
  EXPECT_EQ(two->size(), 2u);
  config.num_prompts = 4;
  auto too_many = SampleRequests(config, kTracesDir, nullptr);
  ASSERT_FALSE(too_many.ok());
  EXPECT_NE(too_many.status().message().find("--num-prompts: 4 but"), std::string::npos);
}

TEST(TraceDatasetTest, ALengthTableIsShuffledWithTheSeedUnlessDisabled) {
  const std::string path = TestTempDir() + "/lengths.csv";
  {
    std::ofstream out(path);
    out << "num_prefill_tokens,num_decode_tokens,num_total_tokens,pd_ratio\n";
    for (int i = 1; i <= 100; ++i) out << i << "," << 1000 + i << "," << 1000 + 2 * i << ",0.1\n";
  }
  BenchConfig config;
  config.dataset_name = DatasetName::kTrace;
  config.dataset_path = path;
  config.num_prompts = 10;
  config.num_prompts_given = true;
  config.seed = 3;
  std::string notice;
  auto shuffled = SampleRequests(config, kTracesDir, &notice);
  ASSERT_TRUE(shuffled.ok()) << shuffled.status();
  ASSERT_EQ(shuffled->size(), 10u);
  bool file_order = true;
  for (size_t i = 0; i < shuffled->size(); ++i) {
    const BenchRequest& r = (*shuffled)[i];
    EXPECT_TRUE(r.trace_without_arrivals);
    EXPECT_EQ(r.output_tokens, 1000 + r.prompt_tokens);  // rows stay whole
    file_order = file_order && r.prompt_tokens == static_cast<int64_t>(i) + 1;
  }
  EXPECT_FALSE(file_order);
  EXPECT_NE(notice.find("shuffle seed 3"), std::string::npos) << notice;
  auto again = SampleRequests(config, kTracesDir, nullptr);
  ASSERT_TRUE(again.ok());
  for (size_t i = 0; i < again->size(); ++i) {
    EXPECT_EQ((*again)[i].prompt_tokens, (*shuffled)[i].prompt_tokens);
  }
  config.disable_shuffle = true;
  auto ordered = SampleRequests(config, kTracesDir, nullptr);
  ASSERT_TRUE(ordered.ok());
  for (size_t i = 0; i < ordered->size(); ++i) {
    EXPECT_EQ((*ordered)[i].prompt_tokens, static_cast<int64_t>(i) + 1);
  }
}

TEST(TraceDatasetTest, ReplaysTheAzureConversationTrace) {
  BenchConfig config;
  config.dataset_name = DatasetName::kTrace;
  config.dataset_path = std::string(SERVESIM_SHARED_DIR) + "/traces/AzureLLMInferenceTrace_conv.csv";
  std::string notice;
  auto requests = SampleRequests(config, kTracesDir, &notice);
  ASSERT_TRUE(requests.ok()) << requests.status();
  ASSERT_EQ(requests->size(), 19366u);  // SOURCES.md
  EXPECT_EQ(requests->front().prompt_tokens, 374);
  EXPECT_EQ(requests->front().output_tokens, 44);
  // 19:14:08.4025270 - 18:15:46.6805900 = 3501.7219370 s.
  EXPECT_EQ(requests->back().arrival_offset_ns, 3'501'721'937'000);
  EXPECT_NE(notice.find("azure-csv"), std::string::npos);
}

// Mooncake's hash_ids become prefix chains: 512-token nodes, the last what
// the prompt has left; the first two conversations share block 0.
TEST(TraceDatasetTest, MooncakeHashIdsBecomePrefixChains) {
  BenchConfig config;
  config.dataset_name = DatasetName::kTrace;
  config.dataset_path =
      std::string(SERVESIM_SHARED_DIR) + "/traces/mooncake_conversation_trace.jsonl";
  config.num_prompts = 2;
  config.num_prompts_given = true;
  std::string notice;
  auto requests = SampleRequests(config, kTracesDir, &notice);
  ASSERT_TRUE(requests.ok()) << requests.status();
  const BenchRequest& first = requests->front();
  EXPECT_EQ(first.prompt_tokens, 6758);
  ASSERT_EQ(first.prefix_node_keys.size(), 14u);  // ceil(6758 / 512)
  EXPECT_EQ(first.prefix_node_tokens.front(), 512);
  EXPECT_EQ(first.prefix_node_tokens.back(), 6758 - 13 * 512);
  EXPECT_EQ((*requests)[1].prefix_node_keys.front(), first.prefix_node_keys.front());
  EXPECT_NE((*requests)[1].prefix_node_keys[1], first.prefix_node_keys[1]);
  EXPECT_NE(notice.find("hash_ids name shared 512-token prefix blocks"), std::string::npos);
}

}  // namespace
}  // namespace servesim::workload
