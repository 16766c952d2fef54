// servesim's subcommands. Each returns the process exit code:
// 0 success, 1 the engine would refuse the configuration, 2 bad usage/input.
#ifndef SERVESIM_SIM_CLI_COMMANDS_H_
#define SERVESIM_SIM_CLI_COMMANDS_H_

#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "scenarios/fitted_params.pb.h"
#include "sim/cli/cli_args.h"
#include "sim/fit/held_out_evidence.h"
#include "sim/runner/prediction.h"

namespace servesim::cli {

int RunCommand(const CliArgs& args);
int ExplainCommand(const CliArgs& args);
int ValidateCommand(const CliArgs& args);
int FitCommand(const CliArgs& args);
// sweep / sweep-merge / plan (planning_commands.cc). Their repeatable flags
// (--axis, --candidate) are in CliArgs::repeated: see ParseRepeatedCliArgs.
int SweepCommand(const CliArgs& args);
int PlanCommand(const CliArgs& args);

// The message on one line of at most 600 bytes of it (longer ones cut at a
// whole UTF-8 character, with the count of bytes left out; line breaks as
// spaces).
std::string OneLineMessage(absl::string_view message);

// Prints the one-line error for `status` and returns its exit code.
int ReportError(const absl::Status& status);

// --flag's integer value, at least `min`; `fallback` when it is not given.
absl::StatusOr<int> IntFlag(const CliArgs& args, const std::string& flag, int fallback, int min);
// --threads: 1 to 1024, all cores when absent.
absl::StatusOr<int> ThreadsFlag(const CliArgs& args);
// The machine's hardware threads, at least 1: the default --threads.
int DefaultThreads();
// The first value that appears earlier in `values` too, or null.
const std::string* FirstRepeated(const std::vector<std::string>& values);

// `plan`'s exit code when every candidate was evaluated but none meets the
// SLOs within --max-nodes (its report is printed all the same).
inline constexpr int kExitNoPlan = 3;
// --repo-dir, --model-spec, --profile, --params -> loaded context.
absl::StatusOr<runner::PredictionContext> ContextFromArgs(const CliArgs& args);
absl::StatusOr<scenarios::EnvVars> EnvFromArgs(const CliArgs& args);
// `--spread [--folds FOLDS]` (run, sweep, plan): the leave-one-out's fits to
// predict with, read and checked (FOLDS, default the repository's
// scenarios/fitted_params_folds.textproto); nullopt without --spread, where
// --folds is an error. --params beside --spread is an error: the central
// figures come from the fold file too (SpreadCentralContext). `threads` from
// --threads.
struct SpreadFolds {
  scenarios::FoldFits fits;
  std::string path;    // the file as read
  std::string source;  // the file, as the header names it (repository-relative)
  int threads = 1;
};
absl::StatusOr<std::optional<SpreadFolds>> SpreadFoldsFromArgs(
    const CliArgs& args, const runner::PredictionContext& context);

// The folds whose held-out rows `run`, `sweep` and `plan` show beside their
// predictions: `spread`'s where given, else the repository's fold file
// (scenarios/fitted_params_folds.textproto), read and checked; nullopt
// where the repository has none. A repository file that is there but bad is
// an error: it is the repository's own.
absl::StatusOr<std::optional<SpreadFolds>> HeldOutFolds(const std::optional<SpreadFolds>& spread,
                                                        const runner::PredictionContext& context);

// The leave-one-out's rows of `engine` on `layout_family`
// (fit::FindHeldOutEvidence), for a prediction made with the context's
// parameters; nullopt without folds, or where they give none.
std::optional<fit::HeldOutEvidence> HeldOutEvidenceFor(const runner::PredictionContext& context,
                                                       const std::optional<SpreadFolds>& folds,
                                                       scenarios::EngineKind engine,
                                                       const std::string& layout_family);

// The context whose parameters are the fold file's fits on every run (one per
// engine: LoadFoldFits requires it), named by the fold file: so that a
// prediction made beside its spread is one of the spread's fits and lies
// within its range, whichever fold file --folds names.
runner::PredictionContext SpreadCentralContext(const runner::PredictionContext& context,
                                               const SpreadFolds& folds);

// Whether two paths name one file, existing or not (., .., // and symbolic
// links resolved as far as the file system has them); false if one is empty.
bool SameFile(const std::string& a, const std::string& b);

// A file a command reads, named by the flag that gave it ("" when none,
// "roofline" and "none" are not files).
struct NamedPath {
  std::string flag;
  std::string path;
};

// The context's input files: --profile, --params and --model-spec.
std::vector<NamedPath> ContextInputs(const runner::PredictionContext& context);

// Refuses an output that names one of `inputs` as a file: the write would
// destroy what the command (or the next one) reads.
absl::Status CheckOutputIsNoInput(const std::string& out_flag, const std::string& out_path,
                                  const std::vector<NamedPath>& inputs);

}  // namespace servesim::cli

#endif  // SERVESIM_SIM_CLI_COMMANDS_H_
