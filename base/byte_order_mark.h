// A UTF-8 byte-order mark, which editors and spreadsheet programs write
// before a text file's first line, is no part of that line: every reader of
// a user's file drops it.
#ifndef SERVESIM_BASE_BYTE_ORDER_MARK_H_
#define SERVESIM_BASE_BYTE_ORDER_MARK_H_

namespace servesim {

// `text` without a leading UTF-8 byte-order mark; a string_view of either
// std:: or absl:: kind.
template <typename StringView>
StringView WithoutByteOrderMark(StringView text) {
  constexpr char kMark[] = "\xEF\xBB\xBF";
  if (text.substr(0, 3) == StringView(kMark, 3)) text.remove_prefix(3);
  return text;
}

}  // namespace servesim

#endif  // SERVESIM_BASE_BYTE_ORDER_MARK_H_
