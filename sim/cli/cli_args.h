// The servesim command line: a subcommand and its --flag value pairs. --env
// may repeat (each variable once); any other valued flag given twice is an
// error.
#ifndef SERVESIM_SIM_CLI_CLI_ARGS_H_
#define SERVESIM_SIM_CLI_CLI_ARGS_H_

#include <map>
#include <set>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace servesim::cli {

struct CliArgs {
  std::string command;
  std::map<std::string, std::string> values;  // --flag -> value
  std::vector<std::string> env;               // every --env, in order
  std::set<std::string> switches;             // flags without a value
  // Flags a command takes many times (--axis, --candidate): every value, in
  // order (ParseRepeatedCliArgs).
  std::map<std::string, std::vector<std::string>> repeated;
  bool Has(const std::string& flag) const {
    return values.count(flag) || switches.count(flag) || repeated.count(flag);
  }
  std::string Get(const std::string& flag, const std::string& fallback = "") const {
    auto it = values.find(flag);
    return it == values.end() ? fallback : it->second;
  }
};

// `valued` and `switches` list the flags the subcommand accepts (without the
// repeatable --env, which every simulation command takes). Refused, each
// with one line naming the flag: an unknown flag, a value given to a switch,
// a valued flag without one or given twice, a valued flag whose next word is
// another of the command's flags (its value forgotten: write `--out=--x` or
// `./--x` for a file of that name), an empty value, and a value with a
// control byte other than tab, newline or carriage return.
absl::StatusOr<CliArgs> ParseCliArgs(int argc, char** argv, const std::string& command,
                                     const std::set<std::string>& valued,
                                     const std::set<std::string>& switches);

// ParseCliArgs, except that each flag of `repeatable` may be given many times
// (--axis, --candidate), each value kept in CliArgs::repeated.
absl::StatusOr<CliArgs> ParseRepeatedCliArgs(int argc, char** argv, const std::string& command,
                                             const std::set<std::string>& valued,
                                             const std::set<std::string>& switches,
                                             const std::set<std::string>& repeatable);

}  // namespace servesim::cli

#endif  // SERVESIM_SIM_CLI_CLI_ARGS_H_
