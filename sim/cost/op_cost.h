// Time of one op (kernel or collective) on one GPU, in microseconds: from the
// roofline of the hardware's rates, or from the measured calibration profile
// with the roofline as the fallback for ops the profile lacks.
#ifndef SERVESIM_SIM_COST_OP_COST_H_
#define SERVESIM_SIM_COST_OP_COST_H_

#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"

#include "calibration/profile.h"
#include "models/op.h"

namespace servesim::cost {

// Rates of one GPU and its interconnect. Defaults: NVIDIA H200 SXM datasheet
// and published NCCL figures (shared/reference/model-and-kernels.md §2, §3).
struct GpuRates {
  double fp8_tflops = 1979;   // dense FP8 tensor
  double bf16_tflops = 989;   // dense BF16 tensor
  double hbm_gbps = 4800;     // HBM3e
  // NCCL bus bandwidth without NVLS (ring, NVSwitch): ~370 GB/s on 8 x H100
  // (nccl-tests#212, NCCL maintainer); the H200 has the same NVLink 4.
  double nccl_bus_gbps = 370;
  // NVLink 4 per GPU and direction (18 links x 25 GB/s): no all-gather or
  // reduce-scatter receives or sends its shards faster (model-and-kernels.md §2).
  double nvlink_gbps = 450;
  // Per-collective latency. Small-message latency on 8 x H200 was not found
  // [U]; 10 us is the order of NCCL's LL protocol and vLLM's custom
  // all-reduce for the 14 KB-per-token decode messages.
  double collective_latency_us = 10;
  // GPUs joined by NVLink (an HGX H200 node). A collective over a larger group
  // crosses nodes: its bus bandwidth and latency are InfiniBand's.
  int gpus_per_node = 8;
  // One 400 Gb/s ConnectX-7 NIC per GPU = 50 GB/s; DeepEP measures 43-58 GB/s
  // of RDMA per GPU between H800 nodes (model-and-kernels.md §3, K5). 45 GB/s
  // is taken as achievable [U].
  double internode_bus_gbps = 45;
  // Per-collective latency across nodes: NCCL's inter-node rings pay an RDMA
  // round trip per step; ~20 us is the order of small inter-node all-reduces [U].
  double internode_latency_us = 20;
  // Floor of any kernel: launch-to-completion of an empty kernel inside a
  // CUDA graph is a few microseconds on Hopper.
  double kernel_floor_us = 3;
};

// The collective op kinds (NCCL's): all_reduce, all_gather, reduce_scatter,
// all_to_all.
bool IsCollective(const std::string& kind);

// A collective whose GPUs sit on more than one node (the op graph says so
// from the layout; a group larger than a node always does): it crosses
// InfiniBand.
inline bool SpansNodes(const models::Op& op, const GpuRates& rates = GpuRates{}) {
  return op.comm_spans_nodes || op.comm_group_gpus > rates.gpus_per_node;
}

class OpCost {
 public:
  virtual ~OpCost() = default;
  virtual double OpUs(const models::Op& op) = 0;
  // Same, for the op at position `slot` of an op list whose shape repeats
  // from step to step; implementations may cache by slot.
  virtual double OpUsAt(const models::Op& op, size_t /*slot*/) { return OpUs(op); }
  // A collective as if its whole group shared one NVLink domain: what the
  // same collective across nodes cannot beat. 0 where the model has none.
  virtual double NvlinkCollectiveUs(const models::Op& /*op*/) { return 0; }
};

class RooflineOpCost : public OpCost {
 public:
  explicit RooflineOpCost(const GpuRates& rates) : rates_(rates) {}
  double OpUs(const models::Op& op) override;
  double NvlinkCollectiveUs(const models::Op& op) override;

 private:
  GpuRates rates_;
};

// Looks each op's (kind, key) up in the profile and interpolates at x; ops the
// profile lacks fall back to the roofline and are remembered for the header.
class ProfileOpCost : public OpCost {
 public:
  // `kind_scales`: production-kernel factors (production_kernels.h), applied
  // to the measured time of ops of those kinds, floored at a kernel's floor
  // and at the op's bytes moved at the profile's copy ceiling.
  ProfileOpCost(const calibration::Profile& profile, const GpuRates& rates,
                std::vector<std::pair<std::string, double>> kind_scales = {})
      : profile_(profile),
        roofline_(rates),
        rates_(rates),
        kind_scales_(std::move(kind_scales)),
        copy_gbps_(profile.proto().ceilings().copy_gbps() > 0
                       ? profile.proto().ceilings().copy_gbps()
                       : rates.hbm_gbps) {}
  double OpUs(const models::Op& op) override;
  double OpUsAt(const models::Op& op, size_t slot) override;
  // The roofline's: no profile measures a collective across nodes' GPUs.
  double NvlinkCollectiveUs(const models::Op& op) override {
    return roofline_.NvlinkCollectiveUs(op);
  }

  // "kind{key=...}" of every op that fell back, sorted.
  const std::set<std::string>& fallbacks() const { return fallbacks_; }

 private:
  const calibration::Profile& profile_;
  RooflineOpCost roofline_;
  GpuRates rates_;
  std::vector<std::pair<std::string, double>> kind_scales_;
  double copy_gbps_;  // the profile's measured copy ceiling (the datasheet's HBM without one)
  std::set<std::string> fallbacks_;
  struct Resolved {
    const calibration::Curve* curve = nullptr;
    double scale = 1.0;
    // topk: the one-row table (topk_row) that floors the op at its longest
    // row's time; nullptr when the profile lacks it (the row's roofline then).
    const calibration::Curve* row_floor = nullptr;
    // Expert GEMMs: the local experts of the table's key (0 for other ops),
    // resolved once so the step's hot path compares no strings.
    double grouped_experts = 0;
    // Streaming stand-ins: the copy size that moved bytes fastest. A larger
    // pass moves at that rate: the slower copies past it (1 GB on the H200
    // profile) are cudaMemcpyAsync's own, which an SM copy kernel does not
    // share (docs/calibration.md, "Ceilings measured"). 0 for other ops.
    double linear_past_x = 0;
  };
  const Resolved& Resolve(const models::Op& op);
  double TimeUs(const models::Op& op, const Resolved& r);
  // The (kind, key) last seen at each slot and its resolution: a step's op
  // list has the same shape as the last step's, so most lookups hit here.
  struct Slot {
    std::string kind;
    std::vector<models::OpKeyDim> key;
    Resolved resolved;
  };
  std::vector<Slot> slots_;
  // (kind, key) -> curve or nullptr, so each distinct op is resolved once.
  absl::flat_hash_map<std::pair<std::string, std::vector<models::OpKeyDim>>,
                      Resolved>
      resolved_;
};

std::string DescribeOpKey(const models::Op& op);

}  // namespace servesim::cost

#endif  // SERVESIM_SIM_COST_OP_COST_H_
