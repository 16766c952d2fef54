// A line-based reader for the small YAML subset of TensorRT-LLM's
// --extra_llm_api_options files: nested mappings by indentation, scalars,
// flow lists ([1, 2]) and block lists (- 1). Anything else is an error.
#ifndef SERVESIM_SCENARIOS_MINI_YAML_H_
#define SERVESIM_SCENARIOS_MINI_YAML_H_

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace servesim::scenarios {

struct YamlValue {
  bool is_list = false;
  bool is_null = false;          // `null`, `~` or an empty mapping header never filled
  std::string scalar;            // unquoted
  std::vector<std::string> items;  // when is_list
  int line = 0;                  // 1-based, for error messages
};

// Flattens the document into dotted paths ("kv_cache_config.dtype"). A
// mapping header ("kv_cache_config:") with children is not itself an entry;
// one without children is an is_null entry. Errors name `context` and the
// line: tabs, anchors/aliases, multi-line strings, duplicate keys, bad
// indentation, unterminated flow lists.
absl::StatusOr<std::map<std::string, YamlValue>> ParseMiniYaml(std::string_view text,
                                                               const std::string& context);

}  // namespace servesim::scenarios

#endif  // SERVESIM_SCENARIOS_MINI_YAML_H_
