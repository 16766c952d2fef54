#include "sim/fit/live_runs.h"

#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>

#include "absl/strings/str_cat.h"
#include "base/scratch_path_for_test.h"
#include "sim/workload/command_line.h"

namespace servesim::fit {
namespace {

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

std::filesystem::path TempPath(const std::string& name) { return ScratchPathForTest(name); }

// Writes `text` to TempPath(name); returns its path.
std::string WriteTemp(const std::string& name, const std::string& text) {
  const std::string path = TempPath(name).string();
  std::ofstream(path, std::ios::binary) << text;
  return path;
}

constexpr char kHeader[] =
    "case,engine,env,serve_command,bench_command,completed,total_token_throughput,mean_ttft_ms\n";
constexpr char kCommands[] = "vllm,,vllm serve m -tp 8,vllm bench serve --num-prompts 100";

// `case,engine,...,completed,total_token_throughput,mean_ttft_ms` with one
// row of the given figures.
std::string OneRun(const std::string& figures) {
  return std::string(kHeader) + "a," + kCommands + "," + figures + "\n";
}

std::string ErrorOf(const absl::StatusOr<std::vector<LiveRun>>& runs) {
  return runs.ok() ? "ok" : std::string(runs.status().message());
}

// nan and inf once reached `fit`'s optimiser and crashed it; a negative time
// or a word is no measurement either. The error names file, case and column.
TEST(ReadLiveRunsTest, AFigureMustBeAFiniteNumberAtLeastZero) {
  for (const char* bad : {"nan", "inf", "-inf", "abc", "-5", "1e999"}) {
    const std::string path = WriteTemp("bad.csv", OneRun(absl::StrCat("100,", bad, ",250")));
    const std::string error = ErrorOf(ReadLiveRuns(path));
    EXPECT_NE(error.find(absl::StrCat("--runs: ", path, ": case a: total_token_throughput: "
                                      "expected a finite number >= 0, got ")),
              std::string::npos)
        << bad << ": " << error;
  }
  for (const char* bad : {"abc", "-1"}) {
    const std::string error =
        ErrorOf(ReadLiveRuns(WriteTemp("bad.csv", OneRun(absl::StrCat(bad, ",5000,250")))));
    EXPECT_NE(error.find("case a: completed: expected"), std::string::npos) << error;
  }
}

// An empty cell, or no column at all, is a figure that was not measured: left
// out of the run's figures (and so of the comparison and the fit).
TEST(ReadLiveRunsTest, AnEmptyCellOrAMissingColumnIsNotMeasured) {
  absl::StatusOr<std::vector<LiveRun>> runs =
      ReadLiveRuns(WriteTemp("partial.csv", OneRun("100,,250")));
  ASSERT_TRUE(runs.ok()) << runs.status();
  EXPECT_EQ(runs->front().measured,
            (std::map<std::string, double>{{"completed", 100}, {"mean_ttft_ms", 250}}));
  runs = ReadLiveRuns(WriteTemp(
      "columns.csv", absl::StrCat("case,serve_command,bench_command,mean_ttft_ms\n"
                                  "a,vllm serve m,vllm bench serve,250\n")));
  ASSERT_TRUE(runs.ok()) << runs.status();
  EXPECT_EQ(runs->front().measured, (std::map<std::string, double>{{"mean_ttft_ms", 250}}));
}

TEST(ReadLiveRunsTest, NeedsRunsWithOneNonEmptyNameEach) {
  EXPECT_NE(ErrorOf(ReadLiveRuns(WriteTemp("header.csv", kHeader))).find("header.csv has a "
                                                                         "header but no runs"),
            std::string::npos);
  const std::string twice = OneRun("100,5000,250") + "a," + kCommands + ",100,5100,260\n";
  EXPECT_NE(ErrorOf(ReadLiveRuns(WriteTemp("twice.csv", twice))).find("case a is in rows 2 and 3"),
            std::string::npos);
  const std::string unnamed = absl::StrCat(kHeader, ",", kCommands, ",100,5000,250\n");
  EXPECT_NE(ErrorOf(ReadLiveRuns(WriteTemp("unnamed.csv", unnamed))).find("row 2: empty `case`"),
            std::string::npos);
}

TEST(ReadLiveRunsTest, TheEngineColumnNamesTheServeCommandsEngine) {
  auto with_engine = [](const std::string& engine, const std::string& serve) {
    return ErrorOf(ReadLiveRuns(WriteTemp(
        "engine.csv", absl::StrCat(kHeader, "a,", engine, ",,", serve,
                                   ",vllm bench serve --num-prompts 100,100,5000,250\n"))));
  };
  EXPECT_EQ(with_engine("sglang", "python3 -m sglang.launch_server --model-path m"), "ok");
  EXPECT_EQ(with_engine("trtllm", "trtllm-serve m --tp_size 8"), "ok");
  EXPECT_NE(with_engine("sglang", "vllm serve m -tp 8")
                .find("case a: engine: 'sglang' but serve_command is a vllm command"),
            std::string::npos);
  // Another spelling of a name is a label; the serve command decides.
  EXPECT_EQ(with_engine("TensorRT-LLM", "trtllm-serve m --tp_size 8"), "ok");
}

// Hexadecimal (C's strtod reads it, Python's float does not) is not a
// figure; a column named twice, or a case named by blanks, is ambiguous.
TEST(ReadLiveRunsTest, RefusesHexFiguresTwiceNamedColumnsAndBlankCases) {
  EXPECT_NE(ErrorOf(ReadLiveRuns(WriteTemp(
                "hex.csv", "case,serve_command,bench_command,mean_ttft_ms\n"
                           "a,vllm serve m,vllm bench serve,0x10\n")))
                .find("mean_ttft_ms: expected a finite number >= 0, got '0x10'"),
            std::string::npos);
  EXPECT_NE(ErrorOf(ReadLiveRuns(WriteTemp(
                "twice_col.csv", "case,serve_command,bench_command,duration_s,duration_s\n"
                                 "a,vllm serve m,vllm bench serve,10,20\n")))
                .find("column `duration_s` appears twice"),
            std::string::npos);
  EXPECT_NE(ErrorOf(ReadLiveRuns(WriteTemp(
                "blank.csv", "case,serve_command,bench_command,duration_s\n"
                             "  ,vllm serve m,vllm bench serve,10\n")))
                .find("empty `case`"),
            std::string::npos);
}

// A column vllm bench serve does not print (a date, a note) is ignored,
// whatever it holds; one it prints must hold a figure.
TEST(ReadLiveRunsTest, TextInAColumnOfItsOwnIsIgnored) {
  absl::StatusOr<std::vector<LiveRun>> runs = ReadLiveRuns(WriteTemp(
      "notes.csv", "case,serve_command,bench_command,notes,mean_ttft_ms\n"
                   "a,vllm serve m,vllm bench serve,rerun after reboot,250\n"));
  ASSERT_TRUE(runs.ok()) << runs.status();
  EXPECT_EQ(runs->front().measured, (std::map<std::string, double>{{"mean_ttft_ms", 250}}));
  EXPECT_NE(ErrorOf(ReadLiveRuns(WriteTemp(
                        "p99.csv", "case,serve_command,bench_command,p99_itl_ms\n"
                                   "a,vllm serve m,vllm bench serve,fast\n")))
                .find("p99_itl_ms: expected a finite number >= 0, got 'fast'"),
            std::string::npos);
}

// A bad cell names its file, case and column; a directory named as a results
// file is said to be one, not read as an empty file.
TEST(ReadLiveRunsTest, BadEnvCellAndADirectoryAreNamed) {
  const std::string env = ErrorOf(ReadLiveRuns(WriteTemp(
      "env.csv", "case,serve_command,bench_command,env,mean_ttft_ms\n"
                 "a,vllm serve m,vllm bench serve,FOO,250\n")));
  EXPECT_NE(env.find("env.csv: case a: env: expected KEY=VALUE, got \"FOO\""), std::string::npos)
      << env;
  const std::string dir = TempPath("runs_dir").string();
  std::filesystem::create_directories(dir + "/x.csv");
  const std::string read = ErrorOf(ReadLiveRunsFrom(dir));
  EXPECT_NE(read.find("x.csv: not a readable file (a directory)"), std::string::npos) << read;
}

// Spreadsheet programs write a UTF-8 byte-order mark before the header.
TEST(ReadLiveRunsTest, SkipsALeadingByteOrderMark) {
  absl::StatusOr<std::vector<LiveRun>> runs =
      ReadLiveRuns(WriteTemp("bom.csv", "\xEF\xBB\xBF" + OneRun("100,5000,250")));
  ASSERT_TRUE(runs.ok()) << runs.status();
  EXPECT_EQ(runs->front().name, "a");
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

// A '#' inside quotes is a character of a word, not a comment: the words
// after it stay in the command.
TEST(ParseRunCommandsTest, AQuotedHashIsNoComment) {
  absl::StatusOr<RunCommands> c = ParseRunCommands(
      "vllm serve m -tp 8  # run #3\n"
      "vllm bench serve --label '#3' --num-prompts 10 # ten\n");
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->serve_command, "vllm serve m -tp 8");
  EXPECT_EQ(c->bench_command, "vllm bench serve --label '#3' --num-prompts 10");
}

// As a script saved by an editor and run by a shell: a byte-order mark
// first, the server started in the background.
TEST(ParseRunCommandsTest, TakesAByteOrderMarkAndABackgroundServer) {
  absl::StatusOr<RunCommands> c = ParseRunCommands(
      "\xEF\xBB\xBFvllm serve m -tp 8 &\n"
      "vllm bench serve --num-prompts 10\n");
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->serve_command, "vllm serve m -tp 8");
  EXPECT_EQ(c->bench_command, "vllm bench serve --num-prompts 10");
}

TEST(ParseRunCommandsTest, NeedsOneServeAndOneBenchCommandAndNothingElse) {
  EXPECT_EQ(std::string(ParseRunCommands("vllm serve m -tp 8\n").status().message()),
            "needs one serve command and one `vllm bench serve` command, has 1 and 0");
  EXPECT_EQ(std::string(ParseRunCommands("vllm bench serve --num-prompts 5\n").status().message()),
            "needs one serve command and one `vllm bench serve` command, has 0 and 1");
  EXPECT_EQ(std::string(
                ParseRunCommands("vllm serve m\ntrtllm-serve m\nvllm bench serve\n").status().message()),
            "needs one serve command and one `vllm bench serve` command, has 2 and 1");
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
  const std::filesystem::path dir = TempPath("confirmation");
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
  write("a.json",
        "{\"completed\": 500, \"duration\": 119.5, \"total_token_throughput\": 8790.1, "
        "\"input_lens\": [7, 9], \"output_lens\": [3, 0]}");
  write("a.log", block);
  write("b.cmd", "trtllm-serve m --tp_size 8\nvllm bench serve --num-prompts 500\n");
  write("b.txt", "INFO starting\n" + block);
  write("notes.md", "not a result");
  absl::StatusOr<std::vector<LiveRun>> runs = ReadLiveRunsFrom(dir.string());
  ASSERT_TRUE(runs.ok()) << runs.status();
  ASSERT_EQ(runs->size(), 2u);
  EXPECT_EQ((*runs)[0].name, "a");
  EXPECT_DOUBLE_EQ((*runs)[0].measured.at("total_token_throughput"), 8790.1);
  EXPECT_EQ((*runs)[0].input_lens, (std::vector<int64_t>{7, 9}));
  EXPECT_EQ((*runs)[0].output_lens, (std::vector<int64_t>{3, 0}));
  EXPECT_TRUE((*runs)[1].output_lens.empty());  // a console log lists none
  EXPECT_EQ((*runs)[1].name, "b");
  EXPECT_EQ((*runs)[1].serve_command, "trtllm-serve m --tp_size 8");
  EXPECT_DOUBLE_EQ((*runs)[1].measured.at("duration"), 120.0);

  write("c.json", "{\"completed\": 1, \"duration\": 1.0}");
  absl::StatusOr<std::vector<LiveRun>> missing = ReadLiveRunsFrom(dir.string());
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("c.cmd"), std::string::npos) << missing.status();
  std::filesystem::remove(dir / "c.json");

  // The console log beside the JSON is read too: another run's counts, or no
  // report at all, are an error, not a file passed over.
  std::string other = block;
  other.replace(other.find("500 "), 4, "499 ");
  write("a.log", other);
  absl::StatusOr<std::vector<LiveRun>> disagree = ReadLiveRunsFrom(dir.string());
  ASSERT_FALSE(disagree.ok());
  EXPECT_NE(disagree.status().message().find("(one run, a) disagree on completed: 499 against 500"),
            std::string::npos)
      << disagree.status();
  write("a.log", "not a report\n");
  EXPECT_FALSE(ReadLiveRunsFrom(dir.string()).ok());
}

// vllm bench serve counts every request sent as completed or failed: a
// result whose two do not add up to --num-prompts is another run's.
TEST(ReadLiveRunsFromTest, CompletedAndFailedAddUpToNumPrompts) {
  const std::string header =
      "case,engine,env,serve_command,bench_command,num_prompts,completed,failed,"
      "total_token_throughput\n";
  const std::string row = std::string("a,") + kCommands + ",100,";
  EXPECT_EQ(ErrorOf(ReadLiveRunsFrom(WriteTemp("sum.csv", header + row + "95,5,5000\n"))), "ok");
  EXPECT_NE(ErrorOf(ReadLiveRunsFrom(WriteTemp("over.csv", header + row + "100,5,5000\n")))
                .find("case a: completed 100 and failed 5 requests are not its bench command's "
                      "--num-prompts 100"),
            std::string::npos)
      << ErrorOf(ReadLiveRunsFrom(WriteTemp("over.csv", header + row + "100,5,5000\n")));
}

// Fewer completed requests than --num-prompts are the failed ones; more, or a
// fraction of one, cannot come from that bench command.
TEST(ReadLiveRunsFromTest, CompletedIsAWholeNumberUpToNumPrompts) {
  EXPECT_EQ(ErrorOf(ReadLiveRunsFrom(WriteTemp("fewer.csv", OneRun("98,5000,250")))), "ok");
  EXPECT_NE(ErrorOf(ReadLiveRunsFrom(WriteTemp("more.csv", OneRun("101,5000,250"))))
                .find("more.csv: case a: completed: 101 is more than its bench command's "
                      "--num-prompts 100"),
            std::string::npos);
  EXPECT_NE(ErrorOf(ReadLiveRunsFrom(WriteTemp("part.csv", OneRun("99.5,5000,250"))))
                .find("case a: completed: expected a whole number of requests, got 99.5"),
            std::string::npos);
}

// Figures no run can report: token counts are whole, a duration of 0 cannot
// hold completed requests or a throughput. Each is named with its column.
TEST(ReadLiveRunsFromTest, RefusesFractionalTokensAndAZeroDurationThatDidWork) {
  const std::string header =
      "case,env,serve_command,bench_command,completed,duration_s,total_input_tokens,"
      "total_output_tokens,total_token_throughput\n";
  auto error_of = [&](const std::string& name, const std::string& figures) {
    return ErrorOf(ReadLiveRunsFrom(WriteTemp(
        name, header + "a,,vllm serve m -tp 8,vllm bench serve --num-prompts 100," + figures +
                  "\n")));
  };
  EXPECT_EQ(error_of("ok.csv", "100,10,2000,300,230"), "ok");
  EXPECT_NE(error_of("frac.csv", "100,10,2000.5,300,230")
                .find("frac.csv: case a: total_input_tokens: expected a whole number of tokens, "
                      "got 2000.5"),
            std::string::npos);
  EXPECT_NE(error_of("frac_out.csv", "100,10,2000,300.25,230")
                .find("case a: total_output_tokens: expected a whole number of tokens, got 300.25"),
            std::string::npos);
  EXPECT_NE(error_of("zero.csv", "100,0,2000,300,230")
                .find("zero.csv: case a: duration_s: 0 s, but completed is 100"),
            std::string::npos);
  EXPECT_NE(error_of("zero_rate.csv", "0,0,0,0,230")
                .find("case a: duration_s: 0 s, but total_token_throughput is 230"),
            std::string::npos);
  // Nothing completed, nothing moved: a duration of 0 says no more.
  EXPECT_EQ(error_of("idle.csv", "0,0,0,0,0"), "ok");
}

// vllm bench serve divides its counts by the duration to get its rates and
// reads its percentiles off one sorted list: a row breaking either has
// figures in the wrong columns. The report's two decimals are slack.
TEST(ReadLiveRunsFromTest, RatesAreCountsOverTheDurationAndPercentilesRise) {
  const std::string header =
      "case,env,serve_command,bench_command,completed,duration_s,total_input_tokens,"
      "total_output_tokens,request_throughput,output_throughput,total_token_throughput,"
      "median_ttft_ms,p99_ttft_ms\n";
  auto error_of = [&](const std::string& name, const std::string& figures) {
    return ErrorOf(ReadLiveRunsFrom(WriteTemp(
        name,
        header + "a,,vllm serve m -tp 8,vllm bench serve --num-prompts 1000," + figures + "\n")));
  };
  // The shared vllm-tp8-base row: every rate within rounding of its count.
  EXPECT_EQ(error_of("ok.csv", "1000,72.75,219111,196599,13.75,2702.26,5713.95,12849.39,22754.42"),
            "ok");
  // A short run: 0.37 s printed to two decimals moves a rate by up to 1.4 %.
  EXPECT_EQ(error_of("short.csv", "3,0.37,300,30,8.03,80.3,883.3,10,20"), "ok");
  EXPECT_NE(error_of("swapped.csv", "1000,72.75,219111,196599,13.75,5713.95,2702.26,1,2")
                .find("swapped.csv: case a: output_throughput: 5713.95, but total_output_tokens "
                      "/ duration_s is 2702.39"),
            std::string::npos);
  EXPECT_NE(error_of("req.csv", "1000,72.75,219111,196599,14.75,2702.26,5713.95,1,2")
                .find("case a: request_throughput: 14.75, but completed / duration_s is 13.75"),
            std::string::npos);
  EXPECT_NE(error_of("total.csv", "1000,72.75,219111,196599,13.75,2702.26,5750,1,2")
                .find("case a: total_token_throughput: 5750, but (total_input_tokens + "
                      "total_output_tokens) / duration_s is 5714.23"),
            std::string::npos);
  EXPECT_NE(error_of("pct.csv", "1000,72.75,219111,196599,13.75,2702.26,5713.95,22754.42,12849.39")
                .find("case a: p99_ttft_ms: 12849.39 is below median_ttft_ms: 22754.42"),
            std::string::npos);
}

// Figures no run can print together: a latency longer than the whole
// benchmark, a mean below half its median (half the values are at least
// the median, none below 0), a peak of requests in flight above those sent.
TEST(ReadLiveRunsFromTest, LatenciesFitTheDurationAndTheMeanItsMedian) {
  const std::string header =
      "case,env,serve_command,bench_command,completed,duration_s,mean_ttft_ms,median_ttft_ms,"
      "max_concurrent_requests\n";
  auto error_of = [&](const std::string& name, const std::string& figures) {
    return ErrorOf(ReadLiveRunsFrom(WriteTemp(
        name,
        header + "a,,vllm serve m -tp 8,vllm bench serve --num-prompts 1000," + figures + "\n")));
  };
  // vllm-tp8-base: mean 13054.56 ms, median 12849.39 ms in 72.75 s.
  EXPECT_EQ(error_of("latency_ok.csv", "1000,72.75,13054.56,12849.39,1000"), "ok");
  EXPECT_NE(error_of("latency_long.csv", "1000,72.75,1e308,12849.39,1000")
                .find("case a: mean_ttft_ms: 1e+308 ms is longer than the duration_s of 72.75 s"),
            std::string::npos)
      << error_of("latency_long.csv", "1000,72.75,1e308,12849.39,1000");
  EXPECT_NE(error_of("latency_mean.csv", "1000,72.75,1.5,12849.39,1000")
                .find("case a: mean_ttft_ms: 1.5 is below half of median_ttft_ms: 12849.39"),
            std::string::npos);
  EXPECT_NE(error_of("latency_peak.csv", "1000,72.75,13054.56,12849.39,99999")
                .find("case a: max_concurrent_requests: 99999, but the run sent 1000 requests"),
            std::string::npos);
  EXPECT_NE(error_of("latency_none.csv", "1000,72.75,13054.56,12849.39,0")
                .find("max_concurrent_requests: 0"),
            std::string::npos);
}

// A --save-result JSON's per-request lists are what its totals were summed
// from: output_lens to total_output_tokens; input_lens to total_input_tokens
// over the completed requests (a failed one lists its prompt and 0 tokens).
TEST(ReadLiveRunsFromTest, PerRequestListsMustAgreeWithTheTotals) {
  const std::filesystem::path dir = TempPath("lists");
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "r.cmd") << "vllm serve m -tp 8\nvllm bench serve --num-prompts 3\n";
  auto error_of = [&](const std::string& fields) {
    std::ofstream(dir / "r.json", std::ios::trunc)
        << "{\"completed\": 2, \"failed\": 1, \"duration\": 5.0, " << fields << "}";
    return ErrorOf(ReadLiveRunsFrom(dir.string()));
  };
  const std::string lists = "\"input_lens\": [100, 200, 400], \"output_lens\": [10, 0, 30]";
  EXPECT_EQ(error_of("\"total_input_tokens\": 500, \"total_output_tokens\": 40, " + lists),
            "ok");
  EXPECT_NE(error_of("\"total_input_tokens\": 500, \"total_output_tokens\": 41, " + lists)
                .find("r.json: case r: output_lens sum to 40 tokens, total_output_tokens is 41"),
            std::string::npos);
  EXPECT_NE(error_of("\"total_input_tokens\": 900, " + lists)
                .find("case r: total_input_tokens: 900 is more than input_lens' sum 700 over "
                      "every request"),
            std::string::npos);
  EXPECT_NE(error_of("\"total_input_tokens\": 499, " + lists)
                .find("case r: total_input_tokens: 499 is less than the 500 tokens input_lens "
                      "lists for the requests that generated some"),
            std::string::npos);
  EXPECT_NE(error_of("\"input_lens\": [100, 200, 400], \"output_lens\": [0, 0, 0]")
                .find("case r: output_lens are all 0, but completed is 2"),
            std::string::npos);
  EXPECT_NE(error_of("\"output_lens\": [1, 2, 3]")
                .find("case r: output_lens: 3 requests generated tokens, but completed is 2"),
            std::string::npos);
  EXPECT_NE(error_of("\"input_lens\": [100, 200], \"output_lens\": [10, 0, 30]")
                .find("case r: input_lens lists 2 requests, output_lens 3"),
            std::string::npos);
}

// A run's own result file: the same rules for its figures, and no case name
// shared with another file of the directory.
TEST(ReadLiveRunsFromTest, ResultFilesNeedFiniteFiguresAndTheirOwnCaseNames) {
  const std::filesystem::path dir = TempPath("bad_results");
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  auto write = [&](const std::string& name, const std::string& text) {
    std::ofstream(dir / name) << text;
  };
  auto error_of = [&] { return ErrorOf(ReadLiveRunsFrom(dir.string())); };
  write("r.cmd", "vllm serve m -tp 8\nvllm bench serve --num-prompts 100\n");
  write("r.json", "{\"completed\": -1, \"duration\": 10.0}");
  EXPECT_NE(error_of().find("r.json: completed: expected a finite number >= 0, got -1"),
            std::string::npos)
      << error_of();
  write("r.json", "{\"completed\": 100, \"duration\": NaN}");
  EXPECT_NE(error_of().find("r.json: the result JSON's \"duration\" is not a finite number: NaN"),
            std::string::npos)
      << error_of();
  write("r.json", "{\"completed\": 100, \"duration\": 10.0}");
  EXPECT_EQ(error_of(), "ok");
  std::filesystem::remove(dir / "r.json");
  const std::string report =
      "============ Serving Benchmark Result ============\n"
      "Successful requests:                     100       \n"
      "Benchmark duration (s):                  10.00     \n"
      "Mean TTFT (ms):                          FIGURE    \n"
      "==================================================\n";
  for (const char* bad : {"nan", "-12.50"}) {
    std::string text = report;
    text.replace(text.find("FIGURE"), 6, bad);
    write("r.log", text);
    EXPECT_NE(error_of().find("r.log: mean_ttft_ms: expected a finite number >= 0, got"),
              std::string::npos)
        << error_of();
  }
  std::string text = report;
  write("r.log", text.replace(text.find("FIGURE"), 6, "250.00"));
  EXPECT_EQ(error_of(), "ok");
  write("runs.csv", OneRun("100,5000,250").replace(std::strlen(kHeader), 1, "r"));
  EXPECT_NE(error_of().find("case r is in both"), std::string::npos) << error_of();
}

}  // namespace
}  // namespace servesim::fit
