// A cursor over JSON text for the project's small JSON readers (the flat
// objects of engine flags, vllm bench's --save-result files, Mooncake trace
// rows): blanks,
// punctuation, strings, bare words, and skipping a whole value.
#ifndef SERVESIM_BASE_JSON_SCANNER_H_
#define SERVESIM_BASE_JSON_SCANNER_H_

#include <cctype>
#include <cstddef>
#include <cstdint>
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
  // A string's content with its escapes decoded as JSON defines them (\uXXXX
  // to UTF-8, a surrogate pair to one character). nullopt: no string here,
  // unterminated, or a bad escape; string_error() says which.
  std::optional<std::string> String() {
    string_error_ = "expected a string";
    if (!Eat('"')) return std::nullopt;
    std::string out;
    while (i_ < s_.size() && s_[i_] != '"') {
      if (s_[i_] != '\\') {
        out += s_[i_++];
        continue;
      }
      if (++i_ >= s_.size()) break;
      const char e = s_[i_++];
      // The two-character escapes and what each stands for.
      constexpr absl::string_view kEscaped = "\"\\/bfnrt", kMeant = "\"\\/\b\f\n\r\t";
      if (const size_t k = kEscaped.find(e); k != absl::string_view::npos) {
        out += kMeant[k];
        continue;
      }
      if (e != 'u') {
        string_error_ = std::string("invalid escape '\\") + e + "'";
        return std::nullopt;
      }
      std::optional<uint32_t> code = Hex4();
      // A high surrogate takes the low one that must follow it.
      if (code && *code >= 0xD800 && *code < 0xDC00) {
        std::optional<uint32_t> low;
        if (s_.substr(i_, 2) == "\\u") {
          i_ += 2;
          low = Hex4();
        }
        code = low && *low >= 0xDC00 && *low < 0xE000
                   ? std::optional<uint32_t>(0x10000 + ((*code - 0xD800) << 10) + (*low - 0xDC00))
                   : std::nullopt;
      } else if (code && *code >= 0xDC00 && *code < 0xE000) {
        code = std::nullopt;  // a low surrogate alone
      }
      if (!code) {
        string_error_ = "invalid \\u escape";
        return std::nullopt;
      }
      AppendUtf8(*code, out);
    }
    if (i_ >= s_.size()) {
      string_error_ = "unterminated string";
      return std::nullopt;
    }
    ++i_;
    return out;
  }
  // Why the last String() gave nullopt.
  const std::string& string_error() const { return string_error_; }
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
  // Four hex digits at the cursor, consumed; nullopt if not four.
  std::optional<uint32_t> Hex4() {
    if (i_ + 4 > s_.size()) return std::nullopt;
    uint32_t v = 0;
    for (int k = 0; k < 4; ++k) {
      const char c = s_[i_ + k];
      const int d = c >= '0' && c <= '9'   ? c - '0'
                    : c >= 'a' && c <= 'f' ? c - 'a' + 10
                    : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                           : -1;
      if (d < 0) return std::nullopt;
      v = v * 16 + static_cast<uint32_t>(d);
    }
    i_ += 4;
    return v;
  }
  static void AppendUtf8(uint32_t code, std::string& out) {
    if (code < 0x80) {
      out += static_cast<char>(code);
    } else if (code < 0x800) {
      out += static_cast<char>(0xC0 | (code >> 6));
      out += static_cast<char>(0x80 | (code & 0x3F));
    } else if (code < 0x10000) {
      out += static_cast<char>(0xE0 | (code >> 12));
      out += static_cast<char>(0x80 | ((code >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (code & 0x3F));
    } else {
      out += static_cast<char>(0xF0 | (code >> 18));
      out += static_cast<char>(0x80 | ((code >> 12) & 0x3F));
      out += static_cast<char>(0x80 | ((code >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (code & 0x3F));
    }
  }

  absl::string_view s_;
  size_t i_ = 0;
  std::string string_error_;
};

}  // namespace servesim

#endif  // SERVESIM_BASE_JSON_SCANNER_H_
