// Reads a whole input file (model spec, profile, parameters, traces, live
// runs) into memory, and tells a path that is not a readable file apart from
// an empty file.
#ifndef SERVESIM_BASE_READ_FILE_H_
#define SERVESIM_BASE_READ_FILE_H_

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <system_error>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"

namespace servesim {

// The largest input servesim reads: far above any trace, profile or the
// ShareGPT JSON (~0.7 GB), and below what would exhaust a laptop's memory
// (a device such as /dev/zero had read until the process was killed).
inline constexpr std::uintmax_t kMaxInputFileBytes = std::uintmax_t{1} << 30;

inline absl::Status InputTooLarge(const std::string& path) {
  return absl::InvalidArgumentError(
      absl::StrCat(path, ": larger than the 1 GiB servesim reads as one input"));
}

// OK for what may be read as an input: a regular file of at most
// kMaxInputFileBytes, or a pipe (whose size the reader bounds). A directory,
// which std::ifstream opens on Linux and then reads as empty, or a device
// (endless, or not a file at all) is InvalidArgument "PATH: not a readable
// file (...)". A path that does not exist is left to the opener.
inline absl::Status CheckInputFile(const std::string& path) {
  std::error_code ec;
  const std::filesystem::file_status st = std::filesystem::status(path, ec);
  if (ec) return absl::OkStatus();
  if (std::filesystem::is_directory(st)) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": not a readable file (a directory)"));
  }
  if (std::filesystem::is_character_file(st) || std::filesystem::is_block_file(st) ||
      std::filesystem::is_socket(st)) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": not a readable file (a device)"));
  }
  if (std::filesystem::is_regular_file(st)) {
    const std::uintmax_t size = std::filesystem::file_size(path, ec);
    if (!ec && size > kMaxInputFileBytes) return InputTooLarge(path);
  }
  return absl::OkStatus();
}

// The file's bytes. NotFound "cannot open PATH" when it cannot be opened;
// InvalidArgument for what CheckInputFile refuses, or a pipe that runs past
// kMaxInputFileBytes.
inline absl::StatusOr<std::string> ReadFileToString(const std::string& path) {
  if (absl::Status ok = CheckInputFile(path); !ok.ok()) return ok;
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrCat("cannot open ", path));
  std::string text;
  char chunk[1 << 16];
  while (in.read(chunk, sizeof(chunk)) || in.gcount() > 0) {
    text.append(chunk, static_cast<size_t>(in.gcount()));
    if (text.size() > kMaxInputFileBytes) return InputTooLarge(path);
  }
  if (in.bad()) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": not a readable file (read error)"));
  }
  return text;
}

}  // namespace servesim

#endif  // SERVESIM_BASE_READ_FILE_H_
