#include "base/json_scanner.h"

#include <optional>
#include <string>

#include "gtest/gtest.h"

namespace servesim {
namespace {

std::optional<std::string> ReadString(const std::string& json, std::string* error = nullptr) {
  JsonScanner scan(json);
  std::optional<std::string> s = scan.String();
  if (error != nullptr) *error = scan.string_error();
  return s;
}

// RFC 8259 §7: the two-character escapes and \uXXXX, a character outside the
// Basic Multilingual Plane as a surrogate pair.
TEST(JsonScannerTest, StringEscapesDecodeAsJsonDefinesThem) {
  EXPECT_EQ(ReadString(R"("a\"b\\c\/d")"), "a\"b\\c/d");
  EXPECT_EQ(ReadString(R"("\b\f\n\r\t")"), "\b\f\n\r\t");
  EXPECT_EQ(ReadString(R"("\u006dtp")"), "mtp");
  EXPECT_EQ(ReadString(R"("\u00e9")"), "\xC3\xA9");                   // é
  EXPECT_EQ(ReadString(R"("\u20AC")"), "\xE2\x82\xAC");                // €
  EXPECT_EQ(ReadString(R"("\ud83d\ude00")"), "\xF0\x9F\x98\x80");      // U+1F600
}

// Python's json.loads refuses these ("Invalid \escape", "Invalid \uXXXX
// escape"); a reader that kept the escaped character ran "\mtp" as "mtp".
TEST(JsonScannerTest, BadEscapesAreRefusedWithTheirReason) {
  std::string error;
  EXPECT_EQ(ReadString(R"("\mtp")", &error), std::nullopt);
  EXPECT_EQ(error, "invalid escape '\\m'");
  EXPECT_EQ(ReadString(R"("\x41")", &error), std::nullopt);
  EXPECT_EQ(error, "invalid escape '\\x'");
  EXPECT_EQ(ReadString(R"("\u12")", &error), std::nullopt);
  EXPECT_EQ(error, "invalid \\u escape");
  EXPECT_EQ(ReadString(R"("\u12g4")", &error), std::nullopt);
  EXPECT_EQ(ReadString(R"("\ude00")", &error), std::nullopt);  // a low surrogate alone
  EXPECT_EQ(error, "invalid \\u escape");
  EXPECT_EQ(ReadString(R"("\ud83d")", &error), std::nullopt);  // a high one alone
  EXPECT_EQ(ReadString(R"("abc)", &error), std::nullopt);
  EXPECT_EQ(error, "unterminated string");
  EXPECT_EQ(ReadString(R"("abc\)", &error), std::nullopt);
  EXPECT_EQ(error, "unterminated string");
}

}  // namespace
}  // namespace servesim
