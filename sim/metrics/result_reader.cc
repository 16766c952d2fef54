#include "sim/metrics/result_reader.h"

#include <cctype>
#include <cmath>
#include <optional>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "sim/metrics/report.h"

namespace servesim::metrics {
namespace {

absl::Status NeedsCoreFigures(const std::map<std::string, double>& figures, absl::string_view what) {
  for (const char* key : {"completed", "duration"}) {
    if (!figures.count(key)) {
      return absl::InvalidArgumentError(absl::StrCat(what, " has no \"", key, "\" figure"));
    }
  }
  return absl::OkStatus();
}

// A JSON reader that keeps the top level's numbers and skips every other
// value, nested ones included.
class JsonFigureReader {
 public:
  explicit JsonFigureReader(absl::string_view s) : s_(s) {}

  absl::StatusOr<std::map<std::string, double>> TopLevelNumbers() {
    std::map<std::string, double> out;
    if (!Eat('{')) return Error("expected '{'");
    if (!Eat('}')) {
      while (true) {
        std::optional<std::string> key = String();
        if (!key) return Error("expected a key");
        if (!Eat(':')) return Error("expected ':'");
        SkipSpace();
        if (i_ < s_.size() && (s_[i_] == '-' || std::isdigit(static_cast<unsigned char>(s_[i_])))) {
          const size_t start = i_;
          while (i_ < s_.size() && absl::string_view("+-.0123456789eE").find(s_[i_]) !=
                                       absl::string_view::npos) {
            ++i_;
          }
          double v = 0;
          if (!absl::SimpleAtod(s_.substr(start, i_ - start), &v)) return Error("bad number");
          if (std::isfinite(v)) out[*key] = v;
        } else if (!SkipValue(0)) {
          return Error(absl::StrCat("bad value of \"", *key, "\""));
        }
        if (Eat(',')) continue;
        if (Eat('}')) break;
        return Error("expected ',' or '}'");
      }
    }
    SkipSpace();
    if (i_ != s_.size()) return Error("trailing characters");
    return out;
  }

 private:
  void SkipSpace() {
    while (i_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[i_]))) ++i_;
  }
  bool Eat(char c) {
    SkipSpace();
    if (i_ < s_.size() && s_[i_] == c) {
      ++i_;
      return true;
    }
    return false;
  }
  // A string's content (escapes kept as the escaped character; keys of
  // vllm's result need no more).
  std::optional<std::string> String() {
    if (!Eat('"')) return std::nullopt;
    std::string out;
    while (i_ < s_.size() && s_[i_] != '"') {
      if (s_[i_] == '\\') {
        if (++i_ >= s_.size()) return std::nullopt;
      }
      out += s_[i_++];
    }
    if (i_ >= s_.size()) return std::nullopt;
    ++i_;
    return out;
  }
  bool SkipValue(int depth) {
    if (depth > 64) return false;
    SkipSpace();
    if (i_ >= s_.size()) return false;
    const char c = s_[i_];
    if (c == '"') return String().has_value();
    if (c == '[' || c == '{') {
      const char close = c == '[' ? ']' : '}';
      ++i_;
      if (Eat(close)) return true;
      while (true) {
        if (c == '{') {
          if (!String() || !Eat(':')) return false;
        }
        if (!SkipValue(depth + 1)) return false;
        if (Eat(',')) continue;
        return Eat(close);
      }
    }
    // A bare word: number, true, false, null, NaN, Infinity (Python writes them).
    const size_t start = i_;
    while (i_ < s_.size() && (std::isalnum(static_cast<unsigned char>(s_[i_])) ||
                              absl::string_view("+-.").find(s_[i_]) != absl::string_view::npos)) {
      ++i_;
    }
    return i_ > start;
  }
  absl::Status Error(absl::string_view what) const {
    return absl::InvalidArgumentError(absl::StrCat("JSON: ", what, " at offset ", i_));
  }

  absl::string_view s_;
  size_t i_ = 0;
};

}  // namespace

absl::StatusOr<std::map<std::string, double>> ReadResultJsonFigures(absl::string_view json) {
  absl::StatusOr<std::map<std::string, double>> figures = JsonFigureReader(json).TopLevelNumbers();
  if (!figures.ok()) return figures.status();
  if (absl::Status s = NeedsCoreFigures(*figures, "the result JSON"); !s.ok()) return s;
  return figures;
}

absl::StatusOr<std::map<std::string, double>> ReadBenchReportFigures(absl::string_view text) {
  constexpr absl::string_view kTitle = " Serving Benchmark Result ";
  std::map<std::string, double> figures;
  int blocks = 0;
  bool inside = false;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    line = absl::StripTrailingAsciiWhitespace(line);
    if (line.find(kTitle) != absl::string_view::npos && line.find("=====") != absl::string_view::npos) {
      if (++blocks > 1) {
        return absl::InvalidArgumentError(
            "the report has more than one \"Serving Benchmark Result\" block");
      }
      inside = true;
      continue;
    }
    if (!inside) continue;
    if (line == std::string(50, '=')) {
      inside = false;
      continue;
    }
    // "<label>: <value>", the label ending at its colon.
    const size_t colon = line.find(": ");
    if (colon == absl::string_view::npos) continue;  // a block title or blank
    const absl::string_view label = line.substr(0, colon + 1);
    const absl::string_view value = absl::StripAsciiWhitespace(line.substr(colon + 1));
    std::optional<std::string> key = ResultKeyOfReportLabel(label);
    if (!key) continue;
    double v = 0;
    if (!absl::SimpleAtod(value, &v)) {
      return absl::InvalidArgumentError(
          absl::StrCat("the report's \"", label, "\" line has no number: '", value, "'"));
    }
    figures[*key] = v;
  }
  if (blocks == 0) {
    return absl::InvalidArgumentError("no \"Serving Benchmark Result\" block in the report");
  }
  if (inside) {
    return absl::InvalidArgumentError("the \"Serving Benchmark Result\" block is not closed");
  }
  if (absl::Status s = NeedsCoreFigures(figures, "the report"); !s.ok()) return s;
  return figures;
}

}  // namespace servesim::metrics
