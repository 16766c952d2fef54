// Text a user gives servesim (a flag's value, a line of a file) is echoed into
// reports and errors; a control byte there (a terminal escape, a binary file's
// bytes) is refused where it is read.
#ifndef SERVESIM_BASE_CONTROL_BYTE_H_
#define SERVESIM_BASE_CONTROL_BYTE_H_

#include <cstddef>
#include <optional>

namespace servesim {

// The position of `text`'s first control byte (below 0x20, or 0x7f) other
// than a tab and, where `line_breaks` is true, a newline or carriage return;
// nullopt if it has none. `StringView` is std:: or absl::string_view.
template <typename StringView>
std::optional<size_t> FirstControlByte(StringView text, bool line_breaks) {
  for (size_t i = 0; i < text.size(); ++i) {
    const auto byte = static_cast<unsigned char>(text[i]);
    const bool line_break = byte == '\n' || byte == '\r';
    if ((byte < 0x20 && byte != '\t' && !(line_breaks && line_break)) || byte == 0x7f) return i;
  }
  return std::nullopt;
}

}  // namespace servesim

#endif  // SERVESIM_BASE_CONTROL_BYTE_H_
