#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <thread>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/status_macros.h"
#include "sim/cli/commands.h"
#include "sim/fit/fold_spread.h"

#ifndef SERVESIM_SOURCE_DIR
#define SERVESIM_SOURCE_DIR "."
#endif

namespace servesim::cli {

std::string OneLineMessage(absl::string_view message) {
  // A message that quotes its input (a trace line, a flag, a JSON value) is
  // cut: a 5 MB line names its problem in the first few hundred bytes.
  constexpr size_t kMaxBytes = 600;
  std::string out(message.substr(0, kMaxBytes));
  if (message.size() > kMaxBytes) {
    // Not inside a UTF-8 character: find the last lead byte (at most three
    // continuation bytes back) and drop its character if the cut split it.
    size_t lead = out.size();
    for (size_t back = 1; back <= 4 && back <= out.size(); ++back) {
      const unsigned char c = static_cast<unsigned char>(out[out.size() - back]);
      if ((c & 0xC0) != 0x80) {
        lead = out.size() - back;
        break;
      }
    }
    if (lead < out.size()) {
      const unsigned char c = static_cast<unsigned char>(out[lead]);
      const size_t length = c < 0x80 ? 1 : c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : c >= 0xC0 ? 2 : 1;
      if (lead + length > out.size()) out.resize(lead);
    }
    absl::StrAppend(&out, "... (", message.size() - out.size(), " more bytes)");
  }
  // One line, and no terminal control bytes from a binary file quoted in it.
  std::string printable;
  printable.reserve(out.size());
  for (const char c : out) {
    const auto byte = static_cast<unsigned char>(c);
    if (c == '\n' || c == '\r' || c == '\t') {
      printable += ' ';
    } else if (byte < 0x20 || byte == 0x7F) {
      absl::StrAppend(&printable, absl::StrFormat("\\x%02x", byte));
    } else {
      printable += c;
    }
  }
  return printable;
}

absl::StatusOr<int> IntFlag(const CliArgs& args, const std::string& flag, int fallback, int min) {
  if (!args.Has(flag)) return fallback;
  int v = 0;
  if (!absl::SimpleAtoi(args.Get(flag), &v) || v < min) {
    return absl::InvalidArgumentError(
        absl::StrCat(flag, ": expected an integer >= ", min, ", got \"", args.Get(flag), "\""));
  }
  return v;
}

absl::StatusOr<int> ThreadsFlag(const CliArgs& args) {
  constexpr int kMaxThreads = 1024;
  if (!args.Has("--threads")) return std::min(DefaultThreads(), kMaxThreads);
  int v = 0;
  if (!absl::SimpleAtoi(args.Get("--threads"), &v) || v < 1 || v > kMaxThreads) {
    return absl::InvalidArgumentError(absl::StrCat("--threads: expected an integer from 1 to ",
                                                   kMaxThreads, ", got \"",
                                                   args.Get("--threads"), "\""));
  }
  return v;
}

int DefaultThreads() { return std::max(1, static_cast<int>(std::thread::hardware_concurrency())); }

const std::string* FirstRepeated(const std::vector<std::string>& values) {
  for (auto it = values.begin(); it != values.end(); ++it) {
    if (std::find(values.begin(), it, *it) != it) return &*it;
  }
  return nullptr;
}

int ReportError(const absl::Status& status) {
  const std::string message = OneLineMessage(status.message());
  if (status.code() == absl::StatusCode::kFailedPrecondition) {
    std::fprintf(stderr, "error: %s\n", message.c_str());
    return 1;
  }
  std::fprintf(stderr, "servesim: %s\n", message.c_str());
  return 2;
}

absl::StatusOr<runner::PredictionContext> ContextFromArgs(const CliArgs& args) {
  // (An empty path, "the default" to LoadPredictionContext, never comes
  // from the command line: ParseCliArgs refuses empty values.)
  runner::ContextPaths paths;
  paths.repo_dir = args.Get("--repo-dir", SERVESIM_SOURCE_DIR);
  paths.model_spec = args.Get("--model-spec");
  paths.profile = args.Get("--profile");
  paths.params = args.Get("--params");
  if (args.Has("--any-gpu-profile")) paths.profile_gpu = calibration::ProfileGpu::kAnyGpu;
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

namespace {

std::string RepoFoldsPath(const runner::PredictionContext& context) {
  return absl::StrCat(context.paths.repo_dir, "/scenarios/fitted_params_folds.textproto");
}

}  // namespace

absl::StatusOr<std::optional<SpreadFolds>> HeldOutFolds(const std::optional<SpreadFolds>& spread,
                                                        const runner::PredictionContext& context) {
  if (spread) return spread;
  const std::string path = RepoFoldsPath(context);
  std::error_code error;
  if (!std::filesystem::exists(path, error)) return std::nullopt;
  SpreadFolds folds;
  ASSIGN_OR_RETURN(folds.fits, fit::LoadFoldFits(path, "fold file"));
  folds.path = path;
  folds.source = runner::RepoRelative(context, path);
  return folds;
}

std::optional<fit::HeldOutEvidence> HeldOutEvidenceFor(const runner::PredictionContext& context,
                                                       const std::optional<SpreadFolds>& folds,
                                                       scenarios::EngineKind engine,
                                                       const std::string& layout_family) {
  if (!folds) return std::nullopt;
  const scenarios::EngineParams* in_use = runner::FindEngineParams(context.params, engine);
  if (in_use == nullptr) return std::nullopt;
  return fit::FindHeldOutEvidence(folds->fits, *in_use, layout_family);
}

absl::StatusOr<std::optional<SpreadFolds>> SpreadFoldsFromArgs(
    const CliArgs& args, const runner::PredictionContext& context) {
  if (!args.Has("--spread")) {
    if (args.Has("--folds")) {
      return absl::InvalidArgumentError(
          "--folds goes with --spread (the predictions over the leave-one-out's fits)");
    }
    return std::nullopt;
  }
  if (args.Has("--params")) {
    return absl::InvalidArgumentError(
        "--params: --spread predicts with the fits in --folds (their fit on every run gives the "
        "central figures), not with a parameters file; give one or the other");
  }
  const std::string path = args.Get("--folds", RepoFoldsPath(context));
  SpreadFolds folds;
  ASSIGN_OR_RETURN(folds.fits, fit::LoadFoldFits(path, "--folds"));
  ASSIGN_OR_RETURN(folds.threads, ThreadsFlag(args));
  folds.path = path;
  folds.source = runner::RepoRelative(context, path);
  return folds;
}

runner::PredictionContext SpreadCentralContext(const runner::PredictionContext& context,
                                               const SpreadFolds& folds) {
  runner::PredictionContext central = context;
  for (const scenarios::FoldFit& f : folds.fits.folds()) {
    if (f.held_out().empty()) central = runner::WithEngineParams(central, f.params());
  }
  central.paths.params = folds.path;
  return central;
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

std::vector<NamedPath> ContextInputs(const runner::PredictionContext& context) {
  return {{"--profile", context.paths.profile},
          {"--params", context.paths.params},
          {"--model-spec", context.paths.model_spec}};
}

absl::Status CheckOutputIsNoInput(const std::string& out_flag, const std::string& out_path,
                                  const std::vector<NamedPath>& inputs) {
  for (const NamedPath& in : inputs) {
    if (in.path != "roofline" && in.path != "none" && SameFile(out_path, in.path)) {
      return absl::InvalidArgumentError(
          absl::StrCat(out_flag, ": ", out_path, " is the file ", in.flag, " reads"));
    }
  }
  return absl::OkStatus();
}

}  // namespace servesim::cli
