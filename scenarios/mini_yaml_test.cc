#include "scenarios/mini_yaml.h"

#include <string>

#include <gtest/gtest.h>

namespace servesim::scenarios {
namespace {

// An editor's byte-order mark is no part of the first key, as in PyYAML.
TEST(MiniYamlTest, SkipsALeadingByteOrderMark) {
  auto doc = ParseMiniYaml("\xEF\xBB\xBF" "enable_attention_dp: true\n", "f");
  ASSERT_TRUE(doc.ok()) << doc.status();
  EXPECT_EQ(doc->count("enable_attention_dp"), 1u);
}

TEST(MiniYamlTest, RejectsTabsAndDuplicatesWithTheLine) {
  auto tabs = ParseMiniYaml("a:\n\tb: 1\n", "f");
  EXPECT_NE(tabs.status().message().find("line 2"), std::string::npos);
  auto dup = ParseMiniYaml("a: 1\na: 2\n", "f");
  EXPECT_NE(dup.status().message().find("duplicate key \"a\""), std::string::npos);
  auto flow = ParseMiniYaml("a: [1, 2\n", "f");
  ASSERT_FALSE(flow.ok());
  EXPECT_NE(flow.status().message().find("line 1"), std::string::npos) << flow.status();
  // Siblings must line up (PyYAML: "did not find expected key").
  auto ragged = ParseMiniYaml("kv:\n    fraction: 0.8\n  dtype: fp8\n", "f");
  ASSERT_FALSE(ragged.ok());
  EXPECT_NE(ragged.status().message().find("line 3"), std::string::npos) << ragged.status();
  EXPECT_FALSE(ParseMiniYaml("a: 1\n  b: 2\n", "f").ok());
  EXPECT_TRUE(ParseMiniYaml("a:\n    b: 1\nc:\n  d: 2\ne: 3\n", "f").ok());
  // "a.b" is one key to PyYAML, never a's option b.
  for (const char* dotted : {"a.b: 1\n", "\"a.b\": 1\n"}) {
    auto d = ParseMiniYaml(dotted, "f");
    ASSERT_FALSE(d.ok()) << dotted;
    EXPECT_NE(d.status().message().find("\"a.b\": a key with a '.' is one key"), std::string::npos)
        << d.status();
  }
  auto ok = ParseMiniYaml("a:\n  b: [1, 2]\n  c: 'x # y'\n", "f");
  ASSERT_TRUE(ok.ok());
  EXPECT_EQ(ok->at("a.b").items.size(), 2u);
  EXPECT_EQ(ok->at("a.c").scalar, "x # y");
  EXPECT_EQ(ok->count("a"), 0u);
}

}  // namespace
}  // namespace servesim::scenarios
