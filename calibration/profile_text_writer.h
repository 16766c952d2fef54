// Writes a calibration profile in protobuf text format without linking
// protobuf, so the CUDA program needs only CUDA on the GPU machine.
// The output parses as calibration/profile.proto's ProfileProto (tested).
#ifndef SERVESIM_CALIBRATION_PROFILE_TEXT_WRITER_H_
#define SERVESIM_CALIBRATION_PROFILE_TEXT_WRITER_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace servesim::calibration {

struct PointRecord {
  double x = 0;                // swept dimension, > 0.
  double median_us = 0;        // median of the samples, microseconds.
  double p10_us = 0;           // 10th percentile, microseconds.
  double p90_us = 0;           // 90th percentile, microseconds.
  int samples = 0;             // timed samples.
  double achieved_tflops = 0;  // useful TFLOP/s at the median (0: not meaningful).
  double achieved_gbps = 0;    // minimum-bytes GB/s at the median (0: not meaningful).
};

struct TableRecord {
  std::string kind;                                  // op kind (docs/profile-tables.md).
  std::vector<std::pair<std::string, int64_t>> key;  // fixed dims; the writer sorts them by name.
  std::string x_name;                                // unit of x.
  std::vector<PointRecord> points;                   // the writer sorts them by x.
  std::string note;                                  // method note.
};

struct DeviceRecord {
  std::string name;
  int sm_count = 0;
  int sm_clock_mhz = 0;
  int64_t memory_bytes = 0;
  std::string driver;
  std::string cuda_runtime;
  std::string cublas;
  std::string nccl;
  std::string measured_at;
  std::string command_line;
  int gpu_count = 0;
  int64_t l2_bytes = 0;
  int memory_clock_mhz = 0;
};

struct ProfileRecord {
  int schema_version = 1;
  DeviceRecord device;
  double copy_gbps = 0;
  double bf16_gemm_tflops = 0;
  double fp8_gemm_tflops = 0;
  std::vector<TableRecord> tables;
};

// Text-format rendering of `profile`: keys sorted by name, points sorted by x
// with repeated x dropped (first kept), tables in the given order.
std::string ProfileToText(const ProfileRecord& profile);

// Quotes `s` as a text-format string literal (escapes quotes, backslashes and
// non-printable bytes).
std::string QuoteTextString(const std::string& s);

}  // namespace servesim::calibration

#endif  // SERVESIM_CALIBRATION_PROFILE_TEXT_WRITER_H_
