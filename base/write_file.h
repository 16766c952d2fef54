// Writes a whole output file (a result JSON, a step log, a sweep table, a
// parameters file) and says when it did not reach the disk.
#ifndef SERVESIM_BASE_WRITE_FILE_H_
#define SERVESIM_BASE_WRITE_FILE_H_

#include <fstream>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace servesim {

// Writes `text` to `path`, replacing it, or after what it holds with
// `append`. InvalidArgument "cannot write PATH" when the file cannot be
// opened or the bytes do not reach it: a full disk shows only when the
// stream's buffer is flushed, so the file is closed before it is checked.
inline absl::Status WriteStringToFile(const std::string& path, std::string_view text,
                                      bool append = false) {
  std::ofstream out(path, std::ios::binary | (append ? std::ios::app : std::ios::trunc));
  out << text;
  out.close();
  if (!out) return absl::InvalidArgumentError(absl::StrCat("cannot write ", path));
  return absl::OkStatus();
}

}  // namespace servesim

#endif  // SERVESIM_BASE_WRITE_FILE_H_
