#include "sim/workload/live_lengths.h"

#include <algorithm>
#include <cmath>
#include <random>

#include "absl/strings/str_cat.h"
#include "sim/workload/random_variates.h"

namespace servesim::workload {
namespace {

// Geometric on {1, 2, ...} with mean `mean`, by inversion of `u` in [0, 1):
// monotone in `mean` for a fixed u, which the bisection below relies on.
int64_t GeometricLength(double mean, double u) {
  if (mean <= 1.0) return 1;
  const double stop = 1.0 / mean;  // per-token EOS probability
  const double draw = std::floor(std::log1p(-u) / std::log1p(-stop));
  return 1 + static_cast<int64_t>(std::min(draw, 1e15));
}

int64_t Cap(const BenchRequest& r) {
  return r.max_completion_tokens > 0 ? r.max_completion_tokens : r.output_tokens;
}

// Whether the bench command fixes every reply's length (random, a
// --sharegpt-output-len): then a reply cannot be longer than it allows.
bool FixedLengths(const BenchConfig& bench) {
  return bench.dataset_name == DatasetName::kRandom ||
         (bench.dataset_name == DatasetName::kSharegpt && bench.sharegpt_output_len.has_value());
}

// The longest reply a fixed-length bench command lets any request ask for
// (vLLM draws each random request's length itself, with its own generator,
// so servesim's draw for request i is no bound on vLLM's), with a little
// slack: a client that counts a reply by re-tokenizing it may count a token
// or two past max_tokens.
int64_t LongestAllowedReply(const BenchConfig& bench) {
  const int64_t longest =
      bench.dataset_name == DatasetName::kRandom
          ? static_cast<int64_t>(std::ceil(static_cast<double>(bench.random_output_len) *
                                           (1.0 + bench.random_range_ratio)))
          : bench.sharegpt_output_len.value_or(0);
  return longest + std::max<int64_t>(2, longest / 100);
}

absl::Status ApplyPerRequest(const LiveLengths& live, const BenchConfig& bench,
                             std::vector<BenchRequest>& requests, std::string* notice) {
  for (const std::vector<int64_t>* lens : {&live.input_lens, &live.output_lens}) {
    if (!lens->empty() && lens->size() != requests.size()) {
      return absl::InvalidArgumentError(
          absl::StrCat("the live run lists ", lens->size(), " request lengths for ",
                       requests.size(), " requests"));
    }
    for (int64_t n : *lens) {
      if (n < 0) return absl::InvalidArgumentError("the live run lists a negative length");
    }
  }
  int64_t replaced = 0;
  for (size_t i = 0; i < requests.size(); ++i) {
    BenchRequest& r = requests[i];
    if (!live.input_lens.empty() && live.input_lens[i] > 0) r.prompt_tokens = live.input_lens[i];
    if (!live.output_lens.empty() && live.output_lens[i] > 0) {
      const int64_t cap = Cap(r);
      if (FixedLengths(bench) && live.output_lens[i] > LongestAllowedReply(bench)) {
        return absl::InvalidArgumentError(absl::StrCat(
            "the live run's output_lens[", i, "] is ", live.output_lens[i],
            " tokens, more than its bench command lets a request ask for"));
      }
      r.max_completion_tokens = std::max(cap, live.output_lens[i]);
      r.output_tokens = live.output_lens[i];
      ++replaced;
    }
  }
  if (notice != nullptr) {
    absl::StrAppend(notice, "; lengths as the live run had them (",
                    live.input_lens.empty() ? "" : "prompts and ", "replies of ", replaced,
                    " completed requests, from its result)");
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status ApplyLiveLengths(const LiveLengths& live, const BenchConfig& bench,
                              std::vector<BenchRequest>& requests, std::string* notice) {
  if (requests.empty()) return absl::OkStatus();
  if (!live.input_lens.empty() || !live.output_lens.empty()) {
    return ApplyPerRequest(live, bench, requests, notice);
  }
  if (live.completed < 0 || live.total_output_tokens < 0) return absl::OkStatus();
  if (live.total_output_tokens < live.completed) {
    return absl::InvalidArgumentError(absl::StrCat(
        "the live run's total_output_tokens (", live.total_output_tokens, ") is less than one per ",
        "completed request (", live.completed, ")"));
  }
  if (!FixedLengths(bench) || live.completed == 0) return absl::OkStatus();
  const double n = static_cast<double>(requests.size());
  double asked = 0;
  for (const BenchRequest& r : requests) asked += static_cast<double>(Cap(r));
  const int64_t longest = LongestAllowedReply(bench);
  if (live.total_output_tokens > live.completed * longest) {
    return absl::InvalidArgumentError(absl::StrCat(
        "the live run's total_output_tokens (", live.total_output_tokens, ") is more than its ",
        live.completed, " completed requests could generate (at most ", longest, " each)"));
  }
  if (bench.ignore_eos) return absl::OkStatus();
  const double target = static_cast<double>(live.total_output_tokens) /
                        static_cast<double>(live.completed);
  // Half a token per request of slack: below that a cut is noise.
  if (target >= asked / n - 0.5) return absl::OkStatus();

  // The project's own variates: std:: distributions differ between
  // standard libraries, and the cut must not.
  std::mt19937_64 rng(static_cast<uint64_t>(bench.seed) ^ 0xE05E05E05ULL);
  std::vector<double> u(requests.size());
  for (double& x : u) x = UniformOpen01(rng);
  auto mean_reply = [&](double eos_mean) {
    double sum = 0;
    for (size_t i = 0; i < requests.size(); ++i) {
      sum += static_cast<double>(std::min(Cap(requests[i]), GeometricLength(eos_mean, u[i])));
    }
    return sum / n;
  };
  // The mean reply grows with the EOS mean; bisect in log space.
  double lo = 1.0, hi = 1e12;
  for (int i = 0; i < 100; ++i) {
    const double mid = std::sqrt(lo * hi);
    (mean_reply(mid) < target ? lo : hi) = mid;
  }
  for (size_t i = 0; i < requests.size(); ++i) {
    BenchRequest& r = requests[i];
    const int64_t cap = Cap(r);
    r.max_completion_tokens = cap;
    r.output_tokens = std::min(cap, GeometricLength(hi, u[i]));
  }
  if (notice != nullptr) {
    absl::StrAppend(notice, "; replies cut at a geometric EOS length (mean ",
                    static_cast<int64_t>(std::llround(hi)),
                    " tokens) so that they average the live run's ",
                    absl::SixDigits(target), " tokens per completed request");
  }
  return absl::OkStatus();
}

}  // namespace servesim::workload
