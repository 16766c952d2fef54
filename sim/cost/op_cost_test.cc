#include "sim/cost/op_cost.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "calibration/table_contract.h"

namespace servesim::cost {
namespace {

models::Op Gemm(double m, double n, double k) {
  models::Op op;
  op.kind = "gemm_fp8";
  op.key = {{"k", static_cast<int64_t>(k)}, {"n", static_cast<int64_t>(n)}};
  op.x = m;
  op.flops = 2 * m * n * k;
  op.hbm_bytes = n * k + 2 * m * (n + k);
  op.fp8_math = true;
  return op;
}

TEST(RooflineOpCostTest, LargeGemmIsComputeBound) {
  RooflineOpCost roofline{GpuRates{}};
  // 2 * 1024 * 7168 * 2048 FLOP at 1979 TFLOP/s = 15.19 us.
  EXPECT_NEAR(roofline.OpUs(Gemm(1024, 7168, 2048)), 15.19, 0.01);
}

TEST(RooflineOpCostTest, SingleTokenGemmIsBoundByReadingTheWeights) {
  RooflineOpCost roofline{GpuRates{}};
  // 7168 x 2048 FP8 weights = 14.68 MB at 4.8 TB/s = 3.06 us.
  EXPECT_NEAR(roofline.OpUs(Gemm(1, 7168, 2048)), 3.06, 0.01);
}

TEST(RooflineOpCostTest, AllReduceIsLatencyPlusBusBytes) {
  RooflineOpCost roofline{GpuRates{}};
  models::Op ar;
  ar.kind = "all_reduce";
  ar.key = {{"gpus", 8}};
  ar.comm_group_gpus = 8;
  ar.x = 1e8;  // 100 MB: 10 us + 1e8 * 2 * 7/8 B / 370 GB/s = 10 + 472.97 us
  EXPECT_NEAR(roofline.OpUs(ar), 482.97, 0.01);
  ar.comm_group_gpus = 1;
  EXPECT_EQ(roofline.OpUs(ar), 0);
}

TEST(RooflineOpCostTest, CollectiveSpanningNodesMovesAtInfinibandRate) {
  RooflineOpCost roofline{GpuRates{}};
  models::Op ar;
  ar.kind = "all_reduce";
  ar.key = {{"gpus", 16}};
  ar.comm_group_gpus = 16;
  ar.x = 1e8;  // 20 us + 1e8 * 2 * 15/16 B / 45 GB/s = 20 + 4166.67 us
  EXPECT_NEAR(roofline.OpUs(ar), 4186.67, 0.01);
}

// A profile table: `kind` with `key`, measured at (x, us) points.
struct TableSpec {
  std::string kind;
  std::vector<std::pair<std::string, int64_t>> key;
  std::vector<std::pair<double, double>> points;
};

calibration::Profile TablesProfile(const std::vector<TableSpec>& tables) {
  calibration::ProfileProto proto;
  proto.set_schema_version(calibration::Profile::kSchemaVersion);
  auto* d = proto.mutable_device();
  d->set_name("NVIDIA H200");
  d->set_measured_at("2026-01-01T00:00:00Z");
  d->set_memory_bytes(int64_t{141} << 30);
  d->set_sm_count(132);
  d->set_gpu_count(1);
  proto.mutable_ceilings()->set_copy_gbps(4000);
  proto.mutable_ceilings()->set_bf16_gemm_tflops(790);
  proto.mutable_ceilings()->set_fp8_gemm_tflops(1400);
  for (const TableSpec& spec : tables) {
    auto* t = proto.add_tables();
    t->set_kind(spec.kind);
    for (const auto& [name, v] : spec.key) {
      auto* d = t->add_key();
      d->set_name(name);
      d->set_value(v);
    }
    // What the table contract says the kind's x counts (the loader checks).
    const calibration::TableContract* contract = calibration::FindTableContract(spec.kind);
    if (contract != nullptr) t->set_x_name(std::string(contract->x_name));
    for (auto [x, us] : spec.points) {
      auto* p = t->add_points();
      p->set_x(x);
      p->set_median_us(us);
      p->set_p10_us(us);
      p->set_p90_us(us);
      p->set_samples(20);
    }
  }
  auto profile = calibration::Profile::FromProto(proto, "test");
  EXPECT_TRUE(profile.ok()) << profile.status();
  return *std::move(profile);
}

calibration::Profile OneTableProfile(const std::string& kind,
                                     std::vector<std::pair<std::string, int64_t>> key,
                                     std::vector<std::pair<double, double>> points) {
  return TablesProfile({{kind, std::move(key), std::move(points)}});
}

calibration::Profile OneTableProfile() {
  return OneTableProfile("gemm_fp8", {{"k", 2048}, {"n", 7168}}, {{1.0, 8.0}, {1024.0, 30.0}});
}

TEST(ProfileOpCostTest, UsesTheMeasuredTableAtItsSamplePoints) {
  calibration::Profile profile = OneTableProfile();
  ProfileOpCost cost(profile, GpuRates{});
  EXPECT_DOUBLE_EQ(cost.OpUs(Gemm(1024, 7168, 2048)), 30.0);
  EXPECT_TRUE(cost.fallbacks().empty());
}

TEST(ProfileOpCostTest, FallsBackToTheRooflineAndSaysSo) {
  calibration::Profile profile = OneTableProfile();
  ProfileOpCost cost(profile, GpuRates{});
  RooflineOpCost roofline{GpuRates{}};
  const models::Op other = Gemm(1024, 4096, 7168);
  EXPECT_DOUBLE_EQ(cost.OpUs(other), roofline.OpUs(other));
  ASSERT_EQ(cost.fallbacks().size(), 1u);
  EXPECT_EQ(*cost.fallbacks().begin(), "gemm_fp8{k=7168,n=4096}");
}

// SGLang's whole-cache KV quantization has no table of its own: the copy_d2d
// table prices it at its x (half its traffic), with no roofline fallback.
TEST(ProfileOpCostTest, KvCacheQuantizeIsPricedAsADeviceCopy) {
  calibration::Profile profile = OneTableProfile("copy_d2d", {}, {{1e6, 2.0}, {1e9, 500.0}});
  ProfileOpCost cost(profile, GpuRates{});
  models::Op quantize;
  quantize.kind = "kv_cache_quantize";
  quantize.x = 1e9;
  quantize.hbm_bytes = 2e9;
  EXPECT_DOUBLE_EQ(cost.OpUs(quantize), 500.0);
  EXPECT_TRUE(cost.fallbacks().empty());
}

// The H200 profile's 1 GB copy is slower per byte than its 256 MB one, a
// property of cudaMemcpyAsync that an SM copy kernel does not share (H100
// check, docs/calibration.md): a streaming pass past the fastest copy keeps
// that copy's rate, while a copy itself keeps the table.
TEST(ProfileOpCostTest, AStreamingPassPastTheFastestCopyKeepsItsRate) {
  calibration::Profile profile =
      OneTableProfile("copy_d2d", {}, {{1e6, 2.0}, {2.5e8, 125.0}, {1e9, 800.0}});
  ProfileOpCost cost(profile, GpuRates{});
  models::Op clean;
  clean.kind = "indexer_logits_clean";
  clean.x = 1e9;
  clean.hbm_bytes = 2e9;
  EXPECT_DOUBLE_EQ(cost.OpUs(clean), 500.0);  // 125 us x 4
  clean.x = 1e8;                              // below the fastest point: the table
  EXPECT_NEAR(cost.OpUs(clean),
              125.0 * std::exp(std::log(0.4) * std::log(125.0 / 2.0) / std::log(250.0)), 1e-9);
  models::Op copy;
  copy.kind = "copy_d2d";
  copy.x = 1e9;
  EXPECT_DOUBLE_EQ(cost.OpUs(copy), 800.0);
}

// A production factor prices a kernel at its published compute rate; the
// keys it reads still take their bytes at the copy ceiling (found by an
// audit: vLLM TP8's long-context decode attention came out faster than HBM).
TEST(ProfileOpCostTest, AProductionFactorIsFlooredAtTheBytesOverTheCopyCeiling) {
  calibration::Profile profile =
      OneTableProfile("sparse_mla_prefill", {{"heads", 64}}, {{1e3, 10.0}, {1e7, 10000.0}});
  ProfileOpCost cost(profile, GpuRates{}, {{"sparse_mla_prefill", 0.1}});
  models::Op attn;
  attn.kind = "sparse_mla_prefill";
  attn.key = {{"heads", 64}};
  attn.x = 1e7;
  attn.hbm_bytes = 1e6;  // 0.25 us at 4000 GB/s: the factor decides
  EXPECT_DOUBLE_EQ(cost.OpUs(attn), 1000.0);
  attn.hbm_bytes = 8e9;  // 2000 us at the profile's 4000 GB/s, above 10000 us x 0.1
  EXPECT_DOUBLE_EQ(cost.OpUs(attn), 2000.0);
}

models::Op ExpertsGateUp(double pairs) {
  models::Op op;
  op.kind = "grouped_gemm_fp8";
  op.key = {{"experts", 32}, {"k", 7168}, {"n", 4096}};
  op.x = pairs;
  return op;
}

// The grouped tables were measured with uniform routing (x pairs on min(x,
// experts) experts, from x = 8); random routing touches
// experts * (1 - e^(-x / experts)) of them, and the weights read scale with
// that. Found by an audit: an EP8 rank with one pair was priced as eight.
TEST(ProfileOpCostTest, ExpertGemmsScaleWithTheExpertsRandomRoutingTouches) {
  calibration::Profile profile = OneTableProfile(
      "grouped_gemm_fp8", {{"experts", 32}, {"k", 7168}, {"n", 4096}},
      {{8, 58.0}, {4096, 235.0}});
  ProfileOpCost cost(profile, GpuRates{});
  // One pair: one expert's weights, 1/8 of the first point's eight (32 x
  // (1 - e^(-1/32)) = 0.9846 experts expected).
  EXPECT_NEAR(cost.OpUs(ExpertsGateUp(1)), 58.0 * 0.98459 / 8, 0.01);
  // Eight pairs touch 32 x (1 - e^(-1/4)) = 7.08 experts, not 8.
  EXPECT_NEAR(cost.OpUs(ExpertsGateUp(8)), 58.0 * 7.0784 / 8, 0.01);
  // Many pairs per expert: every expert is touched, the table as measured.
  EXPECT_NEAR(cost.OpUs(ExpertsGateUp(4096)), 235.0, 1e-6);
  // Eight pairs routed as 4096 are (a step's baseline reads the experts the
  // whole step reads): all 32 experts' weights, 4x the first point's eight.
  models::Op baseline = ExpertsGateUp(8);
  baseline.routed_pairs = 4096;
  EXPECT_NEAR(cost.OpUs(baseline), 58.0 * 32 * -std::expm1(-4096.0 / 32) / 8, 0.01);
  EXPECT_TRUE(cost.fallbacks().empty());
}

models::Op Topk(double sum_keys, double longest_row) {
  models::Op op;
  op.kind = "topk";
  op.key = {{"k", 2048}};
  op.x = sum_keys;
  op.longest_row = longest_row;
  op.hbm_bytes = 4 * sum_keys;
  return op;
}

// The topk table is keyed by the sum of scored keys, and its points mix one
// long row (65536 keys, 56 us) with many short ones (8 x 16384, 32 us), as
// the H200 profile's do: without the one-row floor, one row of 131072 keys
// interpolated to 32 us, faster than a row half as long.
TEST(ProfileOpCostTest, TopkLastsAtLeastItsLongestRowAlone) {
  const std::vector<std::pair<std::string, int64_t>> k = {{"k", 2048}};
  calibration::Profile profile =
      TablesProfile({{"topk", k, {{65536, 56.0}, {131072, 32.0}, {2097152, 29.0}}},
                     {"topk_row", k, {{4096, 21.0}, {65536, 56.0}, {131072, 90.0}}}});
  ProfileOpCost cost(profile, GpuRates{});
  EXPECT_DOUBLE_EQ(cost.OpUs(Topk(131072, 131072)), 90.0);  // the row, not the sum's 32
  EXPECT_DOUBLE_EQ(cost.OpUs(Topk(65536, 65536)), 56.0);
  EXPECT_GT(cost.OpUs(Topk(131072, 131072)), cost.OpUs(Topk(65536, 65536)));
  // 512 rows of 4096: the sum's table, above the one-row time.
  EXPECT_DOUBLE_EQ(cost.OpUs(Topk(2097152, 4096)), 29.0);
  EXPECT_TRUE(cost.fallbacks().empty());
}

TEST(ProfileOpCostTest, TopkWithoutTheOneRowTableSaysSo) {
  calibration::Profile profile =
      OneTableProfile("topk", {{"k", 2048}}, {{65536, 56.0}, {131072, 32.0}});
  ProfileOpCost cost(profile, GpuRates{});
  EXPECT_DOUBLE_EQ(cost.OpUs(Topk(131072, 131072)), 32.0);  // the row's read is far less
  ASSERT_EQ(cost.fallbacks().size(), 1u);
  EXPECT_EQ(*cost.fallbacks().begin(), "topk_row{k=2048}");
}

}  // namespace
}  // namespace servesim::cost
