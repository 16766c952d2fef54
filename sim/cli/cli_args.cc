#include "sim/cli/cli_args.h"

#include "absl/strings/str_cat.h"

namespace servesim::cli {

absl::StatusOr<CliArgs> ParseCliArgs(int argc, char** argv, const std::string& command,
                                     const std::set<std::string>& valued,
                                     const std::set<std::string>& switches) {
  CliArgs args;
  args.command = command;
  for (int i = 2; i < argc; ++i) {
    std::string word = argv[i];
    std::string value;
    bool has_inline = false;
    if (const size_t eq = word.find('='); word.rfind("--", 0) == 0 && eq != std::string::npos) {
      value = word.substr(eq + 1);
      word = word.substr(0, eq);
      has_inline = true;
    }
    if (switches.count(word)) {
      if (has_inline) return absl::InvalidArgumentError(absl::StrCat(word, ": takes no value"));
      args.switches.insert(word);
      continue;
    }
    if (!valued.count(word) && word != "--env") {
      return absl::InvalidArgumentError(absl::StrCat(command, ": unknown flag ", word));
    }
    if (!has_inline) {
      if (i + 1 >= argc) return absl::InvalidArgumentError(absl::StrCat(word, ": needs a value"));
      value = argv[++i];
    }
    if (word == "--env") {
      args.env.push_back(value);
    } else if (!args.values.emplace(word, value).second) {
      // Which of two --serve commands did the user mean? Neither is a guess.
      return absl::InvalidArgumentError(absl::StrCat(word, ": given more than once"));
    }
  }
  return args;
}

}  // namespace servesim::cli
