#include "scenarios/mini_yaml.h"

#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "base/byte_order_mark.h"

namespace servesim::scenarios {
namespace {

std::string Trim(std::string s) {
  absl::StripAsciiWhitespace(&s);
  return s;
}

// Drops a comment: '#' at the start or after a blank, outside quotes.
std::string StripComment(const std::string& line) {
  char quote = 0;
  for (size_t i = 0; i < line.size(); ++i) {
    const char ch = line[i];
    if (quote) {
      if (ch == quote) quote = 0;
    } else if (ch == '"' || ch == '\'') {
      quote = ch;
    } else if (ch == '#' && (i == 0 || line[i - 1] == ' ')) {
      return line.substr(0, i);
    }
  }
  return line;
}

absl::StatusOr<std::string> Unquote(const std::string& s, const std::string& where) {
  if (s.size() >= 2 && (s.front() == '"' || s.front() == '\'') && s.back() == s.front()) {
    return s.substr(1, s.size() - 2);
  }
  if (!s.empty() && (s.front() == '"' || s.front() == '\'')) {
    return absl::InvalidArgumentError(absl::StrCat(where, ": unterminated quoted string"));
  }
  if (!s.empty() && (s.front() == '&' || s.front() == '*' || s.front() == '|' ||
                     s.front() == '>' || s.front() == '{' || s.front() == '!')) {
    return absl::InvalidArgumentError(
        absl::StrCat(where, ": unsupported YAML syntax \"", s, "\" (plain scalars, [lists] only)"));
  }
  return s;
}

}  // namespace

absl::StatusOr<std::map<std::string, YamlValue>> ParseMiniYaml(std::string_view text,
                                                               const std::string& context) {
  // A UTF-8 byte-order mark is no part of the first key (PyYAML skips it).
  text = WithoutByteOrderMark(text);
  std::map<std::string, YamlValue> out;
  // Open mappings: (indent of their keys' parent line, dotted path).
  std::vector<std::pair<int, std::string>> stack;
  // Indent of each open mapping's keys, set by its first key (the document's
  // own keys first): YAML requires siblings to line up.
  std::map<std::string, int> key_indent;
  std::string last_key;  // dotted path of the last "key:" with an empty value
  int last_key_indent = -1;
  int line_no = 0;
  const std::vector<std::string> lines = absl::StrSplit(std::string(text), '\n');
  for (const std::string& raw : lines) {
    ++line_no;
    const std::string where = absl::StrCat(context, ": line ", line_no);
    std::string line = StripComment(raw);
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (Trim(line).empty() || Trim(line) == "---") continue;
    if (line.find('\t') != std::string::npos) {
      return absl::InvalidArgumentError(absl::StrCat(where, ": tabs are not allowed in YAML"));
    }
    const int indent = static_cast<int>(line.find_first_not_of(' '));
    std::string body = line.substr(indent);

    if (body.rfind("- ", 0) == 0 || body == "-") {
      // A block-list item of the last empty-valued key.
      if (last_key.empty() || indent < last_key_indent) {
        return absl::InvalidArgumentError(absl::StrCat(where, ": list item without a key"));
      }
      YamlValue& v = out[last_key];
      v.is_list = true;
      v.is_null = false;
      v.line = line_no;
      absl::StatusOr<std::string> item = Unquote(Trim(body.substr(1)), where);
      if (!item.ok()) return item.status();
      v.items.push_back(*item);
      continue;
    }
    const size_t colon = body.find(':');
    if (colon == std::string::npos || (colon + 1 < body.size() && body[colon + 1] != ' ')) {
      return absl::InvalidArgumentError(
          absl::StrCat(where, ": expected \"key: value\", got \"", Trim(body), "\""));
    }
    // A quoted key is the same key to PyYAML ("enable_attention_dp": true).
    absl::StatusOr<std::string> unquoted_key = Unquote(Trim(body.substr(0, colon)), where);
    if (!unquoted_key.ok()) return unquoted_key.status();
    const std::string key = *unquoted_key;
    // Paths are dotted here; PyYAML reads "a.b" as one key, which no option is.
    if (key.find('.') != std::string::npos) {
      return absl::InvalidArgumentError(
          absl::StrCat(where, ": \"", key,
                       "\": a key with a '.' is one key in YAML, not a nested option "
                       "(write the option's section as a mapping)"));
    }
    const std::string value = Trim(body.substr(colon + 1));
    while (!stack.empty() && indent <= stack.back().first) stack.pop_back();
    if (!stack.empty() && out.count(stack.back().second) &&
        out[stack.back().second].is_null) {
      out.erase(stack.back().second);  // the header has children after all
    }
    const std::string parent = stack.empty() ? "" : stack.back().second;
    if (auto [it, first] = key_indent.try_emplace(parent, indent); !first && it->second != indent) {
      return absl::InvalidArgumentError(absl::StrCat(
          where, ": \"", key, "\" is indented ", indent, " spaces where the keys beside it have ",
          it->second));
    }
    const std::string path = stack.empty() ? key : absl::StrCat(parent, ".", key);
    if (out.count(path)) {
      return absl::InvalidArgumentError(absl::StrCat(where, ": duplicate key \"", path, "\""));
    }
    YamlValue v;
    v.line = line_no;
    last_key.clear();
    if (value.empty()) {
      // A mapping header or a block list follows; null until children appear.
      v.is_null = true;
      stack.push_back({indent, path});
      last_key = path;
      last_key_indent = indent;
    } else if (value.front() == '[') {
      if (value.back() != ']') {
        return absl::InvalidArgumentError(absl::StrCat(where, ": unterminated [list]"));
      }
      v.is_list = true;
      const std::string inner = Trim(value.substr(1, value.size() - 2));
      if (!inner.empty()) {
        const std::vector<std::string> items = absl::StrSplit(inner, ',');
        for (const std::string& item : items) {
          absl::StatusOr<std::string> s = Unquote(Trim(item), where);
          if (!s.ok()) return s.status();
          v.items.push_back(*s);
        }
      }
    } else if (value == "null" || value == "~") {
      v.is_null = true;
    } else {
      absl::StatusOr<std::string> s = Unquote(value, where);
      if (!s.ok()) return s.status();
      v.scalar = *s;
    }
    out[path] = std::move(v);
  }
  return out;
}

}  // namespace servesim::scenarios
