#include "sim/workload/csv.h"

#include <gtest/gtest.h>

namespace servesim::workload {
namespace {

TEST(ParseCsvTest, QuotedFieldsKeepCommasQuotesAndNewlines) {
  auto rows = ParseCsv("a,b\n\"x, y\",\"say \"\"hi\"\"\nthere\"\n");
  ASSERT_TRUE(rows.ok());
  ASSERT_EQ(rows->size(), 2u);
  EXPECT_EQ((*rows)[1][0], "x, y");
  EXPECT_EQ((*rows)[1][1], "say \"hi\"\nthere");
}

TEST(ParseCsvTest, ReadsQuotedCommasQuotesAndLineBreaks) {
  absl::StatusOr<std::vector<std::vector<std::string>>> r =
      ParseCsv("a,\"b,c\",\"d\"\"e\"\r\n\"x\ny\",,\n");
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->size(), 2u);
  EXPECT_EQ((*r)[0], (std::vector<std::string>{"a", "b,c", "d\"e"}));
  EXPECT_EQ((*r)[1], (std::vector<std::string>{"x\ny", "", ""}));
  EXPECT_FALSE(ParseCsv("a,\"open\n").ok());
}

TEST(ParseCsvTest, UnterminatedQuoteIsAnError) {
  auto r = ParseCsv("a\n\"open\n");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(), "unterminated quote opened at line 2");
}

}  // namespace
}  // namespace servesim::workload
