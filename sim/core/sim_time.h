// Simulated time: a strong integer-nanosecond type. Doubles appear only in
// reports, so event order never depends on floating-point rounding.
#ifndef SERVESIM_SIM_CORE_SIM_TIME_H_
#define SERVESIM_SIM_CORE_SIM_TIME_H_

#include <cmath>
#include <compare>
#include <cstdint>

namespace servesim::sim {

class SimTime {
 public:
  constexpr SimTime() = default;
  static constexpr SimTime FromNs(int64_t ns) { return SimTime(ns); }
  static constexpr SimTime Zero() { return SimTime(0); }

  constexpr int64_t ns() const { return ns_; }
  double seconds() const { return static_cast<double>(ns_) * 1e-9; }
  double milliseconds() const { return static_cast<double>(ns_) * 1e-6; }

  constexpr auto operator<=>(const SimTime&) const = default;
  constexpr SimTime operator+(SimTime o) const { return SimTime(ns_ + o.ns_); }
  constexpr SimTime operator-(SimTime o) const { return SimTime(ns_ - o.ns_); }
  constexpr SimTime& operator+=(SimTime o) {
    ns_ += o.ns_;
    return *this;
  }

 private:
  constexpr explicit SimTime(int64_t ns) : ns_(ns) {}
  int64_t ns_ = 0;
};

constexpr SimTime Nanoseconds(int64_t ns) { return SimTime::FromNs(ns); }
// Rounds to the nearest nanosecond: the one place a double becomes a time.
inline SimTime Microseconds(double us) {
  return SimTime::FromNs(static_cast<int64_t>(std::llround(us * 1e3)));
}
inline SimTime Milliseconds(double ms) {
  return SimTime::FromNs(static_cast<int64_t>(std::llround(ms * 1e6)));
}
inline SimTime Seconds(double s) {
  return SimTime::FromNs(static_cast<int64_t>(std::llround(s * 1e9)));
}

}  // namespace servesim::sim

#endif  // SERVESIM_SIM_CORE_SIM_TIME_H_
