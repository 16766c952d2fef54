// `trtllm-serve` (TensorRT-LLM 1.2.0rc5). Not modelled yet.
#include "scenarios/serve_command.h"

namespace servesim::scenarios {

absl::StatusOr<EngineConfig> ParseTrtllmServe(const std::vector<std::string>&, const EnvVars&,
                                              const ServeContext&) {
  return absl::UnimplementedError("--serve: the TensorRT-LLM engine is not modelled yet");
}

}  // namespace servesim::scenarios
