// servesim: predicts `vllm bench serve` results for DeepSeek-V3.2 on H200s.
#include <cstdio>
#include <cstring>
#include <string>

#include "sim/cli/commands.h"

namespace {

constexpr char kUsage[] =
    "usage: servesim <command> [flags]\n"
    "  run      --serve CMD --bench CMD [--env K=V]... [--result-json PATH] [--step-log CSV]\n"
    "           [--profile PATH|roofline] [--params PATH|none] [--model-spec PATH]\n"
    "           [--mtp-acceptance MEAN_ACCEPTED_DRAFTS] [--spread [--folds FOLDS] [--threads N]]\n"
    "  explain  --serve CMD [--env K=V]... [--json] [--decode-seqs N --context TOKENS]\n"
    "           [--prefill-tokens N [--prefill-seqs N]] [--gpu-only-json] [--no-production-factors]\n"
    "           [--collectives-as-copies] [--any-gpu-profile (needs the two before)]\n"
    "  validate --runs CSV|JSON|LOG|DIR [--json]   (a JSON or console log needs its .cmd beside "
    "it)\n"
    "  fit      --runs CSV|JSON|LOG|DIR (--out PARAMS | --leave-one-out [--out PARAMS]\n"
    "           [--folds-out FOLDS])\n"
    "           [--engines vllm,sglang,trtllm] [--max-evaluations N] [--threads N]\n"
    "  sweep    (--serve CMD | --engine-axis 'CMD1|CMD2') --bench CMD\n"
    "           [--axis 'FLAG=V1,V2,...']... [--env K=V]... --out-dir DIR [--threads N]\n"
    "           [--shard i/n] [--spread [--folds FOLDS]]\n"
    "  sweep-merge --out-dir DIR   (or sweep --merge --out-dir DIR)\n"
    "  plan     --bench CMD | --trace FILE [--rate-scale X] [--num-prompts N]\n"
    "           --slo-ttft-p99-ms A --slo-tpot-mean-ms B [--slo-itl-p99-ms C]\n"
    "           [--min-throughput OUT_TOK_S] [--candidate CMD]... [--candidates FILE]\n"
    "           [--env K=V]... [--max-nodes N] [--threads N]\n"
    "           [--balancer round-robin|least-outstanding] [--slowdown X]\n"
    "           [--spread [--folds FOLDS]]\n"
    "See README.md for every command.\n";

const std::set<std::string> kContextFlags = {"--repo-dir", "--profile", "--params",
                                             "--model-spec"};

std::set<std::string> With(std::set<std::string> a, const std::set<std::string>& b) {
  a.insert(b.begin(), b.end());
  return a;
}

int Dispatch(int argc, char** argv) {
  using namespace servesim::cli;
  if (argc < 2) {
    std::fputs("servesim: no command given (run `servesim --help`)\n", stderr);
    return 2;
  }
  // `servesim --help` and `servesim COMMAND --help`.
  const auto is_help = [](const char* a) { return !std::strcmp(a, "--help") || !std::strcmp(a, "-h"); };
  if (is_help(argv[1]) || (argc == 3 && is_help(argv[2]))) {
    std::fputs(kUsage, stdout);
    return 0;
  }
  const std::string command = argv[1];
  if (command == "run") {
    auto args = ParseCliArgs(
        argc, argv, command,
        With({"--serve", "--bench", "--result-json", "--mtp-acceptance", "--step-log", "--folds",
              "--threads"},
             kContextFlags),
        {"--spread"});
    if (!args.ok()) return ReportError(args.status());
    return RunCommand(*args);
  }
  if (command == "explain") {
    auto args = ParseCliArgs(
        argc, argv, command,
        With({"--serve", "--decode-seqs", "--context", "--prefill-tokens", "--prefill-seqs"},
             kContextFlags),
        {"--json", "--gpu-only-json", "--no-production-factors", "--collectives-as-copies",
         "--any-gpu-profile"});
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
                             With({"--runs", "--out", "--folds-out", "--engines", "--max-evaluations",
                                   "--threads"},
                                  kContextFlags),
                             {"--leave-one-out"});
    if (!args.ok()) return ReportError(args.status());
    return FitCommand(*args);
  }
  if (command == "sweep" || command == "sweep-merge") {
    auto args = ParseRepeatedCliArgs(
        argc, argv, command,
        With({"--serve", "--bench", "--engine-axis", "--out-dir", "--threads", "--shard",
              "--folds"},
             kContextFlags),
        {"--merge", "--spread"}, {"--axis"});
    if (!args.ok()) return ReportError(args.status());
    return SweepCommand(*args);
  }
  if (command == "plan") {
    auto args = ParseRepeatedCliArgs(
        argc, argv, command,
        With({"--bench", "--trace", "--rate-scale", "--num-prompts", "--slo-ttft-p99-ms",
              "--slo-tpot-mean-ms", "--slo-itl-p99-ms", "--min-throughput", "--candidates",
              "--max-nodes", "--threads", "--balancer", "--slowdown", "--folds"},
             kContextFlags),
        {"--spread"}, {"--candidate"});
    if (!args.ok()) return ReportError(args.status());
    return PlanCommand(*args);
  }
  std::fprintf(stderr, "servesim: unknown command \"%s\" (run `servesim --help`)\n",
               command.c_str());
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  const int rc = Dispatch(argc, argv);
  // A full disk shows only when the buffered report is flushed: a report
  // that did not reach its file is a failed run, not a success.
  if (std::fflush(stdout) != 0 || std::ferror(stdout)) {
    std::fputs("servesim: cannot write the report to standard output\n", stderr);
    return rc != 0 ? rc : 2;
  }
  return rc;
}
