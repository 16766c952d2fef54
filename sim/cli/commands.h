// servesim's subcommands. Each returns the process exit code:
// 0 success, 1 the engine would refuse the configuration, 2 bad usage/input.
#ifndef SERVESIM_SIM_CLI_COMMANDS_H_
#define SERVESIM_SIM_CLI_COMMANDS_H_

#include "absl/status/status.h"
#include "sim/cli/cli_args.h"
#include "sim/runner/prediction.h"

namespace servesim::cli {

int RunCommand(const CliArgs& args);
int ExplainCommand(const CliArgs& args);
int ValidateCommand(const CliArgs& args);
int FitCommand(const CliArgs& args);

// Prints the one-line error for `status` and returns its exit code.
int ReportError(const absl::Status& status);
// --repo-dir, --model-spec, --profile, --params -> loaded context.
absl::StatusOr<runner::PredictionContext> ContextFromArgs(const CliArgs& args);
absl::StatusOr<scenarios::EnvVars> EnvFromArgs(const CliArgs& args);

}  // namespace servesim::cli

#endif  // SERVESIM_SIM_CLI_COMMANDS_H_
