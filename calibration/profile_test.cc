#include "calibration/profile.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <tuple>
#include <vector>

#include "calibration/table_contract.h"
#include "google/protobuf/text_format.h"
#include "gtest/gtest.h"

namespace servesim::calibration {
namespace {

// A GEMM table with times that are not a power law, so that log-log
// interpolation differs from linear interpolation.
ProfileProto SampleProto() {
  ProfileProto p;
  p.set_schema_version(Profile::kSchemaVersion);
  DeviceInfo* d = p.mutable_device();
  d->set_name("NVIDIA H200");
  d->set_measured_at("2026-01-01T00:00:00Z");
  d->set_memory_bytes(int64_t{141} << 30);
  d->set_sm_count(132);
  d->set_gpu_count(1);
  p.mutable_ceilings()->set_copy_gbps(4000);
  p.mutable_ceilings()->set_bf16_gemm_tflops(790);
  p.mutable_ceilings()->set_fp8_gemm_tflops(1400);
  Table* t = p.add_tables();
  t->set_kind("gemm_fp8");
  KeyDim* k = t->add_key();
  k->set_name("k");
  k->set_value(7168);
  KeyDim* n = t->add_key();
  n->set_name("n");
  n->set_value(2112);
  t->set_x_name("m_tokens");
  const double xs[] = {1, 4, 16, 64};
  const double us[] = {10, 10.5, 14, 40};
  for (int i = 0; i < 4; ++i) {
    Point* pt = t->add_points();
    pt->set_x(xs[i]);
    pt->set_median_us(us[i]);
    pt->set_p10_us(us[i] * 0.9);
    pt->set_p90_us(us[i] * 1.1);
    pt->set_samples(20);
  }
  Table* r = p.add_tables();
  r->set_kind("rmsnorm");
  KeyDim* h = r->add_key();
  h->set_name("hidden");
  h->set_value(7168);
  r->set_x_name("tokens");
  Point* pt = r->add_points();
  pt->set_x(8);
  pt->set_median_us(2);
  pt->set_p10_us(2);
  pt->set_p90_us(2);
  pt->set_samples(20);
  return p;
}

const KeyDims kGemmKey = {{"k", 7168}, {"n", 2112}};

std::string TempPath(const std::string& name) {
  return (std::filesystem::temp_directory_path() / ("servesim_profile_test_" + name)).string();
}

void WriteFile(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::trunc);
  out << text;
}

TEST(ProfileTest, TextRoundTripKeepsEveryField) {
  auto profile = Profile::FromProto(SampleProto(), "sample");
  ASSERT_TRUE(profile.ok()) << profile.status();
  const std::string path = TempPath("rt.textproto");
  ASSERT_TRUE(profile->Save(path).ok());
  auto loaded = Profile::Load(path);
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_EQ(loaded->proto().SerializeAsString(), SampleProto().SerializeAsString());
  std::remove(path.c_str());
}

TEST(ProfileTest, BinaryRoundTripKeepsEveryField) {
  auto profile = Profile::FromProto(SampleProto(), "sample");
  ASSERT_TRUE(profile.ok()) << profile.status();
  const std::string path = TempPath("rt.pb");
  ASSERT_TRUE(profile->Save(path).ok());
  auto loaded = Profile::Load(path);
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_EQ(loaded->proto().SerializeAsString(), SampleProto().SerializeAsString());
  std::remove(path.c_str());
}

TEST(ProfileTest, ExactAtSamplePoints) {
  auto profile = Profile::FromProto(SampleProto(), "sample");
  ASSERT_TRUE(profile.ok());
  EXPECT_DOUBLE_EQ(*profile->LookupUs("gemm_fp8", kGemmKey, 1), 10);
  EXPECT_DOUBLE_EQ(*profile->LookupUs("gemm_fp8", kGemmKey, 4), 10.5);
  EXPECT_DOUBLE_EQ(*profile->LookupUs("gemm_fp8", kGemmKey, 16), 14);
  EXPECT_DOUBLE_EQ(*profile->LookupUs("gemm_fp8", kGemmKey, 64), 40);
}

TEST(ProfileTest, LogLogBetweenPoints) {
  auto profile = Profile::FromProto(SampleProto(), "sample");
  ASSERT_TRUE(profile.ok());
  // Midway in log x between 16 and 64 (x = 32) is the geometric mean of the
  // times: sqrt(14 * 40) = 23.664..., not the linear 22.67.
  EXPECT_NEAR(*profile->LookupUs("gemm_fp8", kGemmKey, 32), std::sqrt(14.0 * 40.0), 1e-9);
}

TEST(ProfileTest, MonotoneBetweenMonotonePoints) {
  auto profile = Profile::FromProto(SampleProto(), "sample");
  ASSERT_TRUE(profile.ok());
  double previous = 0;
  for (double x = 1; x <= 64; x += 0.25) {
    const double us = *profile->LookupUs("gemm_fp8", kGemmKey, x);
    EXPECT_GE(us, previous) << "x=" << x;
    EXPECT_GE(us, 10);
    EXPECT_LE(us, 40);
    previous = us;
  }
}

TEST(ProfileTest, BelowFirstPointIsTheLaunchFloor) {
  auto profile = Profile::FromProto(SampleProto(), "sample");
  ASSERT_TRUE(profile.ok());
  EXPECT_DOUBLE_EQ(*profile->LookupUs("gemm_fp8", kGemmKey, 0.5), 10);
  EXPECT_DOUBLE_EQ(*profile->LookupUs("gemm_fp8", kGemmKey, 0), 10);
}

TEST(ProfileTest, AboveLastPointLinearWithLastSegmentCost) {
  auto profile = Profile::FromProto(SampleProto(), "sample");
  ASSERT_TRUE(profile.ok());
  // Last segment: (40 - 14) / (64 - 16) us per token; 128 tokens is 64 more.
  EXPECT_NEAR(*profile->LookupUs("gemm_fp8", kGemmKey, 128), 40 + 64 * 26.0 / 48.0, 1e-9);
}

TEST(ProfileTest, SinglePointTableScalesProportionallyAbove) {
  auto profile = Profile::FromProto(SampleProto(), "sample");
  ASSERT_TRUE(profile.ok());
  const KeyDims key = {{"hidden", 7168}};
  EXPECT_DOUBLE_EQ(*profile->LookupUs("rmsnorm", key, 8), 2);
  EXPECT_DOUBLE_EQ(*profile->LookupUs("rmsnorm", key, 4), 2);
  EXPECT_DOUBLE_EQ(*profile->LookupUs("rmsnorm", key, 16), 4);
}

TEST(ProfileTest, MissingTableIsNullopt) {
  auto profile = Profile::FromProto(SampleProto(), "sample");
  ASSERT_TRUE(profile.ok());
  EXPECT_FALSE(profile->LookupUs("gemm_fp8", {{"k", 7168}, {"n", 24576}}, 4).has_value());
  EXPECT_FALSE(profile->LookupUs("gemm_bf16", kGemmKey, 4).has_value());
  EXPECT_FALSE(profile->HasTable("gemm_fp8", {{"n", 2112}}));
  EXPECT_TRUE(profile->HasTable("gemm_fp8", kGemmKey));
}

TEST(ProfileTest, KeysForListsTablesOfOneKind) {
  ProfileProto p = SampleProto();
  Table* t = p.add_tables();
  *t = p.tables(0);
  t->mutable_key(1)->set_value(576);  // n=576 sorts before n=2112.
  auto profile = Profile::FromProto(p, "sample");
  ASSERT_TRUE(profile.ok()) << profile.status();
  const std::vector<KeyDims> keys = profile->KeysFor("gemm_fp8");
  ASSERT_EQ(keys.size(), 2u);
  EXPECT_EQ(keys[0], (KeyDims{{"k", 7168}, {"n", 576}}));
  EXPECT_EQ(keys[1], kGemmKey);
  EXPECT_TRUE(profile->KeysFor("topk").empty());
}

// Each malformed profile must be refused with a message naming the problem.
struct Malformed {
  const char* name;
  void (*mutate)(ProfileProto*);
  const char* expected;
};

class ProfileMalformedTest : public ::testing::TestWithParam<Malformed> {};

TEST_P(ProfileMalformedTest, RefusedWithNamedProblem) {
  ProfileProto p = SampleProto();
  GetParam().mutate(&p);
  auto profile = Profile::FromProto(p, "bad.textproto");
  ASSERT_FALSE(profile.ok());
  EXPECT_NE(profile.status().message().find("bad.textproto"), std::string::npos) << profile.status();
  EXPECT_NE(profile.status().message().find(GetParam().expected), std::string::npos) << profile.status();
  EXPECT_EQ(profile.status().message().find('\n'), std::string::npos);
}

// Only the same-card iteration check asks for another GPU's profile; every
// other check still holds for it.
TEST(ProfileTest, AnotherGpusProfileOnlyWhenAsked) {
  ProfileProto p = SampleProto();
  p.mutable_device()->set_name("NVIDIA H100 80GB HBM3");
  EXPECT_FALSE(Profile::FromProto(p, "h100.textproto").ok());
  EXPECT_TRUE(Profile::FromProto(p, "h100.textproto", ProfileGpu::kAnyGpu).ok());
  p.mutable_device()->set_sm_count(0);
  auto zero_sms = Profile::FromProto(p, "h100.textproto", ProfileGpu::kAnyGpu);
  ASSERT_FALSE(zero_sms.ok());
  EXPECT_NE(zero_sms.status().message().find("device.sm_count"), std::string::npos);
}

INSTANTIATE_TEST_SUITE_P(
    Cases, ProfileMalformedTest,
    ::testing::Values(
        Malformed{"SchemaVersion", [](ProfileProto* p) { p->set_schema_version(2); }, "schema_version 2"},
        Malformed{"DescendingX", [](ProfileProto* p) { p->mutable_tables(0)->mutable_points(2)->set_x(3); },
                  "x not strictly ascending at point 2"},
        Malformed{"ZeroX", [](ProfileProto* p) { p->mutable_tables(0)->mutable_points(0)->set_x(0); },
                  "x must be in [1, 1e+15], got 0"},
        // Past these the interpolation leaves doubles (found by fuzzing).
        Malformed{"FractionalX",
                  [](ProfileProto* p) { p->mutable_tables(0)->mutable_points(0)->set_x(1e-300); },
                  "x must be in [1, 1e+15], got 1e-300"},
        Malformed{"HugeX",
                  [](ProfileProto* p) {
                    p->mutable_tables(0)->mutable_points(2)->set_x(1e296);
                  },
                  "x must be in [1, 1e+15], got 1e+296"},
        Malformed{"TinyTime",
                  [](ProfileProto* p) {
                    auto* pt = p->mutable_tables(0)->mutable_points(0);
                    pt->set_p10_us(1e-300);
                    pt->set_median_us(1e-300);
                  },
                  "times must be in [0.01, 1e+07] us, got 1e-300"},
        Malformed{"TenSecondKernel",
                  [](ProfileProto* p) {
                    auto* pt = p->mutable_tables(0)->mutable_points(1);
                    pt->set_median_us(1e300);
                    pt->set_p90_us(1e300);
                  },
                  "times must be in [0.01, 1e+07] us, got 1e+300"},
        Malformed{"NegativeTime",
                  [](ProfileProto* p) { p->mutable_tables(0)->mutable_points(1)->set_median_us(-1); },
                  "median_us must be > 0"},
        Malformed{"PercentilesOutOfOrder",
                  [](ProfileProto* p) { p->mutable_tables(0)->mutable_points(1)->set_p90_us(1); },
                  "p10 <= median <= p90"},
        Malformed{"NoPoints", [](ProfileProto* p) { p->mutable_tables(1)->clear_points(); }, "no points"},
        Malformed{"EmptyKind", [](ProfileProto* p) { p->mutable_tables(1)->clear_kind(); }, "empty kind"},
        Malformed{"UnsortedKey",
                  [](ProfileProto* p) { p->mutable_tables(0)->mutable_key()->SwapElements(0, 1); },
                  "key names not strictly sorted"},
        Malformed{"DuplicateTable", [](ProfileProto* p) { *p->add_tables() = p->tables(0); },
                  "table 2 (gemm_fp8 k=7168 n=2112): duplicate"},
        // The device block and the ceilings, which set production-kernel factors.
        Malformed{"NoDevice", [](ProfileProto* p) { p->clear_device(); }, "no device block"},
        Malformed{"NoDeviceName", [](ProfileProto* p) { p->mutable_device()->clear_name(); },
                  "device.name: empty"},
        Malformed{"NoMeasuredAt", [](ProfileProto* p) { p->mutable_device()->clear_measured_at(); },
                  "device.measured_at: empty"},
        Malformed{"ZeroMemory", [](ProfileProto* p) { p->mutable_device()->set_memory_bytes(0); },
                  "device.memory_bytes: must be in [1 GiB, 1 TiB], got 0"},
        Malformed{"NegativeMemory", [](ProfileProto* p) { p->mutable_device()->set_memory_bytes(-5); },
                  "device.memory_bytes: must be in [1 GiB, 1 TiB], got -5"},
        Malformed{"TinyMemory", [](ProfileProto* p) { p->mutable_device()->set_memory_bytes(1000); },
                  "device.memory_bytes: must be in [1 GiB, 1 TiB], got 1000"},
        Malformed{"HugeMemory",
                  [](ProfileProto* p) { p->mutable_device()->set_memory_bytes(INT64_MAX); },
                  "device.memory_bytes: must be in [1 GiB, 1 TiB], got 9223372036854775807"},
        Malformed{"ZeroSms", [](ProfileProto* p) { p->mutable_device()->set_sm_count(0); },
                  "device.sm_count: must be >= 1, got 0"},
        Malformed{"ZeroGpus", [](ProfileProto* p) { p->mutable_device()->set_gpu_count(0); },
                  "device.gpu_count: must be >= 1, got 0"},
        Malformed{"NotAnH200",
                  [](ProfileProto* p) { p->mutable_device()->set_name("NVIDIA A100"); },
                  "device.name: 'NVIDIA A100' is not an H200 (servesim models the H200 only)"},
        Malformed{"AGh200IsNoH200",
                  [](ProfileProto* p) { p->mutable_device()->set_name("NVIDIA GH200 480GB"); },
                  "device.name: 'NVIDIA GH200 480GB' is not an H200 (servesim models the H200 "
                  "only)"},
        Malformed{"NegativeL2",
                  [](ProfileProto* p) { p->mutable_device()->set_l2_bytes(-62914560); },
                  "device.l2_bytes: must be >= 0, got -62914560"},
        Malformed{"NegativeClock",
                  [](ProfileProto* p) { p->mutable_device()->set_memory_clock_mhz(-1); },
                  "device.memory_clock_mhz: must be >= 0, got -1"},
        // The table contract: a table the op graph never asks for would
        // leave its ops on the roofline without a word.
        Malformed{"UnknownKind", [](ProfileProto* p) { p->mutable_tables(1)->set_kind("ropez"); },
                  "table 1 (ropez hidden=7168): kind: 'ropez' is not a table kind of "
                  "docs/profile-tables.md"},
        Malformed{"UnknownKeyName",
                  [](ProfileProto* p) {
                    p->mutable_tables(1)->mutable_key(0)->set_name("hiddenz");
                  },
                  "table 1 (rmsnorm hiddenz=7168): key: 'hiddenz' is not a key of rmsnorm "
                  "(hidden)"},
        Malformed{"MissingKey",
                  [](ProfileProto* p) { p->mutable_tables(0)->mutable_key()->RemoveLast(); },
                  "table 0 (gemm_fp8 k=7168): key: gemm_fp8 is keyed by k, n, got 1 dimension"},
        Malformed{"NegativeKeyValue",
                  [](ProfileProto* p) { p->mutable_tables(1)->mutable_key(0)->set_value(-7168); },
                  "table 1 (rmsnorm hidden=-7168): key hidden: must be >= 1, got -7168"},
        Malformed{"FlagKeyNotZeroOrOne",
                  [](ProfileProto* p) {
                    Table* t = p->mutable_tables(1);
                    t->set_kind("host_launch");
                    t->mutable_key(0)->set_name("compiled");
                    t->mutable_key(0)->set_value(2);
                    t->set_x_name("kernels");
                  },
                  "table 1 (host_launch compiled=2): key compiled: must be 0 or 1, got 2"},
        Malformed{"UnknownXName",
                  [](ProfileProto* p) { p->mutable_tables(1)->set_x_name("tokenz"); },
                  "table 1 (rmsnorm hidden=7168): x_name: 'tokenz', rmsnorm counts tokens"},
        Malformed{"NanAchievedRate",
                  [](ProfileProto* p) {
                    p->mutable_tables(0)->mutable_points(1)->set_achieved_gbps(NAN);
                  },
                  "point 1: achieved_gbps must be a finite number >= 0, got nan"},
        Malformed{"InfiniteAchievedRate",
                  [](ProfileProto* p) {
                    p->mutable_tables(0)->mutable_points(2)->set_achieved_tflops(INFINITY);
                  },
                  "point 2: achieved_tflops must be a finite number >= 0, got inf"},
        Malformed{"NegativeAchievedRate",
                  [](ProfileProto* p) {
                    p->mutable_tables(0)->mutable_points(0)->set_achieved_gbps(-1);
                  },
                  "point 0: achieved_gbps must be a finite number >= 0, got -1"},
        Malformed{"NoCeilings", [](ProfileProto* p) { p->clear_ceilings(); }, "no ceilings block"},
        Malformed{"NanCeiling", [](ProfileProto* p) { p->mutable_ceilings()->set_copy_gbps(NAN); },
                  "ceilings.copy_gbps: must be in (0, 1e6], got nan"},
        Malformed{"ZeroCeiling",
                  [](ProfileProto* p) { p->mutable_ceilings()->set_bf16_gemm_tflops(0); },
                  "ceilings.bf16_gemm_tflops: must be in (0, 1e6], got 0"},
        Malformed{"NegativeCeiling",
                  [](ProfileProto* p) { p->mutable_ceilings()->set_fp8_gemm_tflops(-1); },
                  "ceilings.fp8_gemm_tflops: must be in (0, 1e6], got -1"},
        Malformed{"HugeCeiling",
                  [](ProfileProto* p) { p->mutable_ceilings()->set_copy_gbps(1e300); },
                  "ceilings.copy_gbps: must be in (0, 1e6], got 1e+300"}),
    [](const ::testing::TestParamInfo<Malformed>& info) { return std::string(info.param.name); });

TEST(ProfileTest, LoadReportsTextParseErrorWithLine) {
  const std::string path = TempPath("broken.textproto");
  WriteFile(path, "schema_version: 1\ntables { kind: \"x\" points { x: oops } }\n");
  auto profile = Profile::Load(path);
  ASSERT_FALSE(profile.ok());
  EXPECT_NE(profile.status().message().find(path + ": text parse error: line 2"), std::string::npos)
      << profile.status();
  std::remove(path.c_str());
}

TEST(ProfileTest, LoadRefusesUnknownExtensionAndMissingFile) {
  auto unknown = Profile::Load("/tmp/profile.json");
  ASSERT_FALSE(unknown.ok());
  EXPECT_NE(unknown.status().message().find("unknown profile extension"), std::string::npos);
  auto missing = Profile::Load("/nonexistent/dir/h200.textproto");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kNotFound);
}

// A directory opens as a stream on Linux and reads as empty: it must not
// reach the parser as an empty profile.
TEST(ProfileTest, LoadRefusesADirectory) {
  const std::string dir = TempPath("dir.textproto");
  std::filesystem::create_directories(dir);
  auto profile = Profile::Load(dir);
  ASSERT_FALSE(profile.ok());
  EXPECT_NE(profile.status().message().find(dir + ": not a readable file (a directory)"),
            std::string::npos)
      << profile.status();
  std::filesystem::remove(dir);
}

// The contract in code is the one docs/profile-tables.md states: the same
// kinds in its first table, in the same order, each with the same key names
// and x_name.
TEST(ProfileTest, TableContractIsTheDocumentedOne) {
  std::ifstream in(std::string(SERVESIM_SOURCE_DIR) + "/docs/profile-tables.md");
  ASSERT_TRUE(in);
  // The words in backquotes of a table cell.
  auto quoted = [](const std::string& cell) {
    std::vector<std::string> words;
    for (size_t at = cell.find('`'); at != std::string::npos; at = cell.find('`', at + 1)) {
      const size_t end = cell.find('`', at + 1);
      if (end == std::string::npos) break;
      words.push_back(cell.substr(at + 1, end - at - 1));
      at = end;
    }
    return words;
  };
  using Row = std::tuple<std::string, std::vector<std::string>, std::string>;  // kind, keys, x
  std::vector<Row> documented;
  std::string line;
  bool in_table = false;
  while (std::getline(in, line)) {
    if (line.rfind("| kind | key |", 0) == 0) {
      in_table = true;
      continue;
    }
    if (!in_table || line.rfind("|---", 0) == 0) continue;
    if (line.rfind("| `", 0) != 0) break;  // the table's end
    // "| `kind` | `n`, `k` | `x_name`: what x counts | meaning |"
    std::vector<std::string> cells;
    for (size_t at = 0, next; (next = line.find('|', at + 1)) != std::string::npos; at = next) {
      cells.push_back(line.substr(at + 1, next - at - 1));
    }
    ASSERT_GE(cells.size(), 3u) << line;
    std::vector<std::string> kind = quoted(cells[0]), keys = quoted(cells[1]),
                             x = quoted(cells[2]);
    ASSERT_EQ(kind.size(), 1u) << line;
    ASSERT_FALSE(x.empty()) << line;
    std::sort(keys.begin(), keys.end());  // the docs list n before k
    documented.emplace_back(kind[0], keys, x[0]);
  }
  std::vector<Row> in_code;
  for (const TableContract& c : TableContracts()) {
    std::vector<std::string> keys;
    for (const KeyDimContract& k : c.key) keys.emplace_back(k.name);
    in_code.emplace_back(std::string(c.kind), keys, std::string(c.x_name));
  }
  EXPECT_EQ(in_code, documented);
  EXPECT_EQ(documented.size(), 24u);
}

// Every committed profile passes the device and ceiling checks.
TEST(ProfileTest, CommittedProfilesLoad) {
  int loaded = 0;
  for (const auto& entry : std::filesystem::directory_iterator(
           std::string(SERVESIM_SOURCE_DIR) + "/calibration/profiles")) {
    if (entry.path().extension() != ".textproto") continue;
    auto profile = Profile::Load(entry.path().string());
    EXPECT_TRUE(profile.ok()) << profile.status();
    ++loaded;
  }
  EXPECT_GE(loaded, 2);
}

}  // namespace
}  // namespace servesim::calibration

namespace servesim::calibration {
namespace {

// The streaming stand-ins keep the rate of the fastest copy past it
// (sim/cost/op_cost.cc): on the committed profile that is the 256 MB copy,
// far past the H200's 60 MB L2 (docs/calibration.md), not an L2-resident one.
TEST(CommittedH200ProfileTest, TheFastestCopyIsThe256MbOne) {
  auto profile =
      Profile::Load(std::string(SERVESIM_SOURCE_DIR) + "/calibration/profiles/h200.textproto");
  ASSERT_TRUE(profile.ok()) << profile.status();
  const Curve* copy = profile->FindCurve("copy_d2d", {});
  ASSERT_NE(copy, nullptr);
  EXPECT_EQ(copy->FastestX(), 268435456.0);
}

// The committed H200 profile: loads, and holds the tables the op graph asks
// for (docs/profile-tables.md) with ceilings under the H200 datasheet figures
// (reference §2: 4.8 TB/s HBM, 989.5 dense BF16 and 1979 dense FP8 TFLOP/s).
TEST(CommittedH200ProfileTest, LoadsWithContractTablesAndPlausibleCeilings) {
  auto profile = Profile::Load(std::string(SERVESIM_SOURCE_DIR) + "/calibration/profiles/h200.textproto");
  ASSERT_TRUE(profile.ok()) << profile.status();
  const ProfileProto& p = profile->proto();
  EXPECT_EQ(p.device().name(), "NVIDIA H200");
  EXPECT_GT(p.ceilings().copy_gbps(), 0);
  EXPECT_LT(p.ceilings().copy_gbps(), 4800);
  EXPECT_GT(p.ceilings().bf16_gemm_tflops(), 0);
  EXPECT_LT(p.ceilings().bf16_gemm_tflops(), 989.5);
  EXPECT_LT(p.ceilings().fp8_gemm_tflops(), 1979);
  for (const KeyDims& key : std::vector<KeyDims>{{{"k", 7168}, {"n", 2112}},
                                                 {{"k", 1536}, {"n", 24576}},
                                                 {{"k", 1536}, {"n", 3072}},
                                                 {{"k", 16384}, {"n", 7168}},
                                                 {{"k", 2048}, {"n", 7168}},
                                                 {{"k", 7168}, {"n", 4096}},
                                                 {{"k", 256}, {"n", 7168}},
                                                 {{"k", 7168}, {"n", 512}}}) {
    EXPECT_TRUE(profile->HasTable("gemm_fp8", key)) << key[1].second << "x" << key[0].second;
  }
  EXPECT_TRUE(profile->HasTable("gemm_bf16", {{"k", 7168}, {"n", 129280}}));
  EXPECT_TRUE(profile->HasTable("gemm_bf16", {{"k", 7168}, {"n", 16160}}));
  for (int heads : {64, 128}) {
    for (int fp8 : {0, 1}) EXPECT_TRUE(profile->HasTable("sparse_mla_decode", {{"heads", heads}, {"kv_fp8", fp8}}));
    EXPECT_TRUE(profile->HasTable("sparse_mla_prefill", {{"heads", heads}}));
  }
  EXPECT_TRUE(profile->HasTable("grouped_gemm_fp8", {{"experts", 32}, {"k", 7168}, {"n", 4096}}));
  EXPECT_TRUE(profile->HasTable("grouped_gemm_fp8", {{"experts", 256}, {"k", 256}, {"n", 7168}}));
  EXPECT_TRUE(profile->HasTable("indexer_decode", {{"heads", 64}}));
  EXPECT_TRUE(profile->HasTable("topk", {{"k", 2048}}));
  EXPECT_TRUE(profile->HasTable("rmsnorm", {{"hidden", 7168}}));
  // A weight-bound GEMM cannot beat the measured copy ceiling by much: at
  // m = 1 the 36864 x 7168 FP8 weight (264 MB) must take >= 264 MB / ceiling.
  const double us = *profile->LookupUs("gemm_fp8", {{"k", 7168}, {"n", 36864}}, 1);
  EXPECT_GT(us, 36864.0 * 7168 / (p.ceilings().copy_gbps() * 1e3) * 0.9);
}

}  // namespace
}  // namespace servesim::calibration
