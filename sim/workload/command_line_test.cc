#include "sim/workload/command_line.h"

#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace servesim::workload {
namespace {

using Words = std::vector<std::string>;

Words Split(std::string_view line) {
  auto words = SplitShellWords(line);
  EXPECT_TRUE(words.ok()) << words.status();
  return words.ok() ? *words : Words{};
}

// Quoting is SplitShellWords' inverse: a word with a quote, an empty word
// and a JSON value come back as they went in.
TEST(ShellQuoteTest, SplitShellWordsReadsTheWordsBack) {
  EXPECT_EQ(ShellQuote("it's"), "'it'\\''s'");
  EXPECT_EQ(ShellQuote(""), "''");
  EXPECT_EQ(ShellQuote("/a/b.csv"), "/a/b.csv");
  const std::vector<std::string> words = {"vllm", "it's", "", "{\"method\": \"mtp\"}", "a b"};
  absl::StatusOr<std::vector<std::string>> back = SplitShellWords(JoinShellWords(words));
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(*back, words);
}

// A shell comment starts at a '#' that begins a word outside quotes.
TEST(WithoutShellCommentTest, CutsAtAHashThatStartsAnUnquotedWord) {
  EXPECT_EQ(WithoutShellComment("a b # c"), "a b ");
  EXPECT_EQ(WithoutShellComment("# all"), "");
  EXPECT_EQ(WithoutShellComment("a#b c"), "a#b c");
  EXPECT_EQ(WithoutShellComment("--label '#3' --n 1"), "--label '#3' --n 1");
  EXPECT_EQ(WithoutShellComment("--label \"#3\" # x"), "--label \"#3\" ");
  EXPECT_EQ(WithoutShellComment("a \\#b # c"), "a \\#b ");
}

TEST(SplitShellWordsTest, BlanksSeparateWordsAndRunsCollapse) {
  EXPECT_EQ(Split("  vllm\tbench \n serve  "), (Words{"vllm", "bench", "serve"}));
  EXPECT_EQ(Split(""), Words{});
}

TEST(SplitShellWordsTest, SingleQuotesKeepEverythingLiterally) {
  EXPECT_EQ(Split(R"(--speculative-config '{"method": "mtp", "n": 1}')"),
            (Words{"--speculative-config", R"({"method": "mtp", "n": 1})"}));
  EXPECT_EQ(Split(R"('a\b')"), Words{R"(a\b)"});
}

TEST(SplitShellWordsTest, DoubleQuotesEscapeOnlyShellSpecials) {
  EXPECT_EQ(Split(R"("a \"b\" \$c \\ \d")"), Words{R"(a "b" $c \ \d)"});
}

TEST(SplitShellWordsTest, BackslashOutsideQuotesEscapesNextCharacter) {
  EXPECT_EQ(Split(R"(a\ b c)"), (Words{"a b", "c"}));
  EXPECT_EQ(Split("a \\\nb"), (Words{"a", "b"}));  // line continuation
}

TEST(SplitShellWordsTest, AdjacentQuotedPartsFormOneWord) {
  EXPECT_EQ(Split(R"(ab'cd'"ef"g)"), Words{"abcdefg"});
  EXPECT_EQ(Split("a '' b"), (Words{"a", "", "b"}));
}

TEST(SplitShellWordsTest, UnquotedJsonFromTheLiveCsvSurvivesIntact) {
  EXPECT_EQ(Split(R"(-tp 8 --speculative-config {"method":"mtp","num_speculative_tokens":1})"),
            (Words{"-tp", "8", "--speculative-config",
                   R"({"method":"mtp","num_speculative_tokens":1})"}));
  EXPECT_EQ(Split(R"(--x {"a": [1, "}"]} y)"), (Words{"--x", R"({"a": [1, "}"]})", "y"}));
}

TEST(SplitShellWordsTest, BraceInsideAWordIsLiteral) {
  EXPECT_EQ(Split("a{b c}"), (Words{"a{b", "c}"}));
}

TEST(SplitShellWordsTest, UnterminatedQuotesAndBracketsAreErrors) {
  for (std::string_view bad : {"a 'b", R"(a "b)", "a \\", R"(--x {"a":1)"}) {
    auto words = SplitShellWords(bad);
    EXPECT_FALSE(words.ok()) << bad;
  }
  EXPECT_EQ(SplitShellWords("a 'b").status().message(), "unterminated single quote at column 3");
}

std::vector<FlagSpec> ServeSpecs() {
  return {{"--tensor-parallel-size", {"-tp"}, true},
          {"--max-model-len", {}, true},
          {"--enable-expert-parallel", {}, false},
          {"--cuda-graph-bs", {}, true, true},
          {"--seed", {}, true},
          {"--ratio", {}, true},
          {"--flag-bool", {}, true}};
}

FlagParseOptions Options(bool positionals = false) {
  FlagParseOptions options;
  options.context = "--serve";
  options.allow_positionals = positionals;
  return options;
}

TEST(ParseFlagsTest, AcceptsSpaceEqualsShortAndBooleanForms) {
  auto flags = ParseFlags(Words{"-tp", "8", "--max-model-len=32768", "--enable-expert-parallel"},
                          ServeSpecs(), Options());
  ASSERT_TRUE(flags.ok()) << flags.status();
  EXPECT_EQ(*flags->GetInt("--tensor-parallel-size"), 8);
  EXPECT_EQ(*flags->GetInt("--max-model-len"), 32768);
  EXPECT_TRUE(*flags->GetBool("--enable-expert-parallel"));
  EXPECT_EQ(flags->given(),
            (Words{"--tensor-parallel-size", "--max-model-len", "--enable-expert-parallel"}));
}

TEST(ParseFlagsTest, AbsentSwitchIsFalseAndAbsentValueIsNotFound) {
  auto flags = ParseFlags(Words{}, ServeSpecs(), Options());
  ASSERT_TRUE(flags.ok());
  EXPECT_FALSE(*flags->GetBool("--enable-expert-parallel"));
  EXPECT_EQ(flags->GetInt("--max-model-len").status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(*flags->GetIntOr("--max-model-len", 163840), 163840);
}

TEST(ParseFlagsTest, BadIntegerNamesContextFlagAndValue) {
  auto flags = ParseFlags(Words{"--max-model-len", "abc"}, ServeSpecs(), Options());
  ASSERT_TRUE(flags.ok());
  EXPECT_EQ(flags->GetInt("--max-model-len").status().message(),
            "--serve: --max-model-len: expected an integer, got \"abc\"");
  EXPECT_EQ(flags->GetIntOr("--max-model-len", 1).status().message(),
            "--serve: --max-model-len: expected an integer, got \"abc\"");
}

TEST(ParseFlagsTest, UnknownFlagIsNamed) {
  auto flags = ParseFlags(Words{"-tp", "8", "--max-num-seqs=4"}, ServeSpecs(), Options());
  EXPECT_EQ(flags.status().message(), "--serve: unknown flag --max-num-seqs");
}

TEST(ParseFlagsTest, MissingValueAndValuedSwitchAreErrors) {
  EXPECT_EQ(ParseFlags(Words{"--max-model-len"}, ServeSpecs(), Options()).status().message(),
            "--serve: --max-model-len: expected a value");
  EXPECT_EQ(ParseFlags(Words{"--max-model-len", "--enable-expert-parallel"}, ServeSpecs(),
                       Options())
                .status()
                .message(),
            "--serve: --max-model-len: expected a value");
  EXPECT_EQ(
      ParseFlags(Words{"--enable-expert-parallel=1"}, ServeSpecs(), Options()).status().message(),
      "--serve: --enable-expert-parallel: is a switch and takes no value, got \"1\"");
}

TEST(ParseFlagsTest, NegativeNumbersAreValuesNotFlags) {
  auto flags = ParseFlags(Words{"--seed", "-1", "--ratio", "-0.5"}, ServeSpecs(), Options());
  ASSERT_TRUE(flags.ok()) << flags.status();
  EXPECT_EQ(*flags->GetInt("--seed"), -1);
  EXPECT_DOUBLE_EQ(*flags->GetDouble("--ratio"), -0.5);
}

TEST(ParseFlagsTest, LastOccurrenceWins) {
  auto flags = ParseFlags(Words{"-tp", "2", "--tensor-parallel-size", "4"}, ServeSpecs(), Options());
  ASSERT_TRUE(flags.ok());
  EXPECT_EQ(*flags->GetInt("--tensor-parallel-size"), 4);
  EXPECT_EQ(flags->given().size(), 1u);
}

TEST(ParseFlagsTest, MultipleValuesRunToTheNextFlag) {
  auto flags = ParseFlags(Words{"--cuda-graph-bs", "1", "2", "4", "-tp", "8"}, ServeSpecs(),
                          Options());
  ASSERT_TRUE(flags.ok()) << flags.status();
  EXPECT_EQ(*flags->GetStrings("--cuda-graph-bs"), (Words{"1", "2", "4"}));
  EXPECT_EQ(*flags->GetInt("--tensor-parallel-size"), 8);
}

TEST(ParseFlagsTest, PositionalsOnlyWhenAllowed) {
  Words words = {"deepseek-ai/DeepSeek-V3.2", "-tp", "8"};
  EXPECT_EQ(ParseFlags(words, ServeSpecs(), Options()).status().message(),
            "--serve: unexpected argument \"deepseek-ai/DeepSeek-V3.2\"");
  auto flags = ParseFlags(words, ServeSpecs(), Options(/*positionals=*/true));
  ASSERT_TRUE(flags.ok());
  EXPECT_EQ(flags->positionals(), Words{"deepseek-ai/DeepSeek-V3.2"});
}

TEST(ParseFlagsTest, UnderscoresMatchDashesOnlyWhenAsked) {
  Words words = {"--max_model_len", "1024"};
  EXPECT_FALSE(ParseFlags(words, ServeSpecs(), Options()).ok());
  FlagParseOptions options = Options();
  options.underscores_match_dashes = true;
  auto flags = ParseFlags(words, ServeSpecs(), options);
  ASSERT_TRUE(flags.ok());
  EXPECT_EQ(*flags->GetInt("--max-model-len"), 1024);
}

TEST(ParseFlagsTest, ValuedBoolParsesWordsAndRejectsOthers) {
  auto flags = ParseFlags(Words{"--flag-bool", "False"}, ServeSpecs(), Options());
  ASSERT_TRUE(flags.ok());
  EXPECT_FALSE(*flags->GetBool("--flag-bool"));
  flags = ParseFlags(Words{"--flag-bool", "maybe"}, ServeSpecs(), Options());
  ASSERT_TRUE(flags.ok());
  EXPECT_EQ(flags->GetBool("--flag-bool").status().message(),
            "--serve: --flag-bool: expected true or false, got \"maybe\"");
}

TEST(ParseFlagsTest, UndeclaredNameInAGetterIsAnError) {
  auto flags = ParseFlags(Words{}, ServeSpecs(), Options());
  ASSERT_TRUE(flags.ok());
  EXPECT_FALSE(flags->GetInt("--nope").ok());
  EXPECT_FALSE(flags->GetIntOr("--nope", 3).ok());
}

}  // namespace
}  // namespace servesim::workload
