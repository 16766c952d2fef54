#include "sim/metrics/bench_metrics.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace servesim::metrics {
namespace {

// numpy.percentile's linear interpolation, by selection instead of a full
// sort (the pooled ITL list holds ~200k values per ShareGPT replay). Reorders
// `values`; gives exactly what sorting first would.
double SelectPercentile(std::vector<double>& values, double percentile) {
  if (values.empty()) return 0;
  const double rank = percentile / 100.0 * static_cast<double>(values.size() - 1);
  const size_t lo = static_cast<size_t>(std::floor(rank));
  std::nth_element(values.begin(), values.begin() + lo, values.end());
  const double low = values[lo];
  const double high =
      lo + 1 < values.size() ? *std::min_element(values.begin() + lo + 1, values.end()) : low;
  return low + (high - low) * (rank - static_cast<double>(lo));
}

// Takes the list by value: the percentiles reorder it.
LatencyStats StatsMs(std::vector<double> seconds, const std::vector<double>& percentiles) {
  LatencyStats s;
  // Mean and spread first, summed in the client's order: the selections
  // below reorder the list, and which percentiles were asked for would
  // change the sums' last bits.
  if (!seconds.empty()) {
    const double n = static_cast<double>(seconds.size());
    const double mean = std::accumulate(seconds.begin(), seconds.end(), 0.0) / n;
    double sq = 0;
    for (double v : seconds) sq += (v - mean) * (v - mean);
    s.mean_ms = mean * 1e3;
    s.std_ms = std::sqrt(sq / n) * 1e3;
  }
  // numpy over [0]: every statistic is 0.
  auto ms_at = [&](double p) {
    return seconds.empty() ? 0.0 : SelectPercentile(seconds, p) * 1e3;
  };
  for (double p : percentiles) s.percentiles_ms.emplace_back(p, ms_at(p));
  // P99 (what validation and planning read) is usually among the client's
  // percentiles already; each selection is a pass over the list.
  auto p99 = std::find_if(s.percentiles_ms.begin(), s.percentiles_ms.end(),
                          [](const auto& pm) { return pm.first == 99.0; });
  s.p99_ms = p99 != s.percentiles_ms.end() ? p99->second : ms_at(99);
  if (seconds.empty()) return s;
  s.median_ms = ms_at(50);
  return s;
}

}  // namespace

double Percentile(std::vector<double> values, double percentile) {
  return SelectPercentile(values, percentile);
}

BenchMetrics ComputeBenchMetrics(const std::vector<RequestRecord>& records,
                                 sim::SimTime duration, const MetricOptions& options) {
  const std::vector<double>& percentiles = options.percentiles;
  BenchMetrics m;
  m.duration_s = duration.seconds();
  std::vector<double> ttfts, tpots, itls, e2els;
  // Sized up front: the pooled ITL list of a ShareGPT replay is ~200k values,
  // and growing it by doubling copied it a dozen times per prediction.
  size_t gaps_total = 0;
  for (const RequestRecord& r : records) {
    if (r.chunk_times.size() > 1) gaps_total += r.chunk_times.size() - 1;
  }
  itls.reserve(gaps_total);
  for (std::vector<double>* v : {&ttfts, &tpots, &e2els}) v->reserve(records.size());
  double min_start_s = 0, max_end_s = 0;
  bool any = false;
  int64_t good_completed = 0;
  auto within = [&](const char* metric, double seconds) {
    auto slo = options.goodput_slo_ms.find(metric);
    return slo == options.goodput_slo_ms.end() || seconds <= slo->second / 1e3;
  };
  for (const RequestRecord& r : records) {
    if (!r.success || r.chunk_times.empty()) {
      ++m.failed;
      m.input_lens.push_back(r.prompt_tokens);
      m.output_lens.push_back(0);
      m.ttfts_s.push_back(0);
      m.latencies_s.push_back(0);
      m.start_times_s.push_back(r.start.seconds());
      m.itls_s.emplace_back();
      m.errors.push_back(r.error.empty() ? "request failed" : r.error);
      continue;
    }
    ++m.completed;
    const double start_s = r.start.seconds();
    const double ttft_s = (r.chunk_times.front() - r.start).seconds();
    const double latency_s = (r.chunk_times.back() - r.start).seconds();
    std::vector<double> gaps;
    gaps.reserve(r.chunk_times.size() - 1);
    for (size_t i = 1; i < r.chunk_times.size(); ++i) {
      gaps.push_back((r.chunk_times[i] - r.chunk_times[i - 1]).seconds());
    }
    m.total_input_tokens += r.prompt_tokens;
    m.total_output_tokens += r.output_tokens;
    // For goodput a one-token request's TPOT counts as 0, as vllm's all_tpots.
    const double tpot_s =
        r.output_tokens > 1 ? (latency_s - ttft_s) / static_cast<double>(r.output_tokens - 1) : 0;
    if (r.output_tokens > 1) tpots.push_back(tpot_s);
    if (within("ttft", ttft_s) && within("tpot", tpot_s) && within("e2el", latency_s)) {
      ++good_completed;
    }
    itls.insert(itls.end(), gaps.begin(), gaps.end());
    ttfts.push_back(ttft_s);
    e2els.push_back(latency_s);
    m.input_lens.push_back(r.prompt_tokens);
    m.output_lens.push_back(r.output_tokens);
    m.ttfts_s.push_back(ttft_s);
    m.latencies_s.push_back(latency_s);
    m.start_times_s.push_back(start_s);
    m.itls_s.push_back(std::move(gaps));
    m.errors.emplace_back();
    min_start_s = any ? std::min(min_start_s, start_s) : start_s;
    max_end_s = any ? std::max(max_end_s, start_s + latency_s) : start_s + latency_s;
    any = true;
  }
  if (m.duration_s > 0) {
    m.request_throughput = static_cast<double>(m.completed) / m.duration_s;
    m.output_throughput = static_cast<double>(m.total_output_tokens) / m.duration_s;
    m.total_token_throughput =
        static_cast<double>(m.total_input_tokens + m.total_output_tokens) / m.duration_s;
  }
  if (!options.goodput_slo_ms.empty()) {
    m.request_goodput =
        m.duration_s > 0 ? static_cast<double>(good_completed) / m.duration_s : 0.0;
  }
  m.ttft = StatsMs(std::move(ttfts), percentiles);
  m.tpot = StatsMs(std::move(tpots), percentiles);
  m.itl = StatsMs(std::move(itls), percentiles);
  m.e2el = StatsMs(std::move(e2els), percentiles);

  // Peak output: 1-second buckets from the first send, as the client builds
  // them, one count per chunk.
  if (any) {
    const size_t buckets =
        static_cast<size_t>(std::ceil(max_end_s - min_start_s)) + 1;
    std::vector<double> chunks(buckets, 0);
    std::vector<std::pair<int64_t, int>> active;  // (ns, +1 start or -1 end)
    // The saved arrays hold every request, failed ones too, in record order.
    for (size_t i = 0; i < records.size(); ++i) {
      const RequestRecord& r = records[i];
      if (!r.success || r.chunk_times.empty()) continue;
      double t = m.start_times_s[i] + m.ttfts_s[i];
      auto add_chunk = [&](double at) {
        const auto b = static_cast<int64_t>(at - min_start_s);
        if (b >= 0 && static_cast<size_t>(b) < buckets) chunks[b] += 1;
      };
      add_chunk(t);
      for (double gap : m.itls_s[i]) add_chunk(t += gap);
      // Integer times: a start and latency in doubles can put an end 1e-14 s
      // after the start it hands its slot to (--max-concurrency).
      active.push_back({r.start.ns(), +1});
      active.push_back({r.chunk_times.back().ns(), -1});
    }
    m.max_output_tokens_per_s = *std::max_element(chunks.begin(), chunks.end());
    // Peak concurrency: a sweep line over each request's [start, start +
    // latency) (engine-defaults.md B5), an end before a start at one instant.
    std::sort(active.begin(), active.end());
    int64_t now = 0, peak = 0;
    for (const auto& [at, step] : active) peak = std::max(peak, now += step);
    m.max_concurrent_requests = static_cast<double>(peak);
  }
  return m;
}

}  // namespace servesim::metrics
