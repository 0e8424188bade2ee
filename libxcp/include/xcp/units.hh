// Strong units for time and rate. Every quantity that crosses a function
// boundary carries its unit in its type; raw integers of unknown unit do not.
// Byte counts stay plain integers named `*_bytes` (they are summed and divided
// far too often in the control laws for a wrapper to pay its way).
#pragma once

#include <compare>
#include <cstdint>
#include <limits>

namespace xcp {

class Duration {
 public:
  constexpr Duration() = default;
  static constexpr Duration nanoseconds(int64_t ns) { return Duration(ns); }
  static constexpr Duration microseconds(int64_t us) { return Duration(us * 1'000); }
  static constexpr Duration milliseconds(int64_t ms) { return Duration(ms * 1'000'000); }
  static constexpr Duration seconds(double s) { return Duration(static_cast<int64_t>(s * 1e9)); }
  static constexpr Duration zero() { return Duration(0); }
  static constexpr Duration infinite() { return Duration(std::numeric_limits<int64_t>::max()); }

  constexpr int64_t ns() const { return ns_; }
  constexpr int64_t us() const { return ns_ / 1'000; }
  constexpr double seconds_f() const { return static_cast<double>(ns_) * 1e-9; }
  constexpr bool is_infinite() const { return ns_ == std::numeric_limits<int64_t>::max(); }

  constexpr Duration operator+(Duration o) const { return Duration(ns_ + o.ns_); }
  constexpr Duration operator-(Duration o) const { return Duration(ns_ - o.ns_); }
  constexpr Duration operator*(double k) const { return Duration(static_cast<int64_t>(static_cast<double>(ns_) * k)); }
  constexpr Duration operator/(double k) const { return Duration(static_cast<int64_t>(static_cast<double>(ns_) / k)); }
  constexpr double operator/(Duration o) const { return static_cast<double>(ns_) / static_cast<double>(o.ns_); }
  constexpr Duration& operator+=(Duration o) { ns_ += o.ns_; return *this; }
  constexpr Duration& operator-=(Duration o) { ns_ -= o.ns_; return *this; }
  constexpr auto operator<=>(const Duration&) const = default;

 private:
  constexpr explicit Duration(int64_t ns) : ns_(ns) {}
  int64_t ns_ = 0;
};

// A point on one clock's timeline (CLOCK_MONOTONIC in production, a FakeClock
// in tests). Timestamps from different clocks must never be compared.
class Timestamp {
 public:
  constexpr Timestamp() = default;
  static constexpr Timestamp from_ns(int64_t ns) { return Timestamp(ns); }
  static constexpr Timestamp zero() { return Timestamp(0); }
  static constexpr Timestamp max() { return Timestamp(std::numeric_limits<int64_t>::max()); }

  constexpr int64_t ns() const { return ns_; }
  constexpr double seconds_f() const { return static_cast<double>(ns_) * 1e-9; }

  constexpr Timestamp operator+(Duration d) const { return Timestamp(ns_ + d.ns()); }
  constexpr Timestamp operator-(Duration d) const { return Timestamp(ns_ - d.ns()); }
  constexpr Duration operator-(Timestamp o) const { return Duration::nanoseconds(ns_ - o.ns_); }
  constexpr Timestamp& operator+=(Duration d) { ns_ += d.ns(); return *this; }
  constexpr auto operator<=>(const Timestamp&) const = default;

 private:
  constexpr explicit Timestamp(int64_t ns) : ns_(ns) {}
  int64_t ns_ = 0;
};

// A data rate. Stored as bytes per second in double precision because the XCP
// control laws (docs/protocol.md §2) are specified in bytes/s and computed in double.
class Rate {
 public:
  constexpr Rate() = default;
  // Factories name their unit in full, as the accessors below do: from_X(v)
  // makes the rate whose X() is v.
  static constexpr Rate from_bytes_per_s(double bytes_per_s) { return Rate(bytes_per_s); }
  static constexpr Rate from_bits_per_s(double bits_per_s) { return Rate(bits_per_s / 8.0); }
  static constexpr Rate from_megabits_per_s(double megabits_per_s) { return Rate(megabits_per_s * 1e6 / 8.0); }
  static constexpr Rate zero() { return Rate(0.0); }

  constexpr double bytes_per_s() const { return bytes_per_s_; }
  constexpr double bits_per_s() const { return bytes_per_s_ * 8.0; }
  constexpr double megabits_per_s() const { return bytes_per_s_ * 8.0 / 1e6; }
  constexpr bool is_zero() const { return bytes_per_s_ <= 0.0; }

  // Time to serialise `bytes` at this rate; infinite for a zero rate.
  constexpr Duration transfer_time(uint64_t bytes) const {
    if (bytes_per_s_ <= 0.0) return Duration::infinite();
    return Duration::nanoseconds(static_cast<int64_t>(static_cast<double>(bytes) * 1e9 / bytes_per_s_));
  }
  // Bytes this rate carries in `d`.
  constexpr double bytes_in(Duration d) const { return bytes_per_s_ * d.seconds_f(); }

  constexpr Rate operator*(double k) const { return Rate(bytes_per_s_ * k); }
  constexpr auto operator<=>(const Rate&) const = default;

 private:
  constexpr explicit Rate(double bytes_per_s) : bytes_per_s_(bytes_per_s) {}
  double bytes_per_s_ = 0.0;
};

}  // namespace xcp
