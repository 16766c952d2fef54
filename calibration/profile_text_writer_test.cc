#include "calibration/profile_text_writer.h"

#include "calibration/profile.h"
#include "google/protobuf/text_format.h"
#include "gtest/gtest.h"

namespace servesim::calibration {
namespace {

ProfileRecord SampleRecord() {
  ProfileRecord r;
  r.device.name = "NVIDIA \"H200\"\\x";
  r.device.sm_count = 132;
  r.device.memory_bytes = 150754820096;
  r.device.gpu_count = 1;
  r.device.measured_at = "2026-01-01T00:00:00Z";
  r.device.command_line = "servesim_calibrate --out a.textproto\n";
  r.copy_gbps = 4300.5;
  r.bf16_gemm_tflops = 780.25;
  r.fp8_gemm_tflops = 1400.5;
  TableRecord t;
  t.kind = "gemm_fp8";
  t.key = {{"n", 2112}, {"k", 7168}};  // unsorted on purpose
  t.x_name = "m_tokens";
  t.points = {{16, 12.5, 12, 13, 20, 1.5, 900},
              {1, 10.25, 10, 11, 20, 0.01, 1500},
              {16, 99, 99, 99, 20, 0, 0}};  // repeated x: dropped
  t.note = "scaling: block";
  r.tables.push_back(t);
  return r;
}

TEST(ProfileTextWriterTest, OutputParsesAsProfileProto) {
  ProfileProto proto;
  ASSERT_TRUE(google::protobuf::TextFormat::ParseFromString(ProfileToText(SampleRecord()), &proto));
  EXPECT_EQ(proto.schema_version(), 1);
  EXPECT_EQ(proto.device().name(), "NVIDIA \"H200\"\\x");
  EXPECT_EQ(proto.device().command_line(), "servesim_calibrate --out a.textproto\n");
  EXPECT_EQ(proto.device().memory_bytes(), 150754820096);
  EXPECT_DOUBLE_EQ(proto.ceilings().copy_gbps(), 4300.5);
  ASSERT_EQ(proto.tables_size(), 1);
  const Table& t = proto.tables(0);
  ASSERT_EQ(t.key_size(), 2);
  EXPECT_EQ(t.key(0).name(), "k");
  EXPECT_EQ(t.key(1).value(), 2112);
  ASSERT_EQ(t.points_size(), 2);
  EXPECT_DOUBLE_EQ(t.points(0).x(), 1);
  EXPECT_DOUBLE_EQ(t.points(0).median_us(), 10.25);
  EXPECT_DOUBLE_EQ(t.points(1).median_us(), 12.5);
  EXPECT_DOUBLE_EQ(t.points(1).achieved_gbps(), 900);
  EXPECT_EQ(t.note(), "scaling: block");
}

TEST(ProfileTextWriterTest, OutputValidatesAsProfile) {
  ProfileProto proto;
  ASSERT_TRUE(google::protobuf::TextFormat::ParseFromString(ProfileToText(SampleRecord()), &proto));
  auto profile = Profile::FromProto(proto, "written");
  ASSERT_TRUE(profile.ok()) << profile.status();
  EXPECT_DOUBLE_EQ(*profile->LookupUs("gemm_fp8", {{"k", 7168}, {"n", 2112}}, 16), 12.5);
}

TEST(ProfileTextWriterTest, QuotesNonPrintableBytesAsOctal) {
  EXPECT_EQ(QuoteTextString(std::string("a\x01" "b", 3)), "\"a\\001b\"");
}

}  // namespace
}  // namespace servesim::calibration
