// servesim: predicts `vllm bench serve` results for DeepSeek-V3.2 on H200s.
#include <cstdio>
#include <cstring>
#include <string>

#include "sim/cli/commands.h"

namespace {

constexpr char kUsage[] =
    "usage: servesim <command> [flags]\n"
    "  run      --serve CMD --bench CMD [--env K=V]... [--result-json PATH]\n"
    "           [--profile PATH|roofline] [--params PATH|none] [--model-spec PATH]\n"
    "           [--mtp-acceptance MEAN_ACCEPTED_DRAFTS]\n"
    "  explain  --serve CMD [--env K=V]... [--json] [--decode-seqs N --context TOKENS]\n"
    "           [--prefill-tokens N]\n"
    "  validate --runs CSV|DIR [--json]\n"
    "  fit      --runs CSV|DIR --out PARAMS [--leave-one-out] [--engines vllm,sglang,trtllm]\n"
    "See README.md for every command.\n";

const std::set<std::string> kContextFlags = {"--repo-dir", "--profile", "--params",
                                             "--model-spec"};

std::set<std::string> With(std::set<std::string> a, const std::set<std::string>& b) {
  a.insert(b.begin(), b.end());
  return a;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace servesim::cli;
  if (argc < 2 || !std::strcmp(argv[1], "--help") || !std::strcmp(argv[1], "-h")) {
    std::fputs(kUsage, argc < 2 ? stderr : stdout);
    return argc < 2 ? 2 : 0;
  }
  const std::string command = argv[1];
  if (command == "run") {
    auto args = ParseCliArgs(
        argc, argv, command,
        With({"--serve", "--bench", "--result-json", "--mtp-acceptance"}, kContextFlags), {});
    if (!args.ok()) return ReportError(args.status());
    return RunCommand(*args);
  }
  if (command == "explain") {
    auto args = ParseCliArgs(
        argc, argv, command,
        With({"--serve", "--decode-seqs", "--context", "--prefill-tokens"}, kContextFlags),
        {"--json"});
    if (!args.ok()) return ReportError(args.status());
    return ExplainCommand(*args);
  }
  if (command == "validate") {
    auto args = ParseCliArgs(argc, argv, command, With({"--runs"}, kContextFlags), {"--json"});
    if (!args.ok()) return ReportError(args.status());
    return ValidateCommand(*args);
  }
  if (command == "fit") {
    auto args = ParseCliArgs(argc, argv, command,
                             With({"--runs", "--out", "--engines", "--max-evaluations"}, kContextFlags),
                             {"--leave-one-out"});
    if (!args.ok()) return ReportError(args.status());
    return FitCommand(*args);
  }
  std::fprintf(stderr, "servesim: unknown command \"%s\" (run `servesim --help`)\n",
               command.c_str());
  return 2;
}
