// `python3 -m sglang.launch_server` (SGLang v0.5.6.post2). Not modelled yet.
#include "scenarios/serve_command.h"

namespace servesim::scenarios {

absl::StatusOr<EngineConfig> ParseSglangServe(const std::vector<std::string>&, const EnvVars&,
                                              const ServeContext&) {
  return absl::UnimplementedError("--serve: the SGLang engine is not modelled yet");
}

}  // namespace servesim::scenarios
