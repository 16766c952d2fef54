#include "sim/metrics/report.h"

#include <algorithm>
#include <charconv>
#include <cmath>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"

namespace servesim::metrics {
namespace {

// Python's "{:<40} {:<10.2f}" and "{:<40} {:<10}".
std::string Line(const std::string& label, double value) {
  return absl::StrFormat("%-40s %-10s\n", label, absl::StrFormat("%.2f", value));
}
std::string Line(const std::string& label, int64_t value) {
  return absl::StrFormat("%-40s %-10s\n", label, absl::StrCat(value));
}

// Python's "{s:{c}^{n}}": centred, extra padding on the right.
std::string Centered(const std::string& s, char fill, int width) {
  const int pad = width - static_cast<int>(s.size());
  if (pad <= 0) return s + "\n";
  const int left = pad / 2;
  return std::string(left, fill) + s + std::string(pad - left, fill) + "\n";
}

// vllm's p_word: "99" for 99.0, "99.9" for 99.9 (Python's str of a float).
std::string PercentileWord(double p) {
  if (p == std::floor(p)) return absl::StrCat(static_cast<int64_t>(p));
  return JsonNumber(p);
}

struct LatencyMetric {
  const char* key;     // --percentile-metrics name and JSON key part
  const char* name;    // in "Mean TTFT (ms):"
  const char* header;  // the block's centred title
  const LatencyStats BenchMetrics::*stats;
};

// The blocks in vllm's fixed order; a block is printed when selected.
constexpr LatencyMetric kLatencyMetrics[] = {
    {"ttft", "TTFT", "Time to First Token", &BenchMetrics::ttft},
    {"tpot", "TPOT", "Time per Output Token (excl. 1st token)", &BenchMetrics::tpot},
    {"itl", "ITL", "Inter-token Latency", &BenchMetrics::itl},
    {"e2el", "E2EL", "End-to-end Latency", &BenchMetrics::e2el},
};

bool Selected(const ReportOptions& options, const char* key) {
  return std::find(options.percentile_metrics.begin(), options.percentile_metrics.end(), key) !=
         options.percentile_metrics.end();
}

std::string MetricBlock(const std::string& name, const std::string& header,
                        const LatencyStats& s) {
  std::string out = absl::StrCat(Centered(header, '-', 50),
                                 Line(absl::StrCat("Mean ", name, " (ms):"), s.mean_ms),
                                 Line(absl::StrCat("Median ", name, " (ms):"), s.median_ms));
  for (const auto& [p, ms] : s.percentiles_ms) {
    absl::StrAppend(&out, Line(absl::StrCat("P", PercentileWord(p), " ", name, " (ms):"), ms));
  }
  return out;
}

// The report's fixed lines and the --save-result keys of the same figures.
struct SummaryLine {
  const char* label;
  const char* key;
};
constexpr SummaryLine kSummaryLines[] = {
    {"Successful requests:", "completed"},
    {"Failed requests:", "failed"},
    {"Maximum request concurrency:", "max_concurrency"},
    {"Request rate configured (RPS):", "request_rate"},
    {"Benchmark duration (s):", "duration"},
    {"Total input tokens:", "total_input_tokens"},
    {"Total generated tokens:", "total_output_tokens"},
    {"Request throughput (req/s):", "request_throughput"},
    {"Request goodput (req/s):", "request_goodput"},
    {"Output token throughput (tok/s):", "output_throughput"},
    {"Peak output token throughput (tok/s):", "max_output_tokens_per_s"},
    {"Peak concurrent requests:", "max_concurrent_requests"},
    // vLLM prints "Token" capitalised on this line alone [U: recalled from
    // vllm/benchmarks/serve.py and its README's example output; the shared
    // reference writes it in lower case], and the reader takes either.
    {"Total Token throughput (tok/s):", "total_token_throughput"},
};

const char* LabelOf(absl::string_view key) {
  for (const SummaryLine& l : kSummaryLines) {
    if (key == l.key) return l.label;
  }
  return "";  // unreachable: every caller names a key of the table
}

}  // namespace

std::optional<std::string> ResultKeyOfReportLabel(absl::string_view label) {
  for (const SummaryLine& l : kSummaryLines) {
    // Case aside: "Total Token throughput" is spelled both ways in the wild.
    if (absl::EqualsIgnoreCase(label, l.label)) return std::string(l.key);
  }
  // "<Mean|Median|P<word>> <NAME> (ms):"
  for (const LatencyMetric& l : kLatencyMetrics) {
    const std::string tail = absl::StrCat(" ", l.name, " (ms):");
    if (!absl::EndsWith(label, tail)) continue;
    const absl::string_view stat = label.substr(0, label.size() - tail.size());
    if (stat == "Mean" || stat == "Median") {
      return absl::StrCat(absl::AsciiStrToLower(stat), "_", l.key, "_ms");
    }
    double p = 0;
    if (stat.size() > 1 && stat[0] == 'P' && absl::SimpleAtod(stat.substr(1), &p)) {
      return absl::StrCat("p", stat.substr(1), "_", l.key, "_ms");
    }
  }
  return std::nullopt;
}

std::string FormatBenchReport(const BenchMetrics& m, const ReportOptions& options) {
  std::string out = Centered(" Serving Benchmark Result ", '=', 50);
  absl::StrAppend(&out, Line(LabelOf("completed"), m.completed));
  absl::StrAppend(&out, Line(LabelOf("failed"), m.failed));
  if (options.max_concurrency.has_value()) {
    absl::StrAppend(&out, Line(LabelOf("max_concurrency"), *options.max_concurrency));
  }
  if (std::isfinite(options.request_rate)) {
    absl::StrAppend(&out, Line(LabelOf("request_rate"), options.request_rate));
  }
  absl::StrAppend(&out, Line(LabelOf("duration"), m.duration_s));
  absl::StrAppend(&out, Line(LabelOf("total_input_tokens"), m.total_input_tokens));
  absl::StrAppend(&out, Line(LabelOf("total_output_tokens"), m.total_output_tokens));
  absl::StrAppend(&out, Line(LabelOf("request_throughput"), m.request_throughput));
  if (m.request_goodput.has_value()) {
    absl::StrAppend(&out, Line(LabelOf("request_goodput"), *m.request_goodput));
  }
  absl::StrAppend(&out, Line(LabelOf("output_throughput"), m.output_throughput));
  absl::StrAppend(&out,
                  Line(LabelOf("max_output_tokens_per_s"), m.max_output_tokens_per_s));
  absl::StrAppend(&out, Line(LabelOf("max_concurrent_requests"), m.max_concurrent_requests));
  absl::StrAppend(&out, Line(LabelOf("total_token_throughput"), m.total_token_throughput));
  for (const LatencyMetric& l : kLatencyMetrics) {
    if (Selected(options, l.key)) absl::StrAppend(&out, MetricBlock(l.name, l.header, m.*l.stats));
  }
  absl::StrAppend(&out, std::string(50, '='), "\n");
  return out;
}

std::string JsonNumber(double v) {
  if (!std::isfinite(v)) return v > 0 ? "Infinity" : (v < 0 ? "-Infinity" : "NaN");
  // Python's repr: the shortest digits that read back as `v`, in positional
  // notation for decimal exponents -4..15 (integral values with ".0"), else
  // as d.ddde+XX with at least two exponent digits ("1e+16", "1e-05").
  char buf[64];
  auto [end, ec] = std::to_chars(buf, buf + sizeof(buf), v, std::chars_format::scientific);
  const std::string sci(buf, end);
  const size_t e = sci.find('e');
  std::string digits;
  for (size_t i = 0; i < e; ++i) {
    if (sci[i] >= '0' && sci[i] <= '9') digits += sci[i];
  }
  const int exponent = std::stoi(sci.substr(e + 1));
  const std::string sign = sci[0] == '-' ? "-" : "";
  if (exponent < -4 || exponent >= 16) {
    std::string out = sign + digits.substr(0, 1);
    if (digits.size() > 1) out += "." + digits.substr(1);
    return out + absl::StrFormat("e%c%02d", exponent < 0 ? '-' : '+', std::abs(exponent));
  }
  if (exponent < 0) return sign + "0." + std::string(-exponent - 1, '0') + digits;
  const size_t int_digits = static_cast<size_t>(exponent) + 1;
  if (digits.size() <= int_digits) {
    return sign + digits + std::string(int_digits - digits.size(), '0') + ".0";
  }
  return sign + digits.substr(0, int_digits) + "." + digits.substr(int_digits);
}

namespace {

// The code point of the UTF-8 sequence at s[i], advancing i past it. An
// ill-formed sequence gives U+FFFD for its maximal valid prefix (one byte at
// least), as Python's decode(errors="replace") does: no overlong forms, no
// surrogates, nothing past U+10FFFF.
uint32_t NextCodePoint(const std::string& s, size_t& i) {
  const auto byte = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
  const unsigned char lead = byte(i);
  if (lead < 0x80) {
    ++i;
    return lead;
  }
  int extra = 0;
  unsigned char low = 0x80, high = 0xBF;  // the second byte's range
  if (lead >= 0xC2 && lead <= 0xDF) {
    extra = 1;
  } else if (lead >= 0xE0 && lead <= 0xEF) {
    extra = 2;
    if (lead == 0xE0) low = 0xA0;
    if (lead == 0xED) high = 0x9F;
  } else if (lead >= 0xF0 && lead <= 0xF4) {
    extra = 3;
    if (lead == 0xF0) low = 0x90;
    if (lead == 0xF4) high = 0x8F;
  } else {
    ++i;
    return 0xFFFD;
  }
  uint32_t cp = lead & (0x3F >> extra);
  for (int k = 1; k <= extra; ++k) {
    const size_t at = i + static_cast<size_t>(k);
    const unsigned char lo = k == 1 ? low : 0x80, hi = k == 1 ? high : 0xBF;
    if (at >= s.size() || byte(at) < lo || byte(at) > hi) {
      i = at;  // the lead and the valid bytes after it: one replacement
      return 0xFFFD;
    }
    cp = (cp << 6) | (byte(at) & 0x3F);
  }
  i += static_cast<size_t>(extra) + 1;
  return cp;
}

}  // namespace

std::string JsonString(const std::string& s) {
  // As Python's json.dump writes it (ensure_ascii): printable ASCII as is,
  // the short escapes, every other character as \uXXXX (a surrogate pair
  // past U+FFFF).
  std::string out = "\"";
  for (size_t i = 0; i < s.size();) {
    const uint32_t c = NextCodePoint(s, i);
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      case '\b': out += "\\b"; break;
      case '\f': out += "\\f"; break;
      default:
        if (c >= 0x20 && c < 0x7F) {
          out += static_cast<char>(c);
        } else if (c < 0x10000) {
          out += absl::StrFormat("\\u%04x", c);
        } else {
          const uint32_t v = c - 0x10000;
          out += absl::StrFormat("\\u%04x\\u%04x", 0xD800 + (v >> 10), 0xDC00 + (v & 0x3FF));
        }
    }
  }
  return out + "\"";
}

std::vector<std::pair<std::string, std::string>> TrafficSetupJson(
    double request_rate, double burstiness, std::optional<int64_t> max_concurrency) {
  return {{"request_rate",
           std::isfinite(request_rate) ? JsonNumber(request_rate) : std::string("\"inf\"")},
          {"burstiness", JsonNumber(burstiness)},
          {"max_concurrency",
           max_concurrency ? absl::StrCat(*max_concurrency) : std::string("null")}};
}

std::string FormatResultJson(const BenchMetrics& m, const ReportOptions& options,
                             const std::string& extra) {
  auto num = [](double v) { return JsonNumber(v); };
  auto ints = [](const std::vector<int64_t>& v) {
    return absl::StrCat("[", absl::StrJoin(v, ", "), "]");
  };
  auto doubles = [&](const std::vector<double>& v) {
    std::vector<std::string> parts;
    parts.reserve(v.size());
    for (double d : v) parts.push_back(num(d));
    return absl::StrCat("[", absl::StrJoin(parts, ", "), "]");
  };
  std::vector<std::string> itls;
  if (options.per_request_arrays) {
    itls.reserve(m.itls_s.size());
    for (const auto& gaps : m.itls_s) itls.push_back(doubles(gaps));
  }

  // benchmark()'s result dict in its order (engine-defaults.md B5): the
  // figures, the per-request arrays (without --save-detailed vllm deletes all
  // but latencies and start_times), the two peaks, then each latency block.
  std::vector<std::pair<std::string, std::string>> kv = {
      {"duration", num(m.duration_s)},
      {"completed", absl::StrCat(m.completed)},
      {"failed", absl::StrCat(m.failed)},
      {"total_input_tokens", absl::StrCat(m.total_input_tokens)},
      {"total_output_tokens", absl::StrCat(m.total_output_tokens)},
      {"request_throughput", num(m.request_throughput)},
      {"request_goodput", m.request_goodput ? num(*m.request_goodput) : std::string("null")},
      {"output_throughput", num(m.output_throughput)},
      {"total_token_throughput", num(m.total_token_throughput)},
  };
  if (options.per_request_arrays) {
    kv.emplace_back("input_lens", ints(m.input_lens));
    kv.emplace_back("output_lens", ints(m.output_lens));
    kv.emplace_back("ttfts", doubles(m.ttfts_s));
    kv.emplace_back("itls", absl::StrCat("[", absl::StrJoin(itls, ", "), "]"));
  }
  kv.emplace_back("latencies", doubles(m.latencies_s));
  kv.emplace_back("start_times", doubles(m.start_times_s));
  if (options.per_request_arrays) {
    // servesim has no text: one empty string per request keeps the array's shape.
    std::vector<std::string> texts(m.errors.size(), "\"\"");
    kv.emplace_back("generated_texts", absl::StrCat("[", absl::StrJoin(texts, ", "), "]"));
    std::vector<std::string> errors;
    errors.reserve(m.errors.size());
    for (const std::string& e : m.errors) errors.push_back(JsonString(e));
    kv.emplace_back("errors", absl::StrCat("[", absl::StrJoin(errors, ", "), "]"));
  }
  kv.emplace_back("max_output_tokens_per_s", num(m.max_output_tokens_per_s));
  kv.emplace_back("max_concurrent_requests", num(m.max_concurrent_requests));
  for (const LatencyMetric& l : kLatencyMetrics) {
    if (!Selected(options, l.key)) continue;
    const LatencyStats& s = m.*l.stats;
    kv.emplace_back(absl::StrCat("mean_", l.key, "_ms"), num(s.mean_ms));
    kv.emplace_back(absl::StrCat("median_", l.key, "_ms"), num(s.median_ms));
    kv.emplace_back(absl::StrCat("std_", l.key, "_ms"), num(s.std_ms));
    for (const auto& [p, ms] : s.percentiles_ms) {
      // A percentile asked for twice (99 and 99.0) is one key of vllm's dict.
      std::string key = absl::StrCat("p", PercentileWord(p), "_", l.key, "_ms");
      const bool seen =
          std::any_of(kv.begin(), kv.end(), [&](const auto& f) { return f.first == key; });
      if (!seen) kv.emplace_back(std::move(key), num(ms));
    }
  }
  // The setup keys go first. vllm merges {**setup, **result}: a setup key
  // that names a figure too (a --metadata key) keeps its place and takes the
  // figure's value.
  std::vector<std::pair<std::string, std::string>> setup = options.setup_json;
  for (auto& [key, value] : setup) {
    auto figure = std::find_if(kv.begin(), kv.end(), [&](const auto& f) { return f.first == key; });
    if (figure != kv.end()) {
      value = figure->second;
      kv.erase(figure);
    }
  }
  kv.insert(kv.begin(), setup.begin(), setup.end());

  std::string out = "{";
  for (size_t i = 0; i < kv.size(); ++i) {
    absl::StrAppend(&out, i ? ", " : "", JsonString(kv[i].first), ": ", kv[i].second);
  }
  if (!extra.empty()) absl::StrAppend(&out, ", ", extra);
  return out + "}\n";
}

std::string VllmResultFileName(const ResultFileNameParts& parts) {
  const std::string concurrency =
      parts.max_concurrency ? absl::StrCat("-concurrency", *parts.max_concurrency) : "";
  const size_t slash = parts.model_id.rfind('/');
  const std::string model =
      slash == std::string::npos ? parts.model_id : parts.model_id.substr(slash + 1);
  const std::string rate =
      std::isfinite(parts.request_rate) ? JsonNumber(parts.request_rate) : "inf";
  if (parts.ramp_up_strategy) {
    return absl::StrCat(parts.label, "-ramp-up-", *parts.ramp_up_strategy, "-",
                        parts.ramp_up_start_rps, "qps-", parts.ramp_up_end_rps, "qps",
                        concurrency, "-", model, "-", parts.local_time, ".json");
  }
  return absl::StrCat(parts.label, "-", rate, "qps", concurrency, "-", model, "-",
                      parts.local_time, ".json");
}

}  // namespace servesim::metrics
