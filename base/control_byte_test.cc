#include "base/control_byte.h"

#include <string_view>

#include "gtest/gtest.h"

namespace servesim {
namespace {

TEST(ControlByteTest, FindsTheFirstOneButTabsAndAllowedLineBreaks) {
  EXPECT_EQ(FirstControlByte(std::string_view("vllm serve\t-tp 8"), false), std::nullopt);
  EXPECT_EQ(FirstControlByte(std::string_view("a \\\n b\r\n"), true), std::nullopt);
  EXPECT_EQ(FirstControlByte(std::string_view("a\r\n"), false), 1u);
  EXPECT_EQ(FirstControlByte(std::string_view("m\x1b[31m\x01"), true), 1u);
  EXPECT_EQ(FirstControlByte(std::string_view("abc\x7f"), true), 3u);
  EXPECT_EQ(FirstControlByte(std::string_view("\0", 1), true), 0u);
  EXPECT_EQ(FirstControlByte(std::string_view("caf\xc3\xa9"), false), std::nullopt);  // UTF-8
}

}  // namespace
}  // namespace servesim
