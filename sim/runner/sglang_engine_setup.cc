// SGLang: not modelled yet (ParseSglangServe refuses before this is reached).
#include "sim/runner/engine_setup.h"

namespace servesim::runner {

absl::StatusOr<EngineSetup> SetupSglang(const scenarios::EngineConfig&, const models::ModelSpec&,
                                        const scenarios::EngineParams&) {
  return absl::UnimplementedError("the SGLang engine is not modelled yet");
}

}  // namespace servesim::runner
