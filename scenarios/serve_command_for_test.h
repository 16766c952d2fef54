// ParseServeCommand as the simulator calls it for DeepSeek-V3.2: the model
// spec's max_position_embeddings (models/deepseek_v32.textproto) in the context.
#ifndef SERVESIM_SCENARIOS_SERVE_COMMAND_FOR_TEST_H_
#define SERVESIM_SCENARIOS_SERVE_COMMAND_FOR_TEST_H_

#include <cstdint>
#include <string_view>

#include "scenarios/serve_command.h"

namespace servesim::scenarios {

// models/deepseek_v32.textproto's max_position_embeddings.
inline constexpr int64_t kDeepSeekV32MaxPositionEmbeddings = 163840;

inline absl::StatusOr<EngineConfig> ParseV32ServeCommand(std::string_view command,
                                                         const EnvVars& env = {},
                                                         ServeContext context = {}) {
  context.max_position_embeddings = kDeepSeekV32MaxPositionEmbeddings;
  return ParseServeCommand(command, env, context);
}

}  // namespace servesim::scenarios

#endif  // SERVESIM_SCENARIOS_SERVE_COMMAND_FOR_TEST_H_
