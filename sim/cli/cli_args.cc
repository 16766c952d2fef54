#include "sim/cli/cli_args.h"

#include <optional>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/control_byte.h"
#include "base/status_macros.h"

namespace servesim::cli {
namespace {

// "--flag=value" is the flag and an inline value; any other word is itself.
struct FlagWord {
  std::string flag;
  std::string value;
  bool has_inline_value = false;
};

FlagWord SplitFlagWord(const std::string& word) {
  if (const size_t eq = word.find('='); word.rfind("--", 0) == 0 && eq != std::string::npos) {
    return {word.substr(0, eq), word.substr(eq + 1), true};
  }
  return {word, "", false};
}

// An empty value is a mistake on the command line (an unset shell
// variable), never a request for a default: no flag takes one. Nor does any
// take a control byte but whitespace (a command pasted over lines keeps its
// newlines): a terminal escape would be echoed into reports.
absl::Status CheckValue(const std::string& flag, const std::string& value) {
  if (value.empty()) return absl::InvalidArgumentError(absl::StrCat(flag, ": empty value"));
  if (const std::optional<size_t> at = FirstControlByte(absl::string_view(value), true)) {
    return absl::InvalidArgumentError(absl::StrFormat("%s: control byte 0x%02x at column %d", flag,
                                                      static_cast<unsigned char>(value[*at]),
                                                      *at + 1));
  }
  return absl::OkStatus();
}

// A valued flag followed by another of the command's own flags lost its
// value: `--result-json --spread` would write a file named --spread and run
// without the spread. (A file of that name is still `./--spread`.)
absl::Status CheckNotAFlag(const std::string& flag, const std::string& value,
                           const std::set<std::string>& valued,
                           const std::set<std::string>& switches,
                           const std::set<std::string>& repeatable = {}) {
  if (value == "--env" || valued.count(value) || switches.count(value) || repeatable.count(value)) {
    return absl::InvalidArgumentError(absl::StrCat(flag, ": needs a value, got the flag ", value));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<CliArgs> ParseCliArgs(int argc, char** argv, const std::string& command,
                                     const std::set<std::string>& valued,
                                     const std::set<std::string>& switches) {
  CliArgs args;
  args.command = command;
  for (int i = 2; i < argc; ++i) {
    auto [word, value, has_inline] = SplitFlagWord(argv[i]);
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
      RETURN_IF_ERROR(CheckNotAFlag(word, value, valued, switches));
    }
    RETURN_IF_ERROR(CheckValue(word, value));
    if (word == "--env") {
      args.env.push_back(value);
    } else if (!args.values.emplace(word, value).second) {
      // Which of two --serve commands did the user mean? Neither is a guess.
      return absl::InvalidArgumentError(absl::StrCat(word, ": given more than once"));
    }
  }
  return args;
}

absl::StatusOr<CliArgs> ParseRepeatedCliArgs(int argc, char** argv, const std::string& command,
                                             const std::set<std::string>& valued,
                                             const std::set<std::string>& switches,
                                             const std::set<std::string>& repeatable) {
  std::vector<char*> rest = {argv[0], argv[1]};
  std::map<std::string, std::vector<std::string>> repeated;
  for (int i = 2; i < argc; ++i) {
    auto [word, value, has_inline] = SplitFlagWord(argv[i]);
    if (!repeatable.count(word)) {
      rest.push_back(argv[i]);
      continue;
    }
    if (!has_inline) {
      if (i + 1 >= argc) return absl::InvalidArgumentError(absl::StrCat(word, ": needs a value"));
      value = argv[++i];
      RETURN_IF_ERROR(CheckNotAFlag(word, value, valued, switches, repeatable));
    }
    RETURN_IF_ERROR(CheckValue(word, value));
    repeated[word].push_back(value);
  }
  ASSIGN_OR_RETURN(CliArgs args, ParseCliArgs(static_cast<int>(rest.size()), rest.data(), command,
                                              valued, switches));
  args.repeated = std::move(repeated);
  return args;
}

}  // namespace servesim::cli
