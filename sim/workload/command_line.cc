#include "sim/workload/command_line.h"

#include <algorithm>
#include <cstring>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "base/decimal.h"
#include "sim/workload/string_view_compat.h"

namespace servesim::workload {
namespace {

bool IsBlank(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

// Finds the bracket that closes the JSON literal opening at line[start];
// returns npos if there is none. Brackets inside JSON strings do not count.
size_t MatchJsonBracket(std::string_view line, size_t start) {
  int depth = 0;
  bool in_string = false;
  for (size_t j = start; j < line.size(); ++j) {
    const char ch = line[j];
    if (in_string) {
      if (ch == '\\') {
        ++j;
      } else if (ch == '"') {
        in_string = false;
      }
      continue;
    }
    if (ch == '"') {
      in_string = true;
    } else if (ch == '{' || ch == '[') {
      ++depth;
    } else if (ch == '}' || ch == ']') {
      if (--depth == 0) return j;
    }
  }
  return std::string_view::npos;
}

// A word that looks like a flag rather than a value. Negative numbers
// ("-1", "-0.5") and a lone "-" are values, as in argparse.
bool LooksLikeFlag(std::string_view word) {
  if (word.size() < 2 || word[0] != '-') return false;
  double unused;
  return !absl::SimpleAtod(ToAbsl(word), &unused);
}

std::string Prefix(const std::string& context, std::string_view flag) {
  if (context.empty()) return absl::StrCat(ToAbsl(flag), ": ");
  return absl::StrCat(context, ": ", ToAbsl(flag), ": ");
}

}  // namespace

std::string ShellQuote(std::string_view word) {
  if (word.empty()) return "''";
  const bool safe = std::all_of(word.begin(), word.end(), [](char c) {
    return absl::ascii_isalnum(static_cast<unsigned char>(c)) ||
           std::string_view("_./:=,@%+-").find(c) != std::string_view::npos;
  });
  if (safe) return std::string(word);
  std::string out = "'";
  for (char c : word) {
    if (c == '\'') {
      out += "'\\''";
    } else {
      out += c;
    }
  }
  return out + "'";
}

std::string JoinShellWords(const std::vector<std::string>& words) {
  std::vector<std::string> quoted;
  quoted.reserve(words.size());
  for (const std::string& w : words) quoted.push_back(ShellQuote(w));
  return absl::StrJoin(quoted, " ");
}

std::string_view WithoutShellComment(std::string_view line) {
  char quote = 0;
  for (size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (quote != 0) {
      if (c == quote) {
        quote = 0;
      } else if (c == '\\' && quote == '"') {
        ++i;
      }
    } else if (c == '\'' || c == '"') {
      quote = c;
    } else if (c == '\\') {
      ++i;
    } else if (c == '#' &&
               (i == 0 || absl::ascii_isspace(static_cast<unsigned char>(line[i - 1])))) {
      return line.substr(0, i);
    }
  }
  return line;
}

absl::StatusOr<std::vector<std::string>> SplitShellWords(std::string_view line) {
  std::vector<std::string> words;
  std::string current;
  bool in_word = false;
  size_t i = 0;
  while (i < line.size()) {
    const char c = line[i];
    if (IsBlank(c)) {
      if (in_word) words.push_back(std::move(current));
      current.clear();
      in_word = false;
      ++i;
    } else if (c == '\'') {
      const size_t close = line.find('\'', i + 1);
      if (close == std::string_view::npos) {
        return absl::InvalidArgumentError(
            absl::StrCat("unterminated single quote at column ", i + 1));
      }
      current.append(line.substr(i + 1, close - i - 1));
      in_word = true;
      i = close + 1;
    } else if (c == '"') {
      const size_t open = i++;
      in_word = true;
      while (true) {
        if (i >= line.size()) {
          return absl::InvalidArgumentError(
              absl::StrCat("unterminated double quote at column ", open + 1));
        }
        const char ch = line[i];
        if (ch == '"') {
          ++i;
          break;
        }
        if (ch == '\\' && i + 1 < line.size() &&
            std::strchr("$`\"\\\n", line[i + 1]) != nullptr) {
          if (line[i + 1] != '\n') current.push_back(line[i + 1]);
          i += 2;
          continue;
        }
        current.push_back(ch);
        ++i;
      }
    } else if (c == '\\') {
      if (i + 1 >= line.size()) {
        return absl::InvalidArgumentError(
            absl::StrCat("trailing backslash at column ", i + 1));
      }
      if (line[i + 1] != '\n') {
        current.push_back(line[i + 1]);
        in_word = true;
      }
      i += 2;
    } else if ((c == '{' || c == '[') && !in_word) {
      const size_t close = MatchJsonBracket(line, i);
      if (close == std::string_view::npos) {
        return absl::InvalidArgumentError(
            absl::StrCat("unmatched '", std::string(1, c), "' at column ", i + 1));
      }
      current.append(line.substr(i, close - i + 1));
      in_word = true;
      i = close + 1;
    } else {
      current.push_back(c);
      in_word = true;
      ++i;
    }
  }
  if (in_word) words.push_back(std::move(current));
  return words;
}

absl::StatusOr<ParsedFlags> ParseFlags(const std::vector<std::string>& words,
                                       const std::vector<FlagSpec>& specs,
                                       const FlagParseOptions& options) {
  auto normalize = [&](std::string_view spelling) {
    std::string s(spelling);
    if (options.underscores_match_dashes && s.rfind("--", 0) == 0) {
      s = "--" + absl::StrReplaceAll(s.substr(2), {{"_", "-"}});
    }
    return s;
  };
  ParsedFlags parsed;
  parsed.context_ = options.context;
  parsed.max_int_ = options.max_int;
  std::map<std::string, const FlagSpec*> by_spelling;
  for (const FlagSpec& spec : specs) {
    ParsedFlags::Entry entry;
    entry.takes_value = spec.takes_value;
    if (!parsed.entries_.emplace(spec.name, entry).second) {
      return absl::InternalError(absl::StrCat(Prefix(options.context, spec.name),
                                              "declared twice"));
    }
    std::vector<std::string> spellings = spec.aliases;
    spellings.push_back(spec.name);
    for (const std::string& spelling : spellings) {
      if (!by_spelling.emplace(normalize(spelling), &spec).second) {
        return absl::InternalError(absl::StrCat(Prefix(options.context, spelling),
                                                "spelling declared twice"));
      }
    }
  }

  for (size_t i = 0; i < words.size(); ++i) {
    const std::string& word = words[i];
    if (!LooksLikeFlag(word)) {
      if (!options.allow_positionals) {
        return absl::InvalidArgumentError(
            absl::StrCat(options.context.empty() ? "" : options.context + ": ",
                         "unexpected argument \"", word, "\""));
      }
      parsed.positionals_.push_back(word);
      continue;
    }
    const size_t eq = word.find('=');
    const std::string spelling = word.substr(0, eq);
    auto it = by_spelling.find(normalize(spelling));
    if (it == by_spelling.end()) {
      return absl::InvalidArgumentError(
          absl::StrCat(options.context.empty() ? "" : options.context + ": ",
                       "unknown flag ", spelling));
    }
    const FlagSpec& spec = *it->second;
    ParsedFlags::Entry& entry = parsed.entries_.at(spec.name);
    const std::string prefix = Prefix(options.context, spec.name);
    std::vector<std::string> values;
    if (!spec.takes_value) {
      if (eq != std::string::npos) {
        return absl::InvalidArgumentError(absl::StrCat(
            prefix, "is a switch and takes no value, got \"", word.substr(eq + 1), "\""));
      }
    } else if (eq != std::string::npos) {
      values.push_back(word.substr(eq + 1));
    } else {
      while (i + 1 < words.size() && !LooksLikeFlag(words[i + 1])) {
        values.push_back(words[++i]);
        if (!spec.multiple_values) break;
      }
      if (values.empty()) {
        return absl::InvalidArgumentError(absl::StrCat(prefix, "expected a value"));
      }
    }
    if (!entry.present) parsed.given_.push_back(spec.name);
    entry.present = true;
    entry.values = std::move(values);
  }
  return parsed;
}

absl::StatusOr<const ParsedFlags::Entry*> ParsedFlags::Find(std::string_view name) const {
  auto it = entries_.find(name);
  if (it == entries_.end()) {
    return absl::InternalError(absl::StrCat(Prefix(context_, name), "not a declared flag"));
  }
  return &it->second;
}

bool ParsedFlags::Has(std::string_view name) const {
  auto it = entries_.find(name);
  return it != entries_.end() && it->second.present;
}

absl::StatusOr<std::string> ParsedFlags::Single(std::string_view name) const {
  auto entry = Find(name);
  if (!entry.ok()) return entry.status();
  if (!(*entry)->takes_value) {
    return absl::InternalError(absl::StrCat(Prefix(context_, name), "is a switch, not a valued flag"));
  }
  if (!(*entry)->present) {
    return absl::NotFoundError(absl::StrCat(Prefix(context_, name), "not given"));
  }
  if ((*entry)->values.size() != 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        Prefix(context_, name), "expected one value, got ", (*entry)->values.size()));
  }
  return (*entry)->values.front();
}

absl::StatusOr<std::string> ParsedFlags::GetString(std::string_view name) const {
  return Single(name);
}

absl::StatusOr<std::vector<std::string>> ParsedFlags::GetStrings(std::string_view name) const {
  auto entry = Find(name);
  if (!entry.ok()) return entry.status();
  if (!(*entry)->present) {
    return absl::NotFoundError(absl::StrCat(Prefix(context_, name), "not given"));
  }
  return (*entry)->values;
}

absl::StatusOr<int64_t> ParsedFlags::GetInt(std::string_view name) const {
  auto text = Single(name);
  if (!text.ok()) return text.status();
  int64_t value;
  if (!absl::SimpleAtoi(*text, &value)) {
    return absl::InvalidArgumentError(
        absl::StrCat(Prefix(context_, name), "expected an integer, got \"", *text, "\""));
  }
  if (max_int_ != std::numeric_limits<int64_t>::max() && (value > max_int_ || value < -max_int_)) {
    return absl::InvalidArgumentError(absl::StrCat(Prefix(context_, name), "must be within +-",
                                                   max_int_, ", got ", value));
  }
  return value;
}

absl::StatusOr<double> ParsedFlags::GetDouble(std::string_view name) const {
  auto text = Single(name);
  if (!text.ok()) return text.status();
  double value;
  if (!ParseDecimal(*text, &value)) {
    return absl::InvalidArgumentError(
        absl::StrCat(Prefix(context_, name), "expected a number, got \"", *text, "\""));
  }
  return value;
}

absl::StatusOr<bool> ParsedFlags::GetBool(std::string_view name) const {
  auto entry = Find(name);
  if (!entry.ok()) return entry.status();
  if (!(*entry)->takes_value) return (*entry)->present;
  auto text = Single(name);
  if (!text.ok()) return text.status();
  const std::string lower = absl::AsciiStrToLower(*text);
  if (lower == "true" || lower == "1" || lower == "yes") return true;
  if (lower == "false" || lower == "0" || lower == "no") return false;
  return absl::InvalidArgumentError(
      absl::StrCat(Prefix(context_, name), "expected true or false, got \"", *text, "\""));
}

absl::StatusOr<std::string> ParsedFlags::GetStringOr(std::string_view name,
                                                     std::string fallback) const {
  if (!Has(name)) {
    auto entry = Find(name);
    if (!entry.ok()) return entry.status();
    return fallback;
  }
  return GetString(name);
}

absl::StatusOr<int64_t> ParsedFlags::GetIntOr(std::string_view name, int64_t fallback) const {
  if (!Has(name)) {
    auto entry = Find(name);
    if (!entry.ok()) return entry.status();
    return fallback;
  }
  return GetInt(name);
}

absl::StatusOr<double> ParsedFlags::GetDoubleOr(std::string_view name, double fallback) const {
  if (!Has(name)) {
    auto entry = Find(name);
    if (!entry.ok()) return entry.status();
    return fallback;
  }
  return GetDouble(name);
}

}  // namespace servesim::workload
