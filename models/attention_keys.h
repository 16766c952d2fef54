// How many keys the query rows of one sequence attend, the counts that price
// the indexer, the top-k and sparse MLA (models/op_graph.cc) and that the
// iteration check's CUDA composition runs (calibration/cuda/iteration_bench.cu):
// one definition, so the two cannot drift apart. Row i of q query rows after
// c cached tokens sees c + i + 1 keys (causal, its own token included).
// Header-only and C++17: nvcc compiles the bench.
#ifndef SERVESIM_MODELS_ATTENTION_KEYS_H_
#define SERVESIM_MODELS_ATTENTION_KEYS_H_

#include <algorithm>
#include <cstdint>

namespace servesim::models {

// Σ over query rows i = 0..q-1 of the keys row i sees, c + i + 1.
inline int64_t CausalPairs(int64_t q, int64_t c) { return q * c + q * (q + 1) / 2; }

// Same with each row capped at `cap` keys (top-k selection).
inline int64_t CappedPairs(int64_t q, int64_t c, int64_t cap) {
  const int64_t uncapped = std::clamp<int64_t>(cap - c, 0, q);
  return CausalPairs(uncapped, c) + (q - uncapped) * cap;
}

// Keys of the query rows (key counts c+1 .. c+q) that have more than `cap`
// keys: only those rows need a top-k selection; a shorter row keeps all.
inline int64_t KeysOfRowsLongerThan(int64_t q, int64_t c, int64_t cap) {
  const int64_t first = std::max(c + 1, cap + 1), last = c + q;
  if (first > last) return 0;
  return (first + last) * (last - first + 1) / 2;
}

}  // namespace servesim::models

#endif  // SERVESIM_MODELS_ATTENTION_KEYS_H_
