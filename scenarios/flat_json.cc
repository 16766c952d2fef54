#include "scenarios/flat_json.h"

#include <cctype>

#include "absl/strings/str_cat.h"

namespace servesim::scenarios {
namespace {

class Reader {
 public:
  explicit Reader(std::string_view s) : s_(s) {}
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
  bool AtEnd() {
    SkipSpace();
    return i_ >= s_.size();
  }
  absl::StatusOr<std::string> String() {
    if (!Eat('"')) return Error("expected a string");
    std::string out;
    while (i_ < s_.size() && s_[i_] != '"') {
      if (s_[i_] == '\\' && i_ + 1 < s_.size()) ++i_;
      out += s_[i_++];
    }
    if (i_ >= s_.size()) return Error("unterminated string");
    ++i_;
    return out;
  }
  absl::StatusOr<std::string> Scalar() {
    SkipSpace();
    if (i_ < s_.size() && s_[i_] == '"') return String();
    if (i_ < s_.size() && (s_[i_] == '{' || s_[i_] == '[')) {
      return Error("nested objects and arrays are not supported");
    }
    const size_t start = i_;
    while (i_ < s_.size() && s_[i_] != ',' && s_[i_] != '}' &&
           !std::isspace(static_cast<unsigned char>(s_[i_]))) {
      ++i_;
    }
    if (start == i_) return Error("expected a value");
    return std::string(s_.substr(start, i_ - start));
  }
  absl::Status Error(std::string_view what) const {
    return absl::InvalidArgumentError(
        absl::StrCat("JSON: ", std::string(what), " at offset ", i_, " of '", std::string(s_), "'"));
  }

 private:
  std::string_view s_;
  size_t i_ = 0;
};

}  // namespace

absl::StatusOr<std::map<std::string, std::string>> ParseFlatJsonObject(std::string_view text) {
  Reader r(text);
  std::map<std::string, std::string> out;
  if (!r.Eat('{')) return r.Error("expected '{'");
  if (!r.Eat('}')) {
    while (true) {
      absl::StatusOr<std::string> key = r.String();
      if (!key.ok()) return key.status();
      if (!r.Eat(':')) return r.Error("expected ':'");
      absl::StatusOr<std::string> value = r.Scalar();
      if (!value.ok()) return value.status();
      out[*key] = *value;
      if (r.Eat(',')) continue;
      if (r.Eat('}')) break;
      return r.Error("expected ',' or '}'");
    }
  }
  if (!r.AtEnd()) return r.Error("trailing characters");
  return out;
}

}  // namespace servesim::scenarios
