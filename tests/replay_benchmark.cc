// Google Benchmark of the simulator's hot path: one ShareGPT-1000 replay of
// vLLM TP8 (and SGLang DP8) from the committed profile, context loaded once.
#include <benchmark/benchmark.h>

#include "sim/runner/prediction.h"
#include "sim/runner/repo_context_for_test.h"

namespace {

const servesim::runner::PredictionContext& Context() { return servesim::runner::RepoPredictionContext(); }

void Replay(benchmark::State& state, const char* serve) {
  servesim::runner::RunRequest request;
  request.serve_command = serve;
  request.bench_command =
      "vllm bench serve --dataset-name sharegpt --dataset-path ShareGPT.json --num-prompts 1000";
  for (auto _ : state) {
    auto p = servesim::runner::Predict(Context(), request);
    if (!p.ok()) state.SkipWithError(std::string(p.status().message()).c_str());
    benchmark::DoNotOptimize(p);
  }
}

void BM_ShareGpt1000VllmTp8(benchmark::State& state) {
  Replay(state, "vllm serve deepseek-ai/DeepSeek-V3.2 -tp 8");
}
BENCHMARK(BM_ShareGpt1000VllmTp8)->Unit(benchmark::kMillisecond);

void BM_ShareGpt1000VllmDp8Ep(benchmark::State& state) {
  Replay(state,
         "vllm serve deepseek-ai/DeepSeek-V3.2 -tp 1 -dp 8 --enable-expert-parallel "
         "--max-model-len 81920");
}
BENCHMARK(BM_ShareGpt1000VllmDp8Ep)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
