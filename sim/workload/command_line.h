// Command lines as users paste them: shell-like word splitting and a small
// declarative flag reader shared by the bench-client and engine-command parsers.
#ifndef SERVESIM_SIM_WORKLOAD_COMMAND_LINE_H_
#define SERVESIM_SIM_WORKLOAD_COMMAND_LINE_H_

#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace servesim::workload {

// Splits a command line into words like a POSIX shell, without expansions:
// - blanks (space, tab, newline) separate words;
// - '...' keeps everything literally; "..." keeps everything except that a
//   backslash escapes $ ` " \ and newline (other backslashes stay);
// - an unquoted backslash escapes the next character (backslash-newline joins
//   lines);
// - one deliberate deviation: an unquoted '{' or '[' that starts a word opens a
//   JSON literal that runs verbatim (quotes and blanks kept) to its matching
//   bracket, because recorded commands contain
//   `--speculative-config {"method":"mtp","num_speculative_tokens":1}`
//   unquoted, which a real shell would strip to {method:mtp,...}.
// Errors: unterminated quote, unmatched JSON bracket, trailing backslash.
absl::StatusOr<std::vector<std::string>> SplitShellWords(std::string_view line);

// `line` up to its shell comment: a '#' that starts a word outside quotes
// (`--label '#3'` and `a#b` keep theirs), as a POSIX shell reads it.
std::string_view WithoutShellComment(std::string_view line);

// `word` as SplitShellWords (and a POSIX shell) reads it back: as it is when
// every character is safe, else in single quotes ('' for an empty word).
std::string ShellQuote(std::string_view word);
// Words back to one line that SplitShellWords reads as the same words.
std::string JoinShellWords(const std::vector<std::string>& words);

// One accepted flag. `name` is the canonical spelling, leading dashes included
// ("--max-model-len"); `aliases` are other spellings ("-tp", "--tp"); a flag
// with takes_value = false is a boolean switch; multiple_values = true reads
// every following word up to the next flag (argparse nargs="+").
struct FlagSpec {
  std::string name;
  std::vector<std::string> aliases;
  bool takes_value = true;
  bool multiple_values = false;
};

struct FlagParseOptions {
  // Prefix of every error message, e.g. "--serve" or "--bench".
  std::string context;
  // vLLM and TensorRT-LLM accept --max_model_len for --max-model-len: when
  // true, '_' and '-' are the same character in long flag names.
  bool underscores_match_dashes = false;
  // Words that are not flags or flag values (e.g. `vllm serve MODEL`); when
  // false they are an error.
  bool allow_positionals = false;
  // Integer values past this (either sign) are refused: an engine setting of
  // 2^31 tokens or GPUs is a typo, and its products would leave int64.
  int64_t max_int = std::numeric_limits<int64_t>::max();
};

// The flags found on one command line. Getters take the canonical name; a
// flag given twice keeps its last value (argparse semantics). Every getter
// error is one line: "<context>: <flag>: <problem>".
class ParsedFlags {
 public:
  // True if the flag (any spelling) appeared.
  bool Has(std::string_view name) const;
  // Canonical names in the order they first appeared.
  const std::vector<std::string>& given() const { return given_; }
  const std::vector<std::string>& positionals() const { return positionals_; }

  // Value getters: NotFound if the flag is absent, InvalidArgument if the
  // value does not parse ("--serve: --max-model-len: expected an integer, got \"abc\"").
  absl::StatusOr<std::string> GetString(std::string_view name) const;
  absl::StatusOr<std::vector<std::string>> GetStrings(std::string_view name) const;
  absl::StatusOr<int64_t> GetInt(std::string_view name) const;
  absl::StatusOr<double> GetDouble(std::string_view name) const;
  // For a boolean switch: whether it appeared (never NotFound). For a valued
  // flag: true/false/1/0/yes/no (case-insensitive).
  absl::StatusOr<bool> GetBool(std::string_view name) const;

  // Same, but `fallback` when the flag is absent.
  absl::StatusOr<std::string> GetStringOr(std::string_view name, std::string fallback) const;
  absl::StatusOr<int64_t> GetIntOr(std::string_view name, int64_t fallback) const;
  absl::StatusOr<double> GetDoubleOr(std::string_view name, double fallback) const;

 private:
  friend absl::StatusOr<ParsedFlags> ParseFlags(const std::vector<std::string>&,
                                                const std::vector<FlagSpec>&,
                                                const FlagParseOptions&);
  struct Entry {
    bool takes_value = true;
    std::vector<std::string> values;  // last occurrence only
    bool present = false;
  };
  absl::StatusOr<const Entry*> Find(std::string_view name) const;
  absl::StatusOr<std::string> Single(std::string_view name) const;

  std::string context_;
  int64_t max_int_ = std::numeric_limits<int64_t>::max();
  std::map<std::string, Entry, std::less<>> entries_;  // by canonical name
  std::vector<std::string> given_;
  std::vector<std::string> positionals_;
};

// Reads `words` (already split, program words removed) against `specs`.
// Accepts `--flag value`, `--flag=value`, short flags like `-tp 8`, boolean
// switches, and negative numbers as values (`--seed -1`). An unknown flag is an
// error naming it: "--bench: unknown flag --foo".
absl::StatusOr<ParsedFlags> ParseFlags(const std::vector<std::string>& words,
                                       const std::vector<FlagSpec>& specs,
                                       const FlagParseOptions& options);

}  // namespace servesim::workload

#endif  // SERVESIM_SIM_WORKLOAD_COMMAND_LINE_H_
