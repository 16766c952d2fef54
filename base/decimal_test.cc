#include "base/decimal.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

namespace servesim {
namespace {

TEST(FormatDecimalTest, PrintsTheShortestTextThatReadsBack) {
  EXPECT_EQ(FormatDecimal(1.0000001), "1.0000001");
  EXPECT_EQ(FormatDecimal(0.9999999), "0.9999999");
  EXPECT_EQ(FormatDecimal(0.1), "0.1");
  EXPECT_EQ(FormatDecimal(1.0), "1");
  EXPECT_EQ(FormatDecimal(-1.0), "-1");
  EXPECT_EQ(FormatDecimal(1e308), "1e+308");
  EXPECT_EQ(FormatDecimal(1e-300), "1e-300");
  EXPECT_EQ(FormatDecimal(std::numeric_limits<double>::infinity()), "inf");
  EXPECT_EQ(FormatDecimal(-std::numeric_limits<double>::infinity()), "-inf");
  EXPECT_EQ(FormatDecimal(std::nan("")), "nan");
  for (double v : {0.3, 2.0 / 3.0, 123456.789, 5e-324, 1.7976931348623157e308}) {
    double back = 0;
    ASSERT_TRUE(ParseDecimal(FormatDecimal(v), &back)) << v;
    EXPECT_EQ(back, v);
  }
}

TEST(ParseDecimalTest, TakesWhatPythonsFloatTakesAndNotHex) {
  double v = 0;
  EXPECT_TRUE(ParseDecimal("1e3", &v));
  EXPECT_EQ(v, 1000.0);
  EXPECT_TRUE(ParseDecimal("inf", &v));
  EXPECT_TRUE(std::isinf(v));
  EXPECT_FALSE(ParseDecimal("0x10", &v));
  EXPECT_FALSE(ParseDecimal("0x1p3", &v));
}

}  // namespace
}  // namespace servesim
