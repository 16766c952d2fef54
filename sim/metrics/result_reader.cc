#include "sim/metrics/result_reader.h"

#include <cctype>
#include <cmath>
#include <optional>
#include <set>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "base/json_scanner.h"
#include "base/status_macros.h"
#include "sim/metrics/report.h"

namespace servesim::metrics {
namespace {

// `non_finite`: keys whose value was NaN or +-Infinity, which `figures` leaves
// out; a core figure among them is named as such rather than as missing.
absl::Status NeedsCoreFigures(const std::map<std::string, double>& figures,
                              const std::map<std::string, std::string>& non_finite,
                              absl::string_view what) {
  for (const char* key : {"completed", "duration"}) {
    if (auto it = non_finite.find(key); it != non_finite.end()) {
      return absl::InvalidArgumentError(
          absl::StrCat(what, "'s \"", key, "\" is not a finite number: ", it->second));
    }
    if (!figures.count(key)) {
      return absl::InvalidArgumentError(absl::StrCat(what, " has no \"", key, "\" figure"));
    }
  }
  return absl::OkStatus();
}

// What `non_finite` records for a figure written as a string, list, object
// or boolean.
constexpr char kNotANumber[] = "not a number";

absl::Status JsonError(JsonScanner& scan, absl::string_view what) {
  return absl::InvalidArgumentError(absl::StrCat("JSON: ", what, " at offset ", scan.offset()));
}

// Walks the top-level object of `json`: `read_value(key, scan)` reads or
// skips each key's value at the scanner. Nothing may follow the object.
absl::Status WalkTopLevelObject(
    absl::string_view json,
    absl::FunctionRef<absl::Status(const std::string& key, JsonScanner& scan)> read_value) {
  JsonScanner scan(json);
  if (!scan.Eat('{')) return JsonError(scan, "expected '{'");
  if (!scan.Eat('}')) {
    while (true) {
      std::optional<std::string> key = scan.String();
      if (!key) return JsonError(scan, absl::StrCat("a key: ", scan.string_error()));
      if (!scan.Eat(':')) return JsonError(scan, "expected ':'");
      RETURN_IF_ERROR(read_value(*key, scan));
      if (scan.Eat(',')) continue;
      if (scan.Eat('}')) break;
      return JsonError(scan, "expected ',' or '}'");
    }
  }
  if (!scan.AtEnd()) {
    // vllm bench serve --append-result adds each run's object on a line of
    // its own: one run per file here.
    if (scan.Peek() == '{') {
      return JsonError(scan, "a second result object (--append-result writes one per run; "
                             "keep one run's result per file)");
    }
    return JsonError(scan, "trailing characters");
  }
  return absl::OkStatus();
}

// The top level's finite numbers of a JSON object; every other value is
// skipped, the non-finite ones (Python's NaN, Infinity) noted in `non_finite`
// as written, and so is any other value of a reported figure but null (a
// string, a list: "not a number").
absl::StatusOr<std::map<std::string, double>> TopLevelNumbers(
    absl::string_view json, std::map<std::string, std::string>* non_finite) {
  std::map<std::string, double> out;
  RETURN_IF_ERROR(WalkTopLevelObject(json, [&](const std::string& key, JsonScanner& scan) {
    const char c = scan.Peek();
    if (c == '-' || std::isdigit(static_cast<unsigned char>(c))) {
      const absl::string_view word = scan.Word();
      double v = 0;
      if (!absl::SimpleAtod(word, &v)) return JsonError(scan, "bad number");
      if (std::isfinite(v)) {
        out[key] = v;
      } else {
        (*non_finite)[key] = std::string(word);
      }
    } else if (c == 'N' || c == 'I') {
      const absl::string_view word = scan.Word();
      double v = 0;
      if (word.empty()) return JsonError(scan, absl::StrCat("bad value of \"", key, "\""));
      if (absl::SimpleAtod(word, &v) && !std::isfinite(v)) (*non_finite)[key] = std::string(word);
    } else {
      // null is vLLM's "not measured" (request_goodput without --goodput).
      if (IsReportedFigure(key, /*saved_too=*/true) && c != 'n') {
        (*non_finite)[key] = kNotANumber;
      }
      if (!scan.SkipValue()) return JsonError(scan, absl::StrCat("bad value of \"", key, "\""));
    }
    return absl::OkStatus();
  }));
  return out;
}

// A JSON list of whole numbers >= 0, the scanner at its '['.
absl::StatusOr<std::vector<int64_t>> WholeNumberList(JsonScanner& scan, absl::string_view key) {
  auto error = [&](absl::string_view what) {
    return absl::InvalidArgumentError(absl::StrCat("JSON: \"", key, "\": ", what,
                                                   " at offset ", scan.offset()));
  };
  if (!scan.Eat('[')) return error("expected a list");
  std::vector<int64_t> out;
  if (scan.Eat(']')) return out;
  while (true) {
    const absl::string_view word = scan.Word();
    int64_t v = 0;
    if (!absl::SimpleAtoi(word, &v) || v < 0) {
      return error(absl::StrCat("expected a whole number >= 0, got \"", word, "\""));
    }
    out.push_back(v);
    if (scan.Eat(',')) continue;
    if (scan.Eat(']')) return out;
    return error("expected ',' or ']'");
  }
}

}  // namespace

bool IsReportedFigure(const std::string& key, bool saved_too) {
  static const auto* kKeys = new std::set<std::string>{
      "completed", "duration", "total_input_tokens", "total_output_tokens",
      "request_throughput", "request_goodput", "output_throughput", "total_token_throughput",
      "max_output_tokens_per_s", "max_concurrent_requests"};
  if (kKeys->count(key)) return true;
  if (saved_too && (key == "failed" || key == "num_prompts" || key == "duration_s")) return true;
  const std::vector<std::string> parts = absl::StrSplit(key, '_');
  if (parts.size() != 3 || parts[2] != "ms") return false;
  // vLLM writes NaN under std_* for a list of one value; it prints none of them.
  const bool stat = parts[0] == "mean" || parts[0] == "median" ||
                    (parts[0].size() > 1 && parts[0][0] == 'p') ||
                    (saved_too && parts[0] == "std");
  return stat && (parts[1] == "ttft" || parts[1] == "tpot" || parts[1] == "itl" ||
                  parts[1] == "e2el");
}

absl::StatusOr<ResultLengths> ReadResultJsonLengths(absl::string_view json) {
  ResultLengths out;
  RETURN_IF_ERROR(WalkTopLevelObject(json, [&](const std::string& key, JsonScanner& scan) {
    if (key == "input_lens" || key == "output_lens") {
      ASSIGN_OR_RETURN(std::vector<int64_t> list, WholeNumberList(scan, key));
      (key == "input_lens" ? out.input_lens : out.output_lens) = std::move(list);
    } else if (!scan.SkipValue()) {
      return JsonError(scan, absl::StrCat("bad value of \"", key, "\""));
    }
    return absl::OkStatus();
  }));
  return out;
}

absl::StatusOr<std::map<std::string, double>> ReadResultJsonFigures(absl::string_view json) {
  std::map<std::string, std::string> non_finite;
  absl::StatusOr<std::map<std::string, double>> figures = TopLevelNumbers(json, &non_finite);
  if (!figures.ok()) return figures.status();
  if (absl::Status s = NeedsCoreFigures(*figures, non_finite, "the result JSON"); !s.ok()) return s;
  for (const auto& [key, written] : non_finite) {
    // A saved-only figure (failed, num_prompts, std_*) may be NaN, as vLLM
    // writes std_* of a one-value list, but not another type.
    if (IsReportedFigure(key) || written == kNotANumber) {
      return absl::InvalidArgumentError(absl::StrCat(
          "the result JSON's \"", key, "\" is not a finite number: ", written));
    }
  }
  return figures;
}

absl::StatusOr<std::map<std::string, double>> ReadBenchReportFigures(absl::string_view text) {
  constexpr absl::string_view kTitle = " Serving Benchmark Result ";
  const std::string rule(50, '=');  // the block's last line
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
    if (line == rule) {
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
    // A percentile asked for twice (--metric-percentiles 99,99.0) prints
    // its line twice with one value. Two lines that disagree (a log edited
    // or pasted together) would leave the later one standing unseen.
    if (auto [it, inserted] = figures.emplace(*key, v); !inserted && it->second != v) {
      return absl::InvalidArgumentError(
          absl::StrCat("the report gives \"", label, "\" twice, with different values"));
    }
  }
  if (blocks == 0) {
    return absl::InvalidArgumentError("no \"Serving Benchmark Result\" block in the report");
  }
  if (inside) {
    return absl::InvalidArgumentError("the \"Serving Benchmark Result\" block is not closed");
  }
  if (absl::Status s = NeedsCoreFigures(figures, {}, "the report"); !s.ok()) return s;
  return figures;
}

}  // namespace servesim::metrics
