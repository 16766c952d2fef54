#include "calibration/profile_text_writer.h"

#include <algorithm>
#include <cinttypes>
#include <cstdio>

namespace servesim::calibration {
namespace {

// %.9g keeps every digit a median in microseconds can honestly carry and
// parses back as the same double to that precision.
std::string Num(double v) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.9g", v);
  return buf;
}

std::string Int(int64_t v) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%" PRId64, v);
  return buf;
}

}  // namespace

std::string QuoteTextString(const std::string& s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    if (c == '"') {
      out += "\\\"";
    } else if (c == '\\') {
      out += "\\\\";
    } else if (c == '\n') {
      out += "\\n";
    } else if (c < 0x20 || c >= 0x7f) {
      char buf[8];
      std::snprintf(buf, sizeof(buf), "\\%03o", c);
      out += buf;
    } else {
      out += static_cast<char>(c);
    }
  }
  out += "\"";
  return out;
}

std::string ProfileToText(const ProfileRecord& p) {
  std::string o;
  o += "schema_version: " + Int(p.schema_version) + "\n";
  const DeviceRecord& d = p.device;
  o += "device {\n";
  o += "  name: " + QuoteTextString(d.name) + "\n";
  o += "  sm_count: " + Int(d.sm_count) + "\n";
  o += "  sm_clock_mhz: " + Int(d.sm_clock_mhz) + "\n";
  o += "  memory_bytes: " + Int(d.memory_bytes) + "\n";
  o += "  driver: " + QuoteTextString(d.driver) + "\n";
  o += "  cuda_runtime: " + QuoteTextString(d.cuda_runtime) + "\n";
  o += "  cublas: " + QuoteTextString(d.cublas) + "\n";
  o += "  nccl: " + QuoteTextString(d.nccl) + "\n";
  o += "  measured_at: " + QuoteTextString(d.measured_at) + "\n";
  o += "  command_line: " + QuoteTextString(d.command_line) + "\n";
  o += "  gpu_count: " + Int(d.gpu_count) + "\n";
  o += "  l2_bytes: " + Int(d.l2_bytes) + "\n";
  o += "  memory_clock_mhz: " + Int(d.memory_clock_mhz) + "\n";
  o += "}\n";
  o += "ceilings {\n";
  o += "  copy_gbps: " + Num(p.copy_gbps) + "\n";
  o += "  bf16_gemm_tflops: " + Num(p.bf16_gemm_tflops) + "\n";
  o += "  fp8_gemm_tflops: " + Num(p.fp8_gemm_tflops) + "\n";
  o += "}\n";
  for (const TableRecord& t : p.tables) {
    auto key = t.key;
    std::sort(key.begin(), key.end());
    auto points = t.points;
    std::stable_sort(points.begin(), points.end(),
                     [](const PointRecord& a, const PointRecord& b) { return a.x < b.x; });
    points.erase(std::unique(points.begin(), points.end(),
                             [](const PointRecord& a, const PointRecord& b) { return a.x == b.x; }),
                 points.end());
    o += "tables {\n";
    o += "  kind: " + QuoteTextString(t.kind) + "\n";
    for (const auto& [name, value] : key) {
      o += "  key { name: " + QuoteTextString(name) + " value: " + Int(value) + " }\n";
    }
    o += "  x_name: " + QuoteTextString(t.x_name) + "\n";
    for (const PointRecord& pt : points) {
      o += "  points { x: " + Num(pt.x) + " median_us: " + Num(pt.median_us) + " p10_us: " + Num(pt.p10_us) +
           " p90_us: " + Num(pt.p90_us) + " samples: " + Int(pt.samples) +
           " achieved_tflops: " + Num(pt.achieved_tflops) + " achieved_gbps: " + Num(pt.achieved_gbps) + " }\n";
    }
    if (!t.note.empty()) o += "  note: " + QuoteTextString(t.note) + "\n";
    o += "}\n";
  }
  return o;
}

}  // namespace servesim::calibration
