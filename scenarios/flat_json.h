// A reader for the flat JSON objects engines take on their command lines,
// e.g. vLLM's --speculative-config '{"method":"mtp","num_speculative_tokens":1}'.
// Values are strings, numbers, booleans or null; nesting is refused.
#ifndef SERVESIM_SCENARIOS_FLAT_JSON_H_
#define SERVESIM_SCENARIOS_FLAT_JSON_H_

#include <map>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace servesim::scenarios {

// Keys map to the value's text: strings unquoted, other values as written.
absl::StatusOr<std::map<std::string, std::string>> ParseFlatJsonObject(std::string_view text);

}  // namespace servesim::scenarios

#endif  // SERVESIM_SCENARIOS_FLAT_JSON_H_
