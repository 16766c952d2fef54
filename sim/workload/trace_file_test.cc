#include "sim/workload/trace_file.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"

namespace servesim::workload {
namespace {

const std::string kShared = std::string(SERVESIM_SHARED_DIR) + "/traces/";

TEST(ParseDateTimeNsTest, MatchesHandComputedEpochOffsets) {
  EXPECT_EQ(*ParseDateTimeNs("1970-01-01 00:00:00"), 0);
  EXPECT_EQ(*ParseDateTimeNs("1970-01-02 00:00:01.5"), 86'401'500'000'000);
  // Python: datetime(2023,11,16,18,15,46,680590) - epoch = 1700158546 s + 680590 us.
  EXPECT_EQ(*ParseDateTimeNs("2023-11-16 18:15:46.6805900"), 1'700'158'546'680'590'000);
  // Leap day: 2024-03-01 is 2024-02-28 plus two days.
  EXPECT_EQ(*ParseDateTimeNs("2024-03-01 00:00:00") - *ParseDateTimeNs("2024-02-28 00:00:00"),
            2 * 86'400'000'000'000);
}

TEST(ParseDateTimeNsTest, RejectsMalformedStamps) {
  for (const char* bad : {"2023-11-16", "2023-11-16T18:15:46", "2023-13-01 00:00:00",
                          "2023-11-16 18:15:4x", "2023-11-16 18:15:46.1234567890",
                          // No such calendar day (2023 is no leap year, nor is 2100).
                          "2023-02-30 00:00:00", "2023-02-29 00:00:00", "2023-04-31 00:00:00",
                          "2100-02-29 00:00:00"}) {
    EXPECT_FALSE(ParseDateTimeNs(bad).ok()) << bad;
  }
  EXPECT_TRUE(ParseDateTimeNs("2024-02-29 00:00:00").ok());  // a leap day
  EXPECT_TRUE(ParseDateTimeNs("2000-02-29 00:00:00").ok());  // 400-year leap
}

// A key given twice in a row takes its last value, as Python's json.loads
// reads it: the block list too, not the two lists joined.
TEST(ParseTraceTextTest, ARepeatedKeyTakesItsLastValue) {
  auto trace = ParseTraceText(
      "{\"timestamp\": 0, \"input_length\": 1000, \"output_length\": 5, \"output_length\": 6, "
      "\"hash_ids\": [0, 1], \"hash_ids\": [2]}\n",
      "t.jsonl");
  ASSERT_TRUE(trace.ok()) << trace.status();
  ASSERT_EQ(trace->rows.size(), 1u);
  EXPECT_EQ(trace->rows[0].output_tokens, 6);
  EXPECT_EQ(trace->rows[0].hash_ids, (std::vector<int64_t>{2}));
}

TEST(ParseTraceTextTest, ReadsMooncakeJsonl) {
  auto trace = ParseTraceText(
      "{\"timestamp\": 0, \"input_length\": 6758, \"output_length\": 500, \"hash_ids\": [0, 1]}\n"
      "{\"extra\": [[2], {\"a\": \"]\"}], \"output_length\": 7, \"timestamp\": 27.5, "
      "\"input_length\": 12, \"note\": \"x\", \"ok\": true}\n\n",
      "t.jsonl");
  ASSERT_TRUE(trace.ok()) << trace.status();
  EXPECT_EQ(trace->format, "mooncake-jsonl");
  ASSERT_EQ(trace->rows.size(), 2u);
  EXPECT_EQ(trace->rows[0].input_tokens, 6758);
  EXPECT_EQ(trace->rows[0].output_tokens, 500);
  EXPECT_EQ(trace->rows[0].hash_ids, (std::vector<int64_t>{0, 1}));
  EXPECT_TRUE(trace->rows[1].hash_ids.empty());
  EXPECT_EQ(trace->rows[1].arrival_offset_ns, 27'500'000);
  EXPECT_EQ(trace->rows[1].input_tokens, 12);
  EXPECT_EQ(trace->rows[1].output_tokens, 7);
}

TEST(ParseTraceTextTest, HashIdsMustBeWholeNumbers) {
  auto trace = ParseTraceText(
      "{\"timestamp\": 0, \"input_length\": 10, \"output_length\": 5, \"hash_ids\": [0, -1]}\n",
      "t.jsonl");
  ASSERT_FALSE(trace.ok());
  EXPECT_NE(trace.status().message().find("t.jsonl:1: malformed JSON (expected a whole number "
                                          "in hash_ids"),
            std::string::npos)
      << trace.status();
}

// An id names a 512-token block: 100 tokens have one block, not ten.
TEST(ParseTraceTextTest, MoreHashIdsThanPromptBlocksAreRefused) {
  auto trace = ParseTraceText(
      "{\"timestamp\": 0, \"input_length\": 1025, \"output_length\": 5, \"hash_ids\": [0, 1, 2]}\n"
      "{\"timestamp\": 1, \"input_length\": 100, \"output_length\": 5, \"hash_ids\": [0, 1]}\n",
      "t.jsonl");
  ASSERT_FALSE(trace.ok());
  EXPECT_NE(trace.status().message().find("t.jsonl:2: 2 hash_ids for input_length 100: one names "
                                          "each 512-token block, so at most 1"),
            std::string::npos)
      << trace.status();
}

// A Mooncake id names its block with every block before it: the same id
// after another id, first in one prompt and second in another, or twice in
// one prompt, names no block a prefix cache could hold once.
TEST(ParseTraceTextTest, AHashIdFollowsTheSameIdOnEveryRow) {
  auto row = [](int ms, int tokens, const std::string& ids) {
    return absl::StrCat("{\"timestamp\": ", ms, ", \"input_length\": ", tokens,
                        ", \"output_length\": 5, \"hash_ids\": [", ids, "]}\n");
  };
  EXPECT_TRUE(
      ParseTraceText(row(0, 1024, "1, 2") + row(1, 1500, "1, 2, 3") + row(2, 512, "1"), "t.jsonl")
          .ok());
  auto moved = ParseTraceText(row(0, 1024, "1, 2") + row(1, 512, "2"), "t.jsonl");
  ASSERT_FALSE(moved.ok());
  EXPECT_EQ(moved.status().message(),
            "t.jsonl:2: hash id 2 comes first here but after id 1 on line 1 (an id names its "
            "block with every block before it)");
  auto reparented = ParseTraceText(row(0, 1024, "1, 2") + row(1, 1024, "3, 2"), "t.jsonl");
  ASSERT_FALSE(reparented.ok());
  EXPECT_NE(reparented.status().message().find("t.jsonl:2: hash id 2 comes after id 3 here but "
                                               "after id 1 on line 1"),
            std::string::npos)
      << reparented.status();
  auto repeated = ParseTraceText(row(0, 1024, "7, 7"), "t.jsonl");
  ASSERT_FALSE(repeated.ok());
  EXPECT_NE(repeated.status().message().find("t.jsonl:1: hash id 7 comes after id 7 here but "
                                             "first on line 1"),
            std::string::npos)
      << repeated.status();
}

TEST(ParseTraceTextTest, ReadsAzureCsvRelativeToTheFirstRow) {
  auto trace = ParseTraceText(
      "TIMESTAMP,ContextTokens,GeneratedTokens\r\n"
      "2023-11-16 18:15:46.6805900,374,44\r\n"
      "2023-11-16 18:15:50.9951690,396,109",  // no trailing newline, as the code file
      "azure.csv");
  ASSERT_TRUE(trace.ok()) << trace.status();
  EXPECT_EQ(trace->format, "azure-csv");
  ASSERT_EQ(trace->rows.size(), 2u);
  EXPECT_EQ(trace->rows[0].arrival_offset_ns, 0);
  EXPECT_EQ(trace->rows[1].arrival_offset_ns, 4'314'579'000);
  EXPECT_EQ(trace->rows[1].output_tokens, 109);
}

TEST(ParseTraceTextTest, ReadsALengthTableWithoutArrivals) {
  // Vidur's and Sarathi-Serve's processed traces: lengths, then columns that
  // are ignored; no arrival times.
  auto trace = ParseTraceText(
      "num_prefill_tokens,num_decode_tokens,num_total_tokens,pd_ratio\n"
      "74,918,992,0.0806100217864923\n"
      "290,905,1195,0.3204419889502762\n",
      "lengths.csv");
  ASSERT_TRUE(trace.ok()) << trace.status();
  EXPECT_EQ(trace->format, "lengths-csv");
  EXPECT_FALSE(trace->has_arrivals);
  ASSERT_EQ(trace->rows.size(), 2u);
  EXPECT_EQ(trace->rows[1].input_tokens, 290);
  EXPECT_EQ(trace->rows[1].output_tokens, 905);
  EXPECT_EQ(trace->rows[1].arrival_offset_ns, 0);
  auto short_row = ParseTraceText(
      "num_prefill_tokens,num_decode_tokens,num_total_tokens,pd_ratio\n74,918\n", "l.csv");
  ASSERT_FALSE(short_row.ok());
  EXPECT_EQ(short_row.status().message(), "l.csv:2: expected 4 comma-separated fields, got 2");
  // num_total_tokens is the two lengths' sum: a row that disagrees is corrupt.
  auto corrupt = ParseTraceText(
      "num_prefill_tokens,num_decode_tokens,num_total_tokens,pd_ratio\n100,10,999,0.1\n", "l.csv");
  ASSERT_FALSE(corrupt.ok());
  EXPECT_EQ(corrupt.status().message(),
            "l.csv:2: num_total_tokens 999 is not num_prefill_tokens + num_decode_tokens (110)");
}

TEST(ParseTraceTextTest, MalformedRowsNameTheLine) {
  struct Case {
    const char* text;
    const char* message;
  };
  const Case cases[] = {
      {"arrival_s,input_tokens,output_tokens\n0,1,1\n1,2\n",
       "t:3: expected 3 comma-separated fields, got 2"},
      {"arrival_s,input_tokens,output_tokens\n0,1,1\n1,0,5\n",
       "t:3: input tokens must be in [1, 1073741824], got 0"},
      {"arrival_s,input_tokens,output_tokens\n0,1,1\n1,2,x\n",
       "t:3: output tokens: expected an integer, got \"x\""},
      {"arrival_s,input_tokens,output_tokens\n2,1,1\n1,2,3\n",
       "t:3: time stamp earlier than the previous row"},
      {"{\"timestamp\": 0, \"input_length\": 5, \"output_length\": 1}\n{\"timestamp\": 1}\n",
       "t:2: missing number \"input_length\""},
      {"{\"timestamp\": 0, \"input_length\": \"7236\", \"output_length\": 1}\n",
       "t:1: \"input_length\" is not a number"},
      {"{\"timestamp\": 0, \"input_length\": 5.5, \"output_length\": 1}\n",
       "t:1: input_length must be a whole number in [1, 1073741824], got 5.5"},
      {"{\"timestamp\": 0, \"input_length\": 5, \"output_length\": 1\n",
       "t:1: malformed JSON (expected ',' or '}' at column 55)"},
      {"{\"timestamp\": 0, \"input_length\": 5, \"output_length\": 1, \"x\": tru}\n",
       "t:1: malformed JSON (unexpected value at column 62)"},
      // A skipped nested value must still be well formed: the bracket that
      // closes an array is ']', and a member needs its value.
      {"{\"timestamp\": 0, \"x\": [1, 2}, \"input_length\": 5, \"output_length\": 1}\n",
       "t:1: malformed JSON (bad array or object at column 23)"},
      {"{\"timestamp\": 0, \"x\": {\"a\": }, \"input_length\": 5, \"output_length\": 1}\n",
       "t:1: malformed JSON (bad array or object at column 23)"},
      // Numbers in JSON's spelling only: strtod would read hex and inf.
      {"{\"timestamp\": 0x10, \"input_length\": 5, \"output_length\": 1}\n",
       "t:1: malformed JSON (expected ',' or '}' at column 16)"},
      {"{\"timestamp\": inf, \"input_length\": 5, \"output_length\": 1}\n",
       "t:1: malformed JSON (unexpected value at column 15)"},
      {"{\"timestamp\": 1e, \"input_length\": 5, \"output_length\": 1}\n",
       "t:1: malformed JSON (bad number at column 17)"},
      {"when,in,out\n1,2,3\n",
       "t:1: unknown trace header \"when,in,out\" (expected JSONL objects, "
       "TIMESTAMP,ContextTokens,GeneratedTokens, "
       "arrival_s,input_tokens,output_tokens or "
       "num_prefill_tokens,num_decode_tokens,...)"},
      {"arrival_s,input_tokens,output_tokens\n", "t: no trace rows"},
      // Past 2^30 tokens or outside 1970-2200 a row would overflow the
      // length and nanosecond arithmetic (found by UBSan); hex is no number
      // of a CSV, and hash_ids is the prompt's block list or nothing.
      {"arrival_s,input_tokens,output_tokens\n0,9223372036854775807,1\n",
       "t:2: input tokens must be in [1, 1073741824], got 9223372036854775807"},
      {"{\"timestamp\": 0, \"input_length\": 1e18, \"output_length\": 1}\n",
       "t:1: input_length must be a whole number in [1, 1073741824], got 1e+18"},
      {"TIMESTAMP,ContextTokens,GeneratedTokens\n3000-01-01 00:00:00.0,100,10\n",
       "t:2: time stamp year 3000 outside 1970-2200: \"3000-01-01 00:00:00.0\""},
      {"arrival_s,input_tokens,output_tokens\n0x10,1,1\n",
       "t:2: arrival: expected seconds >= 0, got \"0x10\""},
      {"arrival_s,input_tokens,output_tokens\n1e12,1,1\n",
       "t:2: arrival: 1e12 s is past the 9e+09 s a trace may span"},
      {"{\"timestamp\": 0, \"input_length\": 5, \"output_length\": 1, \"hash_ids\": \"x\"}\n",
       "t:1: malformed JSON (hash_ids must be an array of whole numbers at column 69)"},
  };
  for (const Case& c : cases) {
    auto trace = ParseTraceText(c.text, "t");
    ASSERT_FALSE(trace.ok()) << c.text;
    EXPECT_EQ(trace.status().message(), c.message);
  }
}

TEST(ParseTraceTextTest, AByteOrderMarkIsNotPartOfTheHeader) {
  auto trace = ParseTraceText("\xEF\xBB\xBF{\"timestamp\": 0, \"input_length\": 5, "
                              "\"output_length\": 1}\n",
                              "t");
  ASSERT_TRUE(trace.ok()) << trace.status();
  EXPECT_EQ(trace->format, "mooncake-jsonl");
}

TEST(ReadTraceFileTest, ReadsThePublicTracesWhole) {
  struct Case {
    const char* file;
    size_t rows;  // SOURCES.md
    int64_t last_offset_ns;
  };
  const Case cases[] = {
      {"AzureLLMInferenceTrace_conv.csv", 19366, 3'501'721'937'000},
      {"AzureLLMInferenceTrace_code.csv", 8819, -1},
      {"mooncake_conversation_trace.jsonl", 12031, 3'536'999'000'000},
      {"mooncake_synthetic_trace.jsonl", 3993, -1},
      {"sarathi_sharegpt_8k_filtered_stats_llama2_tokenizer.csv", 30731, 0},
      {"vidur_arxiv_summarization_stats_llama2_tokenizer_filtered_v2.csv", 28257, 0},
  };
  for (const Case& c : cases) {
    auto trace = ReadTraceFile(kShared + c.file);
    ASSERT_TRUE(trace.ok()) << trace.status();
    EXPECT_EQ(trace->rows.size(), c.rows) << c.file;
    if (c.last_offset_ns >= 0) {
      EXPECT_EQ(trace->rows.back().arrival_offset_ns, c.last_offset_ns);
    }
  }
  // SOURCES.md: code trace spans 18:17:03 to 19:14:19, about 3,436 s.
  auto code = ReadTraceFile(kShared + "AzureLLMInferenceTrace_code.csv");
  ASSERT_TRUE(code.ok());
  EXPECT_NEAR(code->rows.back().arrival_offset_ns * 1e-9, 3436, 1.5);
  EXPECT_EQ(ReadTraceFile(kShared + "no_such_file.csv").status().code(),
            absl::StatusCode::kNotFound);
  // A directory opens as a stream on Linux and reads as empty: not "no rows".
  EXPECT_NE(ReadTraceFile(kShared).status().message().find("not a readable file (a directory)"),
            std::string::npos);
}

}  // namespace
}  // namespace servesim::workload
