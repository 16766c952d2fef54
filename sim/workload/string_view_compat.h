// Debian 12's Abseil is built with ABSL_OPTION_USE_STD_STRING_VIEW=0, so
// absl::string_view is its own type; this converts at the boundary.
#ifndef SERVESIM_SIM_WORKLOAD_STRING_VIEW_COMPAT_H_
#define SERVESIM_SIM_WORKLOAD_STRING_VIEW_COMPAT_H_

#include <string_view>

#include "absl/strings/string_view.h"

namespace servesim::workload {

inline absl::string_view ToAbsl(std::string_view s) { return {s.data(), s.size()}; }

}  // namespace servesim::workload

#endif  // SERVESIM_SIM_WORKLOAD_STRING_VIEW_COMPAT_H_
