// Test and benchmark helper: the prediction context of this source tree (its
// model spec, committed profile and fitted parameters), loaded once per
// process. Needs SERVESIM_SOURCE_DIR defined by the build.
#ifndef SERVESIM_SIM_RUNNER_REPO_CONTEXT_FOR_TEST_H_
#define SERVESIM_SIM_RUNNER_REPO_CONTEXT_FOR_TEST_H_

#include <cstdio>
#include <cstdlib>
#include <string>

#include "sim/runner/prediction.h"

namespace servesim::runner {

inline const PredictionContext& RepoPredictionContext() {
  static const auto* context = [] {
    ContextPaths paths;
    paths.repo_dir = SERVESIM_SOURCE_DIR;
    absl::StatusOr<PredictionContext> c = LoadPredictionContext(paths);
    if (!c.ok()) {
      std::fprintf(stderr, "cannot load the repository's prediction context: %s\n",
                   std::string(c.status().message()).c_str());
      std::abort();
    }
    return new PredictionContext(*std::move(c));
  }();
  return *context;
}

}  // namespace servesim::runner

#endif  // SERVESIM_SIM_RUNNER_REPO_CONTEXT_FOR_TEST_H_
