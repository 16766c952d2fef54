#include "sim/runner/engine_setup.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace servesim::runner {

models::KvCacheDtype ToModelKvDtype(scenarios::KvCacheDtype dtype) {
  return dtype == scenarios::KV_FP8 ? models::KvCacheDtype::kFp8DsMla
                                    : models::KvCacheDtype::kBf16;
}

absl::Status AsEngineRefusal(const absl::Status& status) {
  if (status.ok()) return status;
  return absl::FailedPreconditionError(status.message());
}

std::string DescribeKvPool(const models::ModelSpec& spec, const models::KvBudget& kv,
                           models::KvCacheDtype dtype, int dp_ranks) {
  return absl::StrFormat(
      "KV pool: %.1f GiB per GPU = %d tokens per DP rank x %d rank(s) (%s, %d B/token "
      "incl. indexer keys); weights %.1f GiB per GPU",
      static_cast<double>(kv.kv_pool_bytes) / models::kGiB, kv.kv_capacity_tokens, dp_ranks,
      models::KvCacheDtypeName(dtype), models::KvBytesPerToken(spec, dtype, false),
      static_cast<double>(kv.weight_bytes) / models::kGiB);
}

std::string ContextLengthRejection(int64_t max_model_len, int64_t prompt_tokens,
                                   int64_t output_tokens) {
  if (prompt_tokens + output_tokens <= max_model_len) return "";
  return absl::StrCat("This model's maximum context length is ", max_model_len,
                      " tokens. However, you requested ", prompt_tokens + output_tokens,
                      " tokens (", prompt_tokens, " in the messages, ", output_tokens,
                      " in the completion).");
}

absl::StatusOr<EngineSetup> PrepareEngine(const scenarios::EngineConfig& config,
                                          const models::ModelSpec& spec,
                                          const scenarios::EngineParams& params) {
  switch (config.engine()) {
    case scenarios::VLLM:
      return SetupVllm(config, spec, params);
    case scenarios::SGLANG:
      return SetupSglang(config, spec, params);
    case scenarios::TRTLLM:
      return SetupTrtllm(config, spec, params);
    default:
      return absl::InvalidArgumentError("engine not set");
  }
}

}  // namespace servesim::runner
