// Numbers as the tools servesim mirrors read them: Python's float() and
// argparse's type=float take "1e3", "inf" and "nan", but not C's hexadecimal
// forms ("0x10", "0x1p3"), which absl::SimpleAtod (strtod) would accept.
#ifndef SERVESIM_BASE_DECIMAL_H_
#define SERVESIM_BASE_DECIMAL_H_

#include "absl/strings/numbers.h"
#include "absl/strings/string_view.h"

namespace servesim {

inline bool ParseDecimal(absl::string_view text, double* out) {
  if (text.find_first_of("xX") != absl::string_view::npos) return false;
  return absl::SimpleAtod(text, out);
}

}  // namespace servesim

#endif  // SERVESIM_BASE_DECIMAL_H_
