#include "calibration/profile.h"

#include <algorithm>
#include <cmath>
#include <fstream>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "base/decimal.h"
#include "base/read_file.h"
#include "base/status_macros.h"
#include "base/text_proto.h"
#include "calibration/table_contract.h"
#include "google/protobuf/text_format.h"

namespace servesim::calibration {
namespace {

enum class Format { kText, kBinary };

absl::StatusOr<Format> FormatFor(const std::string& path) {
  if (absl::EndsWith(path, ".textproto") || absl::EndsWith(path, ".txtpb")) return Format::kText;
  if (absl::EndsWith(path, ".pb")) return Format::kBinary;
  return absl::InvalidArgumentError(
      absl::StrCat(path, ": unknown profile extension (want .textproto, .txtpb or .pb)"));
}

std::string Describe(const Table& t, int index) {
  std::string s = absl::StrCat("table ", index, " (", t.kind());
  for (const KeyDim& d : t.key()) absl::StrAppend(&s, " ", d.name(), "=", d.value());
  absl::StrAppend(&s, ")");
  return s;
}

bool PositiveFinite(double v) { return std::isfinite(v) && v > 0; }

// The device block: provenance every report prints, and plausible figures
// for a GPU (1 GiB to 1 TiB of memory), so that a truncated or hand-made
// header is refused rather than shown as "(, measured )".
absl::Status CheckDevice(const ProfileProto& p, const std::string& origin, ProfileGpu gpu) {
  if (!p.has_device()) return absl::InvalidArgumentError(absl::StrCat(origin, ": no device block"));
  const DeviceInfo& d = p.device();
  const std::string where = absl::StrCat(origin, ": device.");
  if (d.name().empty()) return absl::InvalidArgumentError(absl::StrCat(where, "name: empty"));
  // Everything but the tables is an H200's (the roofline rates, the memory
  // the engines see, their defaults): another GPU's tables would be priced
  // beside them as if measured on an H200.
  // "H200" as a word of its own: "NVIDIA GH200" is another machine.
  const size_t at = d.name().find("H200");
  if (gpu == ProfileGpu::kH200Only &&
      (at == std::string::npos || (at > 0 && absl::ascii_isalpha(d.name()[at - 1])))) {
    return absl::InvalidArgumentError(absl::StrCat(
        where, "name: '", d.name(), "' is not an H200 (servesim models the H200 only)"));
  }
  if (d.measured_at().empty()) {
    return absl::InvalidArgumentError(absl::StrCat(where, "measured_at: empty"));
  }
  constexpr int64_t kGiB = int64_t{1} << 30;
  if (d.memory_bytes() < kGiB || d.memory_bytes() > 1024 * kGiB) {
    return absl::InvalidArgumentError(absl::StrCat(
        where, "memory_bytes: must be in [1 GiB, 1 TiB], got ", d.memory_bytes()));
  }
  if (d.sm_count() < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat(where, "sm_count: must be >= 1, got ", d.sm_count()));
  }
  if (d.gpu_count() < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat(where, "gpu_count: must be >= 1, got ", d.gpu_count()));
  }
  // Provenance the driver reports; 0 where it was not recorded.
  const std::pair<const char*, int64_t> reported[] = {{"l2_bytes", d.l2_bytes()},
                                                      {"sm_clock_mhz", d.sm_clock_mhz()},
                                                      {"memory_clock_mhz", d.memory_clock_mhz()}};
  for (const auto& [name, value] : reported) {
    if (value < 0) {
      return absl::InvalidArgumentError(absl::StrCat(where, name, ": must be >= 0, got ", value));
    }
  }
  return absl::OkStatus();
}

// The times and sizes a measured point may have: no kernel or collective
// runs under 10 ns or over 10 s, and no table sweeps past 10^15 tokens,
// keys or bytes (a terabyte per op).
constexpr double kMinPointUs = 0.01;
constexpr double kMaxPointUs = 1e7;
constexpr double kMaxPointX = 1e15;

// The ceilings set production-kernel factors (sim/cost/production_kernels.cc):
// each must be a measured rate. The upper bound, a thousand times an H200's,
// keeps a factor derived from it from rounding a kernel's time to nothing.
absl::Status CheckCeilings(const ProfileProto& p, const std::string& origin) {
  if (!p.has_ceilings()) {
    return absl::InvalidArgumentError(absl::StrCat(origin, ": no ceilings block"));
  }
  constexpr double kMaxRate = 1e6;
  const std::pair<const char*, double> rates[] = {
      {"copy_gbps", p.ceilings().copy_gbps()},
      {"bf16_gemm_tflops", p.ceilings().bf16_gemm_tflops()},
      {"fp8_gemm_tflops", p.ceilings().fp8_gemm_tflops()}};
  for (const auto& [name, value] : rates) {
    if (!(PositiveFinite(value) && value <= kMaxRate)) {
      return absl::InvalidArgumentError(absl::StrCat(
          origin, ": ceilings.", name, ": must be in (0, 1e6], got ", FormatDecimal(value)));
    }
  }
  return absl::OkStatus();
}

// A table the op graph cannot ask for would never be read: the ops it was
// meant for would fall back to the roofline in silence. So its kind, key
// names and x name must be the contract's (table_contract.h), and a key's
// value a count >= 1 or a 0/1 flag. `where` names the table.
absl::Status CheckContract(const Table& t, const std::string& where) {
  const TableContract* contract = FindTableContract(t.kind());
  if (contract == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat(
        where, ": kind: '", t.kind(), "' is not a table kind of docs/profile-tables.md"));
  }
  const std::string kind(contract->kind);
  auto names = [&] {
    std::string s;
    for (const KeyDimContract& k : contract->key) {
      absl::StrAppend(&s, s.empty() ? "" : ", ", std::string(k.name));
    }
    return s.empty() ? std::string("no key") : s;
  };
  for (const KeyDim& d : t.key()) {
    const auto k = std::find_if(contract->key.begin(), contract->key.end(),
                                [&](const KeyDimContract& c) { return c.name == d.name(); });
    if (k == contract->key.end()) {
      return absl::InvalidArgumentError(absl::StrCat(where, ": key: '", d.name(),
                                                     "' is not a key of ", kind, " (", names(),
                                                     ")"));
    }
    if (k->flag ? (d.value() != 0 && d.value() != 1) : d.value() < 1) {
      return absl::InvalidArgumentError(absl::StrCat(where, ": key ", d.name(), ": must be ",
                                                     k->flag ? "0 or 1" : ">= 1", ", got ",
                                                     d.value()));
    }
  }
  // Names are sorted and distinct (checked before), so equal counts mean
  // equal sets.
  if (static_cast<size_t>(t.key_size()) != contract->key.size()) {
    return absl::InvalidArgumentError(
        absl::StrCat(where, ": key: ", kind, " is keyed by ", names(), ", got ", t.key_size(),
                     t.key_size() == 1 ? " dimension" : " dimensions"));
  }
  if (t.x_name() != contract->x_name) {
    return absl::InvalidArgumentError(absl::StrCat(where, ": x_name: '", t.x_name(), "', ", kind,
                                                   " counts ", std::string(contract->x_name)));
  }
  return absl::OkStatus();
}

// Lexicographic order over (name, value) pairs, shared by sort and search.
bool KeyLess(const KeyDims& a, const KeyDims& b) {
  return std::lexicographical_compare(a.begin(), a.end(), b.begin(), b.end());
}

}  // namespace

Curve::Curve(std::vector<double> x, std::vector<double> us) : x_(std::move(x)), us_(std::move(us)) {
  log_x_.reserve(x_.size());
  log_us_.reserve(us_.size());
  for (size_t i = 0; i < x_.size(); ++i) {
    log_x_.push_back(std::log(x_[i]));
    log_us_.push_back(std::log(us_[i]));
  }
  for (size_t i = 0; i + 1 < x_.size(); ++i) {
    log_slope_.push_back((log_us_[i + 1] - log_us_[i]) / (log_x_[i + 1] - log_x_[i]));
  }
  const size_t n = x_.size();
  // Past the last point the work grows linearly, so the time does too: use
  // the marginal cost of the last measured segment. A flat or falling last
  // segment (noise at the launch-bound end) would predict free work, so fall
  // back to the average cost per unit of the last point.
  double slope = 0;
  if (n >= 2) slope = (us_[n - 1] - us_[n - 2]) / (x_[n - 1] - x_[n - 2]);
  tail_us_per_x_ = slope > 0 ? slope : us_[n - 1] / x_[n - 1];
}

double Curve::Us(double x) const {
  // `!(x > x0)` also catches NaN: the floor is the safest answer.
  if (!(x > x_.front())) return us_.front();
  if (x >= x_.back()) return us_.back() + (x - x_.back()) * tail_us_per_x_;
  // First point with x_[i] > x; the segment is [i-1, i].
  const size_t i = static_cast<size_t>(std::upper_bound(x_.begin(), x_.end(), x) - x_.begin());
  if (x == x_[i - 1]) return us_[i - 1];
  return std::exp(log_us_[i - 1] + (std::log(x) - log_x_[i - 1]) * log_slope_[i - 1]);
}

double Curve::FastestX() const {
  size_t best = 0;
  for (size_t i = 1; i < x_.size(); ++i) {
    if (x_[i] / us_[i] > x_[best] / us_[best]) best = i;
  }
  return x_[best];
}

absl::StatusOr<Profile> Profile::Load(const std::string& path, ProfileGpu gpu) {
  ASSIGN_OR_RETURN(Format format, FormatFor(path));
  ASSIGN_OR_RETURN(std::string bytes, ReadFileToString(path));
  ProfileProto proto;
  if (format == Format::kText) {
    if (absl::Status parsed = ParseTextProto(bytes, &proto); !parsed.ok()) {
      return absl::InvalidArgumentError(absl::StrCat(path, ": text parse error: ", parsed.message()));
    }
  } else if (!proto.ParseFromString(bytes)) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": not a binary ProfileProto"));
  }
  return FromProto(std::move(proto), path, gpu);
}

absl::StatusOr<Profile> Profile::FromProto(ProfileProto proto, std::string_view origin_view,
                                           ProfileGpu gpu) {
  // Abseil 20220623 here is built without std::string_view interop in StrCat.
  const std::string origin(origin_view);
  if (proto.schema_version() != kSchemaVersion) {
    return absl::InvalidArgumentError(absl::StrCat(origin, ": schema_version ", proto.schema_version(),
                                                   ", this reader wants ", kSchemaVersion));
  }
  RETURN_IF_ERROR(CheckDevice(proto, origin, gpu));
  RETURN_IF_ERROR(CheckCeilings(proto, origin));
  Profile profile(std::move(proto));
  const ProfileProto& p = profile.proto_;
  for (int ti = 0; ti < p.tables_size(); ++ti) {
    const Table& t = p.tables(ti);
    const std::string where = absl::StrCat(origin, ": ", Describe(t, ti));
    if (t.kind().empty()) return absl::InvalidArgumentError(absl::StrCat(where, ": empty kind"));
    KeyDims key;
    for (int d = 0; d < t.key_size(); ++d) {
      if (t.key(d).name().empty()) {
        return absl::InvalidArgumentError(absl::StrCat(where, ": key dimension ", d, " has no name"));
      }
      if (d > 0 && !(t.key(d - 1).name() < t.key(d).name())) {
        return absl::InvalidArgumentError(absl::StrCat(where, ": key names not strictly sorted at '",
                                                       t.key(d).name(), "'"));
      }
      key.emplace_back(t.key(d).name(), t.key(d).value());
    }
    RETURN_IF_ERROR(CheckContract(t, where));
    if (t.points_size() == 0) return absl::InvalidArgumentError(absl::StrCat(where, ": no points"));
    std::vector<double> xs, us;
    for (int pi = 0; pi < t.points_size(); ++pi) {
      const Point& pt = t.points(pi);
      // x counts tokens, rows, keys or bytes; a kernel of 10 s is no
      // measurement. Past these the interpolation leaves doubles (a table
      // with x scaled by 1e-300 extrapolated to infinite steps).
      if (!PositiveFinite(pt.x()) || pt.x() < 1 || pt.x() > kMaxPointX) {
        return absl::InvalidArgumentError(absl::StrCat(where, ": point ", pi, ": x must be in [1, ",
                                                       kMaxPointX, "], got ",
                                                       FormatDecimal(pt.x())));
      }
      if (pt.median_us() > kMaxPointUs || pt.p90_us() > kMaxPointUs ||
          pt.p10_us() < kMinPointUs) {
        return absl::InvalidArgumentError(
            absl::StrCat(where, ": point ", pi, ": times must be in [", kMinPointUs, ", ",
                         kMaxPointUs, "] us, got ", FormatDecimal(pt.median_us()), " (p10 ",
                         FormatDecimal(pt.p10_us()), ", p90 ", FormatDecimal(pt.p90_us()), ")"));
      }
      if (pi > 0 && !(pt.x() > t.points(pi - 1).x())) {
        return absl::InvalidArgumentError(absl::StrCat(
            where, ": x not strictly ascending at point ", pi, " (", FormatDecimal(pt.x()),
            " after ", FormatDecimal(t.points(pi - 1).x()), ")"));
      }
      if (!PositiveFinite(pt.median_us())) {
        return absl::InvalidArgumentError(absl::StrCat(
            where, ": point ", pi, ": median_us must be > 0, got ", FormatDecimal(pt.median_us())));
      }
      const std::pair<const char*, double> rates[] = {{"achieved_tflops", pt.achieved_tflops()},
                                                      {"achieved_gbps", pt.achieved_gbps()}};
      for (const auto& [name, value] : rates) {
        if (!(std::isfinite(value) && value >= 0)) {
          return absl::InvalidArgumentError(absl::StrCat(where, ": point ", pi, ": ", name,
                                                         " must be a finite number >= 0, got ",
                                                         FormatDecimal(value)));
        }
      }
      if (pt.samples() < 1) {
        return absl::InvalidArgumentError(absl::StrCat(where, ": point ", pi, ": samples must be >= 1"));
      }
      if (!(pt.p10_us() > 0 && pt.p10_us() <= pt.median_us() && pt.median_us() <= pt.p90_us())) {
        return absl::InvalidArgumentError(
            absl::StrCat(where, ": point ", pi, ": want 0 < p10 <= median <= p90, got ",
                         FormatDecimal(pt.p10_us()), ", ", FormatDecimal(pt.median_us()), ", ",
                         FormatDecimal(pt.p90_us())));
      }
      xs.push_back(pt.x());
      us.push_back(pt.median_us());
    }
    auto& entries = profile.index_[t.kind()];
    auto it = std::lower_bound(entries.begin(), entries.end(), key,
                               [](const Entry& e, const KeyDims& k) { return KeyLess(e.key, k); });
    if (it != entries.end() && it->key == key) {
      return absl::InvalidArgumentError(absl::StrCat(where, ": duplicate of an earlier table"));
    }
    entries.insert(it, Entry{std::move(key), Curve(std::move(xs), std::move(us))});
  }
  return profile;
}

absl::Status Profile::Save(const std::string& path) const {
  ASSIGN_OR_RETURN(Format format, FormatFor(path));
  std::string bytes;
  if (format == Format::kText) {
    if (!google::protobuf::TextFormat::PrintToString(proto_, &bytes)) {
      return absl::InternalError(absl::StrCat(path, ": cannot print profile as text"));
    }
  } else if (!proto_.SerializeToString(&bytes)) {
    return absl::InternalError(absl::StrCat(path, ": cannot serialize profile"));
  }
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) return absl::PermissionDeniedError(absl::StrCat(path, ": cannot open for writing"));
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  out.close();
  if (!out) return absl::DataLossError(absl::StrCat(path, ": write failed"));
  return absl::OkStatus();
}

const Curve* Profile::FindCurve(std::string_view kind, const KeyDims& key) const {
  auto kit = index_.find(kind);
  if (kit == index_.end()) return nullptr;
  const std::vector<Entry>& entries = kit->second;
  auto it = std::lower_bound(entries.begin(), entries.end(), key,
                             [](const Entry& e, const KeyDims& k) { return KeyLess(e.key, k); });
  if (it == entries.end() || it->key != key) return nullptr;
  return &it->curve;
}

std::optional<double> Profile::LookupUs(std::string_view kind, const KeyDims& key, double x) const {
  const Curve* curve = FindCurve(kind, key);
  if (curve == nullptr) return std::nullopt;
  return curve->Us(x);
}

std::vector<KeyDims> Profile::KeysFor(std::string_view kind) const {
  std::vector<KeyDims> keys;
  auto kit = index_.find(kind);
  if (kit == index_.end()) return keys;
  for (const Entry& e : kit->second) keys.push_back(e.key);
  return keys;
}

}  // namespace servesim::calibration
