// Numbers as the tools servesim mirrors read them: Python's float() and
// argparse's type=float take "1e3", "inf" and "nan", but not C's hexadecimal
// forms ("0x10", "0x1p3"), which absl::SimpleAtod (strtod) would accept.
#ifndef SERVESIM_BASE_DECIMAL_H_
#define SERVESIM_BASE_DECIMAL_H_

#include <charconv>
#include <string>

#include "absl/strings/numbers.h"
#include "absl/strings/string_view.h"

namespace servesim {

inline bool ParseDecimal(absl::string_view text, double* out) {
  if (text.find_first_of("xX") != absl::string_view::npos) return false;
  return absl::SimpleAtod(text, out);
}

// The shortest text that reads back as `value` (as Python's repr prints a
// float, less its ".0"): an error that says "must be in (0, 1], got X" must
// not print 1.0000001 as 1, which absl::StrCat's six digits would.
inline std::string FormatDecimal(double value) {
  char buffer[32];
  const std::to_chars_result r = std::to_chars(buffer, buffer + sizeof(buffer), value);
  return std::string(buffer, r.ptr);
}

}  // namespace servesim

#endif  // SERVESIM_BASE_DECIMAL_H_
