// A minimal thread pool for independent simulations: runs body(i) for every i
// in [0, n) on up to `threads` std::threads (the caller's thread is one).
#ifndef SERVESIM_SIM_PLANNING_PARALLEL_FOR_H_
#define SERVESIM_SIM_PLANNING_PARALLEL_FOR_H_

#include <cstddef>
#include <functional>

namespace servesim::planning {

// Indices are claimed in increasing order; `body` must only write state owned
// by its index (results land in index order whatever the thread count).
// Returns when every body has returned.
void ParallelFor(size_t n, int threads, const std::function<void(size_t)>& body);

}  // namespace servesim::planning

#endif  // SERVESIM_SIM_PLANNING_PARALLEL_FOR_H_
