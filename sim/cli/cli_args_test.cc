#include "sim/cli/cli_args.h"

#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace servesim::cli {
namespace {

// argv as main() sees it: the program, the subcommand, then the flags.
std::vector<char*> Argv(std::vector<std::string>& words) {
  std::vector<char*> argv;
  for (std::string& w : words) argv.push_back(w.data());
  return argv;
}

TEST(CliArgsTest, InlineAndSeparateValuesAreTheSame) {
  std::vector<std::string> words = {
      "servesim",  "run",     "--serve=vllm serve m", "--bench", "vllm bench serve", "--env", "A=1",
      "--env=B=2", "--spread"};
  std::vector<char*> argv = Argv(words);
  absl::StatusOr<CliArgs> args = ParseCliArgs(static_cast<int>(argv.size()), argv.data(), "run",
                                              {"--serve", "--bench"}, {"--spread"});
  ASSERT_TRUE(args.ok()) << args.status();
  EXPECT_EQ(args->Get("--serve"), "vllm serve m");
  EXPECT_EQ(args->Get("--bench"), "vllm bench serve");
  // Only the first '=' splits: B=2 is the variable's own.
  EXPECT_EQ(args->env, (std::vector<std::string>{"A=1", "B=2"}));
  EXPECT_TRUE(args->Has("--spread"));
}

TEST(CliArgsTest, RefusesWhatIsNotTheCommandsOwn) {
  auto parse = [](std::vector<std::string> words) {
    std::vector<char*> argv = Argv(words);
    return ParseCliArgs(static_cast<int>(argv.size()), argv.data(), "run", {"--serve"},
                        {"--spread"});
  };
  EXPECT_EQ(parse({"servesim", "run", "--serve", "a", "--serve", "b"}).status().message(),
            "--serve: given more than once");
  EXPECT_EQ(parse({"servesim", "run", "--spread=yes"}).status().message(),
            "--spread: takes no value");
  EXPECT_EQ(parse({"servesim", "run", "--serve"}).status().message(), "--serve: needs a value");
  EXPECT_EQ(parse({"servesim", "run", "--bench", "x"}).status().message(),
            "run: unknown flag --bench");
  // An unset shell variable, inline or separate, is not a request for a default.
  EXPECT_EQ(parse({"servesim", "run", "--serve", ""}).status().message(), "--serve: empty value");
  EXPECT_EQ(parse({"servesim", "run", "--serve="}).status().message(), "--serve: empty value");
  EXPECT_EQ(parse({"servesim", "run", "--env", ""}).status().message(), "--env: empty value");
  // A terminal escape is no part of a command; a pasted line break is.
  EXPECT_EQ(parse({"servesim", "run", "--serve", "vllm serve m\x1b[31m"}).status().message(),
            "--serve: control byte 0x1b at column 13");
  EXPECT_TRUE(parse({"servesim", "run", "--serve", "vllm serve m \\\n\t-tp 8"}).ok());
  // A flag where the value belongs: the value was forgotten, and the flag
  // would otherwise be taken for a file name and not applied.
  EXPECT_EQ(parse({"servesim", "run", "--serve", "--spread"}).status().message(),
            "--serve: needs a value, got the flag --spread");
  EXPECT_EQ(parse({"servesim", "run", "--serve", "--env", "A=1"}).status().message(),
            "--serve: needs a value, got the flag --env");
  EXPECT_EQ(parse({"servesim", "run", "--env", "--serve", "x"}).status().message(),
            "--env: needs a value, got the flag --serve");
  // Inline, it is the value asked for.
  ASSERT_TRUE(parse({"servesim", "run", "--serve=--spread"}).ok());
  EXPECT_EQ(parse({"servesim", "run", "--serve=--spread"})->Get("--serve"), "--spread");
}

TEST(CliArgsTest, RepeatableFlagsKeepEveryValueInOrder) {
  std::vector<std::string> words = {
      "servesim", "sweep", "--axis", "-tp=8", "--out-dir", "d", "--axis=--max-num-seqs=64,128",
      "--axis"};
  std::vector<char*> argv = Argv(words);
  // The last --axis has no value.
  EXPECT_EQ(ParseRepeatedCliArgs(static_cast<int>(argv.size()), argv.data(), "sweep", {"--out-dir"},
                                 {}, {"--axis"})
                .status()
                .message(),
            "--axis: needs a value");
  words.back() = "--axis=";
  argv = Argv(words);
  EXPECT_EQ(ParseRepeatedCliArgs(static_cast<int>(argv.size()), argv.data(), "sweep", {"--out-dir"},
                                 {}, {"--axis"})
                .status()
                .message(),
            "--axis: empty value");
  words.pop_back();
  argv = Argv(words);
  absl::StatusOr<CliArgs> args = ParseRepeatedCliArgs(static_cast<int>(argv.size()), argv.data(),
                                                      "sweep", {"--out-dir"}, {}, {"--axis"});
  ASSERT_TRUE(args.ok()) << args.status();
  EXPECT_EQ(args->repeated.at("--axis"),
            (std::vector<std::string>{"-tp=8", "--max-num-seqs=64,128"}));
  EXPECT_EQ(args->Get("--out-dir"), "d");
  // A repeatable flag followed by another of the command's flags.
  std::vector<std::string> lost = {"servesim", "sweep", "--axis", "--out-dir", "d"};
  argv = Argv(lost);
  EXPECT_EQ(ParseRepeatedCliArgs(static_cast<int>(argv.size()), argv.data(), "sweep", {"--out-dir"},
                                 {}, {"--axis"})
                .status()
                .message(),
            "--axis: needs a value, got the flag --out-dir");
}

}  // namespace
}  // namespace servesim::cli
