// Reads a whole input file (model spec, profile, parameters) into memory, and
// tells a path that is not a readable file apart from an empty file.
#ifndef SERVESIM_BASE_READ_FILE_H_
#define SERVESIM_BASE_READ_FILE_H_

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <system_error>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"

namespace servesim {

// The file's bytes. NotFound "cannot open PATH" when it cannot be opened;
// InvalidArgument "PATH: not a readable file (a directory)" for a directory,
// which std::ifstream opens on Linux and then reads as empty, so a loader
// would take it for an empty input.
inline absl::StatusOr<std::string> ReadFileToString(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": not a readable file (a directory)"));
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrCat("cannot open ", path));
  std::stringstream text;
  text << in.rdbuf();
  if (in.bad()) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": not a readable file (read error)"));
  }
  return text.str();
}

}  // namespace servesim

#endif  // SERVESIM_BASE_READ_FILE_H_
