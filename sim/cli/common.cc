#include <cstdio>
#include <filesystem>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "sim/cli/commands.h"

#ifndef SERVESIM_SOURCE_DIR
#define SERVESIM_SOURCE_DIR "."
#endif

namespace servesim::cli {

int ReportError(const absl::Status& status) {
  if (status.code() == absl::StatusCode::kFailedPrecondition) {
    std::fprintf(stderr, "error: %s\n", std::string(status.message()).c_str());
    return 1;
  }
  std::fprintf(stderr, "servesim: %s\n", std::string(status.message()).c_str());
  return 2;
}

absl::StatusOr<runner::PredictionContext> ContextFromArgs(const CliArgs& args) {
  // An empty path means "the default" to LoadPredictionContext; on the
  // command line it is a mistake (an unset shell variable), not a request
  // for the default.
  for (const char* flag : {"--repo-dir", "--model-spec", "--profile", "--params"}) {
    if (args.Has(flag) && args.Get(flag).empty()) {
      return absl::InvalidArgumentError(absl::StrCat(flag, ": empty path"));
    }
  }
  runner::ContextPaths paths;
  paths.repo_dir = args.Get("--repo-dir", SERVESIM_SOURCE_DIR);
  paths.model_spec = args.Get("--model-spec");
  paths.profile = args.Get("--profile");
  paths.params = args.Get("--params");
  return runner::LoadPredictionContext(paths);
}

absl::StatusOr<scenarios::EnvVars> EnvFromArgs(const CliArgs& args) {
  scenarios::EnvVars env;
  for (const std::string& e : args.env) {
    ASSIGN_OR_RETURN(auto kv, scenarios::ParseEnvAssignment(e));
    for (const auto& [key, value] : env) {
      if (key == kv.first) {
        return absl::InvalidArgumentError(absl::StrCat("--env: ", key, " is given twice"));
      }
    }
    env.push_back(std::move(kv));
  }
  return env;
}

bool SameFile(const std::string& a, const std::string& b) {
  if (a.empty() || b.empty()) return false;
  std::error_code ea, eb;
  const std::filesystem::path ca =
      std::filesystem::weakly_canonical(std::filesystem::absolute(a, ea), ea);
  const std::filesystem::path cb =
      std::filesystem::weakly_canonical(std::filesystem::absolute(b, eb), eb);
  return ea || eb ? a == b : ca == cb;
}

}  // namespace servesim::cli
