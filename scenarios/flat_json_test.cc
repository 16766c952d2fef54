#include "scenarios/flat_json.h"

#include <map>
#include <string>

#include "gtest/gtest.h"

namespace servesim::scenarios {
namespace {

// vLLM's documented MTP form: --speculative-config '{"method":"mtp","num_speculative_tokens":1}'.
TEST(FlatJsonTest, ReadsStringsNumbersAndBooleans) {
  absl::StatusOr<std::map<std::string, std::string>> m = ParseFlatJsonObject(
      R"({"method": "mtp", "num_speculative_tokens": 3, "disable": false, "x": null})");
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_EQ(m->size(), 4u);
  EXPECT_EQ(m->at("method"), "mtp");
  EXPECT_EQ(m->at("num_speculative_tokens"), "3");
  EXPECT_EQ(m->at("disable"), "false");
  EXPECT_EQ(m->at("x"), "null");
  ASSERT_TRUE(ParseFlatJsonObject("{}").ok());
  EXPECT_TRUE(ParseFlatJsonObject(" { } ")->empty());
}

TEST(FlatJsonTest, RefusesWhatItCannotRead) {
  const struct {
    const char* text;
    const char* why;
  } kBad[] = {
      {R"({"a": {"b": 1}})", "nested objects and arrays are not supported"},
      {R"({"a": [1, 2]})", "nested objects and arrays are not supported"},
      {R"({"a" 1})", "expected ':'"},
      {R"({"a": 1 "b": 2})", "expected ',' or '}'"},
      {R"({"a": 1} x)", "trailing characters"},
      {R"(["a"])", "expected '{'"},
      {R"({a: 1})", "expected a string"},
      {"", "expected '{'"},
  };
  for (const auto& bad : kBad) {
    absl::StatusOr<std::map<std::string, std::string>> m = ParseFlatJsonObject(bad.text);
    ASSERT_FALSE(m.ok()) << bad.text;
    EXPECT_NE(std::string(m.status().message()).find(bad.why), std::string::npos)
        << bad.text << ": " << m.status();
  }
}

}  // namespace
}  // namespace servesim::scenarios
