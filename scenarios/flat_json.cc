#include "scenarios/flat_json.h"

#include <optional>

#include "absl/strings/str_cat.h"
#include "base/json_scanner.h"

namespace servesim::scenarios {
namespace {

class Reader {
 public:
  explicit Reader(std::string_view s) : text_(s), scan_(absl::string_view(s.data(), s.size())) {}
  bool Eat(char c) { return scan_.Eat(c); }
  bool AtEnd() { return scan_.AtEnd(); }
  absl::StatusOr<std::string> String() {
    if (scan_.Peek() != '"') return Error("expected a string");
    std::optional<std::string> s = scan_.String();
    if (!s) return Error(scan_.string_error());
    return *s;
  }
  absl::StatusOr<std::string> Scalar() {
    const char c = scan_.Peek();
    if (c == '"') return String();
    if (c == '{' || c == '[') return Error("nested objects and arrays are not supported");
    const absl::string_view word = scan_.Word();
    if (word.empty()) return Error("expected a value");
    return std::string(word);
  }
  absl::Status Error(std::string_view what) const {
    return absl::InvalidArgumentError(absl::StrCat("JSON: ", std::string(what), " at offset ",
                                                   scan_.offset(), " of '", std::string(text_),
                                                   "'"));
  }

 private:
  std::string_view text_;
  JsonScanner scan_;
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
