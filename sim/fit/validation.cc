#include "sim/fit/validation.h"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <numeric>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "base/status_macros.h"
#include "sim/metrics/report.h"

namespace servesim::fit {

namespace {

// Each compared figure: its --save-result key and its column in the table.
struct ComparedMetric {
  const char* key;
  const char* label;
};
constexpr ComparedMetric kComparedMetrics[] = {
    {"total_token_throughput", "total tok/s"}, {"mean_ttft_ms", "mean TTFT ms"},
    {"p99_ttft_ms", "p99 TTFT ms"},            {"mean_tpot_ms", "mean TPOT ms"},
    {"mean_itl_ms", "mean ITL ms"},            {"median_itl_ms", "median ITL ms"},
    {"p99_itl_ms", "p99 ITL ms"},              {"max_output_tokens_per_s", "peak out tok/s"},
};

}  // namespace

const char* MetricLabel(const std::string& key) {
  for (const ComparedMetric& m : kComparedMetrics) {
    if (key == m.key) return m.label;
  }
  return "?";
}

const std::vector<std::string>& ComparedMetrics() {
  static const auto* kKeys = [] {
    auto* keys = new std::vector<std::string>;
    for (const ComparedMetric& m : kComparedMetrics) keys->push_back(m.key);
    return keys;
  }();
  return *kKeys;
}

double MetricValue(const metrics::BenchMetrics& m, const std::string& key) {
  if (key == "total_token_throughput") return m.total_token_throughput;
  if (key == "output_throughput") return m.output_throughput;
  if (key == "duration") return m.duration_s;
  if (key == "mean_ttft_ms") return m.ttft.mean_ms;
  if (key == "p99_ttft_ms") return m.ttft.p99_ms;
  if (key == "mean_tpot_ms") return m.tpot.mean_ms;
  if (key == "mean_itl_ms") return m.itl.mean_ms;
  if (key == "median_itl_ms") return m.itl.median_ms;
  if (key == "p99_itl_ms") return m.itl.p99_ms;
  if (key == "max_output_tokens_per_s") return m.max_output_tokens_per_s;
  if (key == "completed") return static_cast<double>(m.completed);
  return 0;
}

double CaseResult::ErrorPct(const std::string& key) const {
  auto m = measured.find(key);
  auto p = predicted.find(key);
  if (m == measured.end() || p == predicted.end() || m->second == 0) return 0;
  return (p->second - m->second) / m->second * 100;
}

// vllm bench serve sums both totals over the completed requests only. The
// client counts a prompt without the chat template, so its count is at most
// the engine's.
absl::Status CheckRunWithinContext(const runner::PredictionContext& context, const LiveRun& run) {
  const int64_t window = context.spec.max_position_embeddings();
  const std::string context_tokens =
      absl::StrCat(window, " tokens, the model's max_position_embeddings");
  auto bad = [&](absl::string_view why) {
    return absl::InvalidArgumentError(
        absl::StrCat("--runs: ", run.source, ": case ", run.name, ": ", why));
  };
  for (size_t i = 0; i < run.output_lens.size(); ++i) {
    if (run.output_lens[i] == 0) continue;  // a failed request
    const int64_t prompt = i < run.input_lens.size() ? run.input_lens[i] : 0;
    // Compared without adding: the two may be any int64.
    if (prompt > window || run.output_lens[i] > window - prompt) {
      return bad(absl::StrCat("request ", i, ": input_lens ", prompt, " + output_lens ",
                              run.output_lens[i], " is more than its context (", context_tokens,
                              ")"));
    }
  }
  auto completed = run.measured.find("completed");
  if (completed == run.measured.end()) return absl::OkStatus();
  std::string keys;
  double tokens = 0;
  for (const char* key : {"total_input_tokens", "total_output_tokens"}) {
    if (auto total = run.measured.find(key); total != run.measured.end()) {
      absl::StrAppend(&keys, keys.empty() ? "" : " + ", key);
      tokens += total->second;
    }
  }
  if (tokens > completed->second * static_cast<double>(window)) {
    return bad(absl::StrCat(keys, ": ", absl::StrFormat("%.15g", tokens), " tokens over ",
                            completed->second,
                            " completed requests is more than a context each (", context_tokens,
                            ")"));
  }
  return absl::OkStatus();
}

absl::StatusOr<CaseResult> ValidateRun(const runner::PredictionContext& context,
                                       const LiveRun& run) {
  RETURN_IF_ERROR(CheckRunWithinContext(context, run));
  CaseResult r;
  r.name = run.name;
  r.expected_failure = run.expected_failure;
  r.measured = run.measured;
  runner::RunRequest request;
  request.serve_command = run.serve_command;
  request.env = run.env;
  // An expected failure has no bench command; any workload shows whether the
  // engine starts.
  request.bench_command = run.expected_failure
                              ? "vllm bench serve --dataset-name random --num-prompts 1 "
                                "--random-input-len 16 --random-output-len 2"
                              : run.bench_command;
  // Compare like with like: the prompts and replies the live run had, where
  // it says (per request in a --save-result JSON; else the reply total, which
  // shows EOS without --ignore-eos).
  request.live_lengths.input_lens = run.input_lens;
  request.live_lengths.output_lens = run.output_lens;
  if (auto c = run.measured.find("completed"), t = run.measured.find("total_output_tokens");
      c != run.measured.end() && t != run.measured.end()) {
    // Token counts: whole, and within reach of int64 (1e300 was cast).
    for (const auto* it : {&c, &t}) {
      const double v = (*it)->second;
      if (v != std::floor(v) || v > 1e15) {
        return absl::InvalidArgumentError(absl::StrCat("case ", run.name, ": ", (*it)->first,
                                                       ": not a count: ", v));
      }
    }
    request.live_lengths.completed = static_cast<int64_t>(c->second);
    request.live_lengths.total_output_tokens = static_cast<int64_t>(t->second);
  }
  absl::StatusOr<runner::Prediction> p = runner::Predict(context, request);
  if (!p.ok() && p.status().code() == absl::StatusCode::kUnimplemented) {
    r.not_modelled = true;
    r.refusal = std::string(p.status().message());
    return r;
  }
  if (!p.ok()) {
    if (p.status().code() != absl::StatusCode::kFailedPrecondition) {
      return absl::InvalidArgumentError(
          absl::StrCat("case ", run.name, ": ", p.status().message()));
    }
    r.refused = true;
    r.refusal = std::string(p.status().message());
    r.outcome_correct = run.expected_failure;
    return r;
  }
  // A live run whose every request failed did not run as a prediction that
  // completes some (TensorRT-LLM's 32k-token prompts), nor the other way.
  const auto live_completed = run.measured.find("completed");
  r.outcome_correct =
      !run.expected_failure &&
      (live_completed == run.measured.end() ||
       (live_completed->second == 0) == (p->metrics.completed == 0));
  for (const std::string& key : ComparedMetrics()) r.predicted[key] = MetricValue(p->metrics, key);
  r.shape = p->shape;
  // Not an error figure: whether the engine failed the requests the live
  // run saw fail (the summary's completed line).
  r.predicted["completed"] = static_cast<double>(p->metrics.completed);
  return r;
}

double SpearmanRho(const std::vector<double>& a, const std::vector<double>& b) {
  auto ranks = [](const std::vector<double>& v) {
    std::vector<size_t> idx(v.size());
    std::iota(idx.begin(), idx.end(), 0);
    std::stable_sort(idx.begin(), idx.end(), [&](size_t i, size_t j) { return v[i] < v[j]; });
    std::vector<double> r(v.size());
    for (size_t i = 0; i < idx.size();) {
      size_t j = i;
      while (j + 1 < idx.size() && v[idx[j + 1]] == v[idx[i]]) ++j;
      for (size_t k = i; k <= j; ++k) r[idx[k]] = (i + j) / 2.0 + 1;
      i = j + 1;
    }
    return r;
  };
  const size_t n = a.size();
  if (n < 2) return std::nan("");
  const std::vector<double> ra = ranks(a), rb = ranks(b);
  const double ma = std::accumulate(ra.begin(), ra.end(), 0.0) / n;
  const double mb = std::accumulate(rb.begin(), rb.end(), 0.0) / n;
  double num = 0, da = 0, db = 0;
  for (size_t i = 0; i < n; ++i) {
    num += (ra[i] - ma) * (rb[i] - mb);
    da += (ra[i] - ma) * (ra[i] - ma);
    db += (rb[i] - mb) * (rb[i] - mb);
  }
  return da > 0 && db > 0 ? num / std::sqrt(da * db) : std::nan("");
}

bool CaseResult::HasError(const std::string& key) const {
  auto m = measured.find(key);
  auto p = predicted.find(key);
  return m != measured.end() && p != predicted.end() && (m->second != 0 || p->second == 0);
}

ValidationReport Summarize(std::vector<CaseResult> cases) {
  ValidationReport report;
  report.cases = std::move(cases);
  std::vector<double> measured_tput, predicted_tput;
  for (const std::string& key : ComparedMetrics()) {
    std::vector<double> errors;
    for (const CaseResult& c : report.cases) {
      if (c.refused || c.not_modelled || c.expected_failure || !c.HasError(key)) continue;
      errors.push_back(std::abs(c.ErrorPct(key)));
    }
    MetricSummary s;
    s.cases = static_cast<int>(errors.size());
    if (!errors.empty()) {
      s.median_abs_pct = metrics::Percentile(errors, 50);
      s.max_abs_pct = *std::max_element(errors.begin(), errors.end());
    }
    report.per_metric[key] = s;
  }
  for (const CaseResult& c : report.cases) {
    report.outcomes_correct += c.outcome_correct ? 1 : 0;
    if (!c.refused && !c.not_modelled && !c.expected_failure &&
        c.measured.count("total_token_throughput")) {
      measured_tput.push_back(c.measured.at("total_token_throughput"));
      predicted_tput.push_back(c.predicted.at("total_token_throughput"));
    }
  }
  report.spearman_total_throughput = SpearmanRho(measured_tput, predicted_tput);
  return report;
}

std::string FormatValidationTable(const ValidationReport& report, bool completed_line) {
  std::string out = absl::StrFormat("%-28s %-5s", "case", "ok");
  for (const ComparedMetric& m : kComparedMetrics) absl::StrAppendFormat(&out, " | %-27s", m.label);
  out += "\n";
  absl::StrAppendFormat(&out, "%-28s %-5s", "", "");
  for (size_t i = 0; i < std::size(kComparedMetrics); ++i) {
    absl::StrAppendFormat(&out, " | %9s %9s %7s", "measured", "predicted", "err%");
  }
  out += "\n";
  for (const CaseResult& c : report.cases) {
    absl::StrAppendFormat(&out, "%-28s %-5s", c.name, c.outcome_correct ? "yes" : "NO");
    if (c.not_modelled) {
      absl::StrAppend(&out, " | not modelled: ", c.refusal, "\n");
      continue;
    }
    if (c.refused || c.expected_failure) {
      absl::StrAppend(&out, " | ", c.expected_failure ? "live: failed to start" : "live: ran",
                      "; servesim: ", c.refused ? absl::StrCat("refused: ", c.refusal) : "ran",
                      "\n");
      continue;
    }
    for (const std::string& key : ComparedMetrics()) {
      if (!c.measured.count(key)) {
        absl::StrAppendFormat(&out, " | %9s %9.1f %7s", "-", c.predicted.at(key), "-");
      } else if (!c.HasError(key)) {
        absl::StrAppendFormat(&out, " | %9.1f %9.1f %7s", c.measured.at(key), c.predicted.at(key),
                              "n/a");
      } else {
        absl::StrAppendFormat(&out, " | %9.1f %9.1f %+7.1f", c.measured.at(key),
                              c.predicted.at(key), c.ErrorPct(key));
      }
    }
    out += "\n";
  }
  absl::StrAppend(&out, "\nsummary (absolute error, %):\n");
  for (const ComparedMetric& m : kComparedMetrics) {
    const MetricSummary& s = report.per_metric.at(m.key);
    if (s.cases == 0) {
      // No case measured it (e.g. a misspelled column): no error to report,
      // which is not an error of 0.
      absl::StrAppendFormat(&out, "  %-14s median    n/a  max    n/a  (0 cases)\n", m.label);
    } else {
      absl::StrAppendFormat(&out, "  %-14s median %6.1f  max %6.1f  (%d cases)\n", m.label,
                            s.median_abs_pct, s.max_abs_pct, s.cases);
    }
  }
  if (std::isnan(report.spearman_total_throughput)) {
    absl::StrAppend(&out, "  Spearman rho of total tok/s: n/a (needs two cases of different "
                          "throughput, measured and predicted)\n");
  } else {
    absl::StrAppendFormat(&out, "  Spearman rho of total tok/s: %.3f\n",
                          report.spearman_total_throughput);
  }
  absl::StrAppendFormat(&out, "  outcomes (ran / refused) as live: %d of %d\n",
                        report.outcomes_correct, static_cast<int>(report.cases.size()));
  if (completed_line) {
    int compared = 0, same = 0;
    std::vector<std::string> differ;
    for (const CaseResult& c : report.cases) {
      const auto live = c.measured.find("completed");
      const auto predicted = c.predicted.find("completed");
      if (c.refused || live == c.measured.end() || predicted == c.predicted.end()) continue;
      ++compared;
      if (live->second == predicted->second) {
        ++same;
      } else {
        differ.push_back(absl::StrFormat("%s %.0f live, %.0f predicted", c.name, live->second,
                                         predicted->second));
      }
    }
    if (compared > 0) {
      absl::StrAppendFormat(&out, "  completed requests as live: %d of %d%s\n", same, compared,
                            differ.empty() ? ""
                                           : absl::StrCat(" (differ: ",
                                                          absl::StrJoin(differ, "; "), ")"));
    }
  }
  return out;
}

std::string FormatValidationJson(const ValidationReport& report) {
  using metrics::JsonNumber;
  using metrics::JsonString;
  std::string out = "{\"cases\": [";
  for (size_t i = 0; i < report.cases.size(); ++i) {
    const CaseResult& c = report.cases[i];
    absl::StrAppend(&out, i ? ", " : "", "{\"case\": ", JsonString(c.name),
                    ", \"outcome_correct\": ", c.outcome_correct ? "true" : "false",
                    ", \"expected_failure\": ", c.expected_failure ? "true" : "false",
                    ", \"refused\": ", c.refused ? "true" : "false",
                    ", \"refusal\": ", JsonString(c.refusal));
    for (const auto& [key, v] : c.predicted) {
      absl::StrAppend(&out, ", \"predicted_", key, "\": ", JsonNumber(v));
      if (c.measured.count(key)) {
        absl::StrAppend(&out, ", \"measured_", key, "\": ", JsonNumber(c.measured.at(key)));
      }
    }
    out += "}";
  }
  out += "], \"summary\": {";
  bool first = true;
  for (const auto& [key, s] : report.per_metric) {
    const bool none = s.cases == 0;
    absl::StrAppend(&out, first ? "" : ", ", "\"", key, "\": {\"median_abs_pct\": ",
                    none ? "null" : JsonNumber(s.median_abs_pct), ", \"max_abs_pct\": ",
                    none ? "null" : JsonNumber(s.max_abs_pct), ", \"cases\": ", s.cases, "}");
    first = false;
  }
  absl::StrAppend(&out, ", \"spearman_total_token_throughput\": ",
                  std::isnan(report.spearman_total_throughput)
                      ? std::string("null")
                      : JsonNumber(report.spearman_total_throughput),
                  ", \"outcomes_correct\": ",
                  report.outcomes_correct, ", \"cases\": ", report.cases.size(), "}}\n");
  return out;
}

}  // namespace servesim::fit
