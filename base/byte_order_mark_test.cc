#include "base/byte_order_mark.h"

#include <string_view>

#include "absl/strings/string_view.h"
#include "gtest/gtest.h"

namespace servesim {
namespace {

TEST(ByteOrderMarkTest, DropsOnlyALeadingMark) {
  EXPECT_EQ(WithoutByteOrderMark(std::string_view("\xEF\xBB\xBFkey: 1")), "key: 1");
  EXPECT_EQ(WithoutByteOrderMark(absl::string_view("\xEF\xBB\xBF")), "");
  // A mark elsewhere, or part of one, is the text's own.
  EXPECT_EQ(WithoutByteOrderMark(std::string_view("a\xEF\xBB\xBF")), "a\xEF\xBB\xBF");
  EXPECT_EQ(WithoutByteOrderMark(std::string_view("\xEF\xBB")), "\xEF\xBB");
  EXPECT_EQ(WithoutByteOrderMark(std::string_view("")), "");
}

}  // namespace
}  // namespace servesim
