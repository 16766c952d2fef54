// TensorRT-LLM: not modelled yet (ParseTrtllmServe refuses before this is reached).
#include "sim/runner/engine_setup.h"

namespace servesim::runner {

absl::StatusOr<EngineSetup> SetupTrtllm(const scenarios::EngineConfig&, const models::ModelSpec&,
                                        const scenarios::EngineParams&) {
  return absl::UnimplementedError("the TensorRT-LLM engine is not modelled yet");
}

}  // namespace servesim::runner
