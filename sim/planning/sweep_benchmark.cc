// A 1000-point sweep (request rate x number of prompts, small random
// workloads) on 2 threads: the target is <= 30 s on 2 cores.
#include <benchmark/benchmark.h>

#include <cstdlib>

#include "absl/strings/str_cat.h"
#include "sim/planning/sweep.h"
#include "sim/runner/repo_context_for_test.h"

namespace servesim::planning {
namespace {

const runner::PredictionContext& Context() { return runner::RepoPredictionContext(); }

// 50 request rates x 20 prompt counts = 1000 points; each point a random
// workload of 256-token prompts and 32-token outputs, 10..200 requests.
std::vector<Axis> Axes() {
  Axis rate, prompts;
  rate.name = "--request-rate";
  rate.target = AxisTarget::kBench;
  for (int i = 1; i <= 50; ++i) rate.values.push_back(absl::StrCat(i));
  prompts.name = "--num-prompts";
  prompts.target = AxisTarget::kBench;
  for (int i = 1; i <= 20; ++i) prompts.values.push_back(absl::StrCat(10 * i));
  return {rate, prompts};
}

void BM_Sweep1000Points(benchmark::State& state) {
  const int threads = static_cast<int>(state.range(0));
  auto points = ExpandGrid("vllm serve deepseek-ai/DeepSeek-V3.2 -tp 8",
                           "vllm bench serve --dataset-name random --random-input-len 256 "
                           "--random-output-len 32",
                           Axes());
  if (!points.ok() || points->size() != 1000) std::abort();
  const PointEvaluator evaluate = PredictEvaluator(Context(), {});
  for (auto _ : state) {
    std::vector<PointResult> results = RunPoints(*points, evaluate, threads, nullptr);
    for (const PointResult& r : results) {
      if (r.status != PointStatus::kOk) std::abort();
    }
    benchmark::DoNotOptimize(results);
  }
  state.counters["points"] = 1000;
}
BENCHMARK(BM_Sweep1000Points)->Arg(2)->Unit(benchmark::kSecond)->Iterations(1)->UseRealTime();

}  // namespace
}  // namespace servesim::planning

BENCHMARK_MAIN();
