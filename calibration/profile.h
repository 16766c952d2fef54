// A loaded calibration profile: measured kernel tables indexed for cheap
// log-log interpolation by the cost model (see docs/profile-tables.md).
#ifndef SERVESIM_CALIBRATION_PROFILE_H_
#define SERVESIM_CALIBRATION_PROFILE_H_

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "calibration/profile.pb.h"

namespace servesim::calibration {

// Fixed dimensions of a table, sorted by name (same shape as models::Op::key).
using KeyDims = std::vector<std::pair<std::string, int64_t>>;

// One table's points, prepared for interpolation. Times in microseconds.
class Curve {
 public:
  // `x` strictly ascending and > 0, `us` > 0, same size >= 1 (checked by Profile).
  Curve(std::vector<double> x, std::vector<double> us);

  // Time at `x`: exact at the sample points; log-log linear between them (so
  // monotone between monotone points); below the first point the first
  // point's time (launch-bound floor); above the last point linear in x with
  // the per-unit cost of the last segment (or last time / last x when that
  // segment does not rise, or there is only one point).
  double Us(double x) const;
  // The first sample point's x.
  double first_x() const { return x_.front(); }
  // The sample point's x with the most work per microsecond (x / us); the
  // first of equals.
  double FastestX() const;

 private:
  std::vector<double> x_;
  std::vector<double> log_x_;
  std::vector<double> us_;
  std::vector<double> log_us_;
  std::vector<double> log_slope_;  // per segment: d log(us) / d log(x).
  double tail_us_per_x_ = 0;       // extrapolation slope above the last point.
};

// Which GPU a profile may come from. Everything servesim prices beside the
// tables (roofline rates, the memory engines see, their defaults) is an
// H200's, so a prediction takes an H200's profile only. kAnyGpu is for the
// same-card iteration check (explain --gpu-only-json --any-gpu-profile),
// which sums one card's kernel tables to compare with whole iterations timed
// on that card.
enum class ProfileGpu { kH200Only, kAnyGpu };

class Profile {
 public:
  static constexpr int kSchemaVersion = 1;

  // Reads `path`: ".textproto" / ".txtpb" as text format, ".pb" as binary.
  // Validates schema version, the device block (an H200 by name unless
  // `gpu` is kAnyGpu; measured_at, memory, SM and GPU counts, no negative
  // figure), positive finite ceilings, each table against the contract
  // (table_contract.h: its kind, key names and values, x_name), key order,
  // ascending positive x, positive finite times and finite achieved rates
  // >= 0; errors are one line naming the file and problem.
  static absl::StatusOr<Profile> Load(const std::string& path,
                                      ProfileGpu gpu = ProfileGpu::kH200Only);

  // Validates `proto` as Load does; `origin` names it in errors.
  static absl::StatusOr<Profile> FromProto(ProfileProto proto, std::string_view origin,
                                           ProfileGpu gpu = ProfileGpu::kH200Only);

  // Writes the profile; format chosen by extension as in Load.
  absl::Status Save(const std::string& path) const;

  const ProfileProto& proto() const { return proto_; }

  // The table for (kind, key), or nullptr. `key` sorted by name. The pointer
  // lives as long as this Profile; callers on hot paths resolve it once.
  const Curve* FindCurve(std::string_view kind, const KeyDims& key) const;

  // Interpolated time in microseconds, or nullopt when no such table exists.
  std::optional<double> LookupUs(std::string_view kind, const KeyDims& key, double x) const;

  bool HasTable(std::string_view kind, const KeyDims& key) const {
    return FindCurve(kind, key) != nullptr;
  }

  // Keys of every table of `kind`, in ascending key order.
  std::vector<KeyDims> KeysFor(std::string_view kind) const;

 private:
  struct Entry {
    KeyDims key;
    Curve curve;
  };
  explicit Profile(ProfileProto proto) : proto_(std::move(proto)) {}

  ProfileProto proto_;
  // kind -> entries sorted by key; std::less<> allows string_view lookup
  // without allocating a std::string.
  std::map<std::string, std::vector<Entry>, std::less<>> index_;
};

}  // namespace servesim::calibration

#endif  // SERVESIM_CALIBRATION_PROFILE_H_
