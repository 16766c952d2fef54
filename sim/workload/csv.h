// CSV as the live-run tables and sweep tables hold it.
#ifndef SERVESIM_SIM_WORKLOAD_CSV_H_
#define SERVESIM_SIM_WORKLOAD_CSV_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace servesim::workload {

// RFC 4180 CSV: quoted fields, doubled quotes, commas and newlines in quotes;
// CRLF or LF line ends; blank lines skipped. An unterminated quote is an
// error naming the line it opened on.
absl::StatusOr<std::vector<std::vector<std::string>>> ParseCsv(const std::string& text);

}  // namespace servesim::workload

#endif  // SERVESIM_SIM_WORKLOAD_CSV_H_
