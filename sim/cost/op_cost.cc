#include "sim/cost/op_cost.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace servesim::cost {
namespace {

// Bytes each GPU puts on the wire per unit of the op's x, under the op
// graph's convention (models/op_graph.h): all_reduce x is the whole buffer
// (ring: 2(n-1)/n of it), all_gather x is this GPU's input shard and
// reduce_scatter x its output shard (n-1 shards cross the wire), all_to_all x
// is the bytes sent to other GPUs.
double WireBytesPerX(const std::string& kind, int gpus) {
  const double n = gpus;
  if (kind == "all_reduce") return 2 * (n - 1) / n;
  if (kind == "all_gather" || kind == "reduce_scatter") return n - 1;
  return 1;
}

// Memory-bound passes without a table of their own (models/op_graph.cc,
// StreamingPass): a device copy of the same traffic.
bool IsStreamingStandIn(const std::string& kind) {
  return kind == "kv_cache_quantize" || kind == "act_quant_fp8" || kind == "moe_topk_reduce" ||
         kind == "indexer_logits_clean";
}

// The profile table that prices an op kind. An op with no kernel of its own
// in the profile is priced by a measured stand-in at equal work: SGLang's
// whole-cache KV quantization is one elementwise pass over memory, which
// costs at least what a device copy moving the same bytes costs (its op x is
// that copy's size); the engine's own speed relative to it is a fitted
// backend factor (docs/fitting.md).
const std::string& TableKind(const std::string& kind) {
  static const std::string kCopy = "copy_d2d";
  return IsStreamingStandIn(kind) ? kCopy : kind;
}

bool IsGroupedGemm(const std::string& kind) {
  return kind == "grouped_gemm_fp8" || kind == "grouped_gemm_bf16";
}

constexpr char kTopk[] = "topk";
constexpr char kTopkRow[] = "topk_row";

}  // namespace

bool IsCollective(const std::string& kind) {
  return kind == "all_reduce" || kind == "all_gather" || kind == "reduce_scatter" ||
         kind == "all_to_all";
}

std::string DescribeOpKey(const models::Op& op) {
  std::vector<std::string> parts;
  for (const auto& [name, value] : op.key) parts.push_back(absl::StrCat(name, "=", value));
  return absl::StrCat(op.kind, "{", absl::StrJoin(parts, ","), "}");
}

double RooflineOpCost::NvlinkCollectiveUs(const models::Op& op) {
  if (!IsCollective(op.kind) || op.comm_group_gpus <= 1) return 0;
  const double wire_bytes = op.x * WireBytesPerX(op.kind, op.comm_group_gpus);
  return rates_.collective_latency_us + wire_bytes / (rates_.nccl_bus_gbps * 1e3);
}

double RooflineOpCost::OpUs(const models::Op& op) {
  if (IsCollective(op.kind)) {
    if (op.comm_group_gpus <= 1) return 0;
    // A ring over a group that spans nodes crosses InfiniBand at every step
    // (one NIC per GPU carries one ring), so its per-GPU traffic moves at
    // InfiniBand's rate; inside a node, at NVLink's.
    if (SpansNodes(op, rates_)) {
      const double wire_bytes = op.x * WireBytesPerX(op.kind, op.comm_group_gpus);
      return rates_.internode_latency_us + wire_bytes / (rates_.internode_bus_gbps * 1e3);
    }
    return NvlinkCollectiveUs(op);
  }
  const double tflops = op.fp8_math ? rates_.fp8_tflops : rates_.bf16_tflops;
  const double compute_us = op.flops / (tflops * 1e6);
  const double memory_us = op.hbm_bytes / (rates_.hbm_gbps * 1e3);
  return std::max({compute_us, memory_us, rates_.kernel_floor_us});
}

const ProfileOpCost::Resolved& ProfileOpCost::Resolve(const models::Op& op) {
  auto [it, inserted] = resolved_.try_emplace(std::make_pair(op.kind, op.key), Resolved{});
  if (inserted) {
    it->second.curve = profile_.FindCurve(TableKind(op.kind), op.key);
    if (it->second.curve == nullptr) fallbacks_.insert(DescribeOpKey(op));
    if (IsGroupedGemm(op.kind)) {
      for (const auto& [name, value] : op.key) {
        if (name == "experts") it->second.grouped_experts = static_cast<double>(value);
      }
    }
    if (it->second.curve != nullptr && IsStreamingStandIn(op.kind)) {
      it->second.linear_past_x = it->second.curve->FastestX();
    }
    if (op.kind == kTopk) {
      it->second.row_floor = profile_.FindCurve(kTopkRow, op.key);
      if (it->second.row_floor == nullptr) {
        models::Op row = op;
        row.kind = kTopkRow;
        fallbacks_.insert(DescribeOpKey(row));
      }
    }
    for (const auto& [kind, scale] : kind_scales_) {
      if (kind == op.kind) it->second.scale = scale;
    }
  }
  return it->second;
}

namespace {

// The expert GEMMs' tables were measured with uniform routing: x pairs on
// min(x, experts) experts (calibration/cuda/gemm_bench.cu), from x = 8. A
// batch's pairs touch fewer experts at random (models::ExpectedExpertsTouched),
// and the weights of the experts touched are most of a small batch's time:
// the table's time is scaled by experts touched at random over experts the
// table's point touched. Below the table's first point that point is scaled
// the same way (an EP rank's one or two pairs had been priced as its eight).
double GroupedGemmUs(const models::Op& op, const calibration::Curve& curve, double experts) {
  const double x = std::max(op.x, curve.first_x());
  if (experts <= 0) return curve.Us(x);
  return curve.Us(x) * models::ExpectedExpertsTouched(std::max(op.x, op.routed_pairs), experts) /
         std::min(x, experts);
}

}  // namespace

double ProfileOpCost::TimeUs(const models::Op& op, const Resolved& r) {
  if (op.x <= 0) return 0;  // no work of this kind in the batch
  if (r.curve == nullptr) return roofline_.OpUs(op);
  if (IsCollective(op.kind) && op.comm_group_gpus <= 1) return 0;
  double us = r.linear_past_x > 0 && op.x > r.linear_past_x
                  ? r.curve->Us(r.linear_past_x) * op.x / r.linear_past_x
                  : r.curve->Us(op.x);
  if (r.grouped_experts > 0) us = GroupedGemmUs(op, *r.curve, r.grouped_experts);
  if (op.longest_row > 0 && op.kind == kTopk) {
    // One block selects a row: the op lasts at least as long as its longest
    // row alone, which a table keyed by the keys' sum cannot say. Without
    // the one-row table, one read of that row's FP32 scores.
    constexpr double kScoreBytes = 4;
    us = std::max(us, r.row_floor != nullptr
                          ? r.row_floor->Us(op.longest_row)
                          : std::max(op.longest_row * kScoreBytes / (rates_.hbm_gbps * 1e3),
                                     rates_.kernel_floor_us));
  }
  if (r.scale == 1.0) return us;
  // A production kernel's published rate is a compute rate; the bytes it
  // reads still move no faster than the measured copy ceiling (a decode
  // row reuses none of its keys: at long contexts FlashMLA's sparse kernel
  // is memory-bound, which a TFLOP/s figure alone would price below HBM).
  return std::max({us * r.scale, op.hbm_bytes / (copy_gbps_ * 1e3), rates_.kernel_floor_us});
}

double ProfileOpCost::OpUs(const models::Op& op) { return TimeUs(op, Resolve(op)); }

double ProfileOpCost::OpUsAt(const models::Op& op, size_t slot) {
  if (slot >= slots_.size()) slots_.resize(slot + 1);
  Slot& s = slots_[slot];
  if (s.kind != op.kind || s.key != op.key) {
    s.kind = op.kind;
    s.key = op.key;
    s.resolved = Resolve(op);
  }
  return TimeUs(op, s.resolved);
}

}  // namespace servesim::cost
