// A cursor over JSON text for the project's small JSON readers (the flat
// objects of engine flags, vllm bench's --save-result files, Mooncake trace
// rows): blanks,
// punctuation, strings, bare words, and skipping a whole value.
#ifndef SERVESIM_BASE_JSON_SCANNER_H_
#define SERVESIM_BASE_JSON_SCANNER_H_

#include <cctype>
#include <cstddef>
#include <optional>
#include <string>

#include "absl/strings/string_view.h"

namespace servesim {

class JsonScanner {
 public:
  explicit JsonScanner(absl::string_view text) : s_(text) {}

  size_t offset() const { return i_; }

  void SkipSpace() {
    while (i_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[i_]))) ++i_;
  }
  // The next character after blanks, '\0' at the end.
  char Peek() {
    SkipSpace();
    return i_ < s_.size() ? s_[i_] : '\0';
  }
  bool Eat(char c) {
    if (Peek() != c) return false;  // '\0' at the end matches no token
    ++i_;
    return true;
  }
  bool AtEnd() {
    SkipSpace();
    return i_ >= s_.size();
  }
  // A string's content; an escape keeps the escaped character (the readers'
  // keys and values need no \u decoding). nullopt: no string here, or
  // unterminated.
  std::optional<std::string> String() {
    if (!Eat('"')) return std::nullopt;
    std::string out;
    while (i_ < s_.size() && s_[i_] != '"') {
      if (s_[i_] == '\\' && ++i_ >= s_.size()) return std::nullopt;
      out += s_[i_++];
    }
    if (i_ >= s_.size()) return std::nullopt;
    ++i_;
    return out;
  }
  // A bare value as written: a number, true, false, null, or Python's NaN /
  // Infinity. Empty if none.
  absl::string_view Word() {
    SkipSpace();
    const size_t start = i_;
    while (i_ < s_.size() && absl::string_view(",:]}[{\"").find(s_[i_]) == absl::string_view::npos &&
           !std::isspace(static_cast<unsigned char>(s_[i_]))) {
      ++i_;
    }
    return s_.substr(start, i_ - start);
  }
  // The run of characters from `chars` that starts here, after blanks (empty
  // if none): a reader that accepts only some spellings of a number takes its
  // own characters, where Word() would take any bare value.
  absl::string_view Span(absl::string_view chars) {
    SkipSpace();
    const size_t start = i_;
    while (i_ < s_.size() && chars.find(s_[i_]) != absl::string_view::npos) ++i_;
    return s_.substr(start, i_ - start);
  }
  // Skips one value of any kind, nested ones included; false if malformed.
  bool SkipValue(int depth = 0) {
    if (depth > 64) return false;
    const char c = Peek();
    if (c == '"') return String().has_value();
    if (c == '[' || c == '{') {
      const char close = c == '[' ? ']' : '}';
      ++i_;
      if (Eat(close)) return true;
      while (true) {
        if (c == '{' && (!String() || !Eat(':'))) return false;
        if (!SkipValue(depth + 1)) return false;
        if (Eat(',')) continue;
        return Eat(close);
      }
    }
    return !Word().empty();
  }

 private:
  absl::string_view s_;
  size_t i_ = 0;
};

}  // namespace servesim

#endif  // SERVESIM_BASE_JSON_SCANNER_H_
