// HighSpeed TCP (RFC 3649) with the constants of docs/protocol.md §7, on top of the
// NewReno machinery (slow start, recovery, timeouts are NewReno's). Above
// Low_Window the congestion-avoidance increase is a(w) segments per RTT and a
// loss leaves (1 − b(w))·w; at or below Low_Window it is exactly NewReno.
#pragma once

#include "cc/newreno.hh"

namespace xcphost {

class Hstcp final : public NewReno {
 public:
  // RFC 3649 §5 / docs/protocol.md §7. Windows in segments, probabilities per packet.
  static constexpr double kLowWindow = 38.0;
  static constexpr double kHighWindow = 83000.0;
  static constexpr double kHighP = 1e-7;
  static constexpr double kHighDecrease = 0.1;
  // Drop rate at which standard TCP (w = 1.2/sqrt(p), RFC 3649 §3) has
  // w = Low_Window: 1.2²/38² ≈ 0.997e-3; RFC 3649 rounds it to 10^-3 and so do we.
  static constexpr double kLowP = 1e-3;

  explicit Hstcp(const CcConfig& cfg) : NewReno(cfg) {}

  std::string_view name() const override { return "hstcp"; }

  // Decrease factor b(w): 0.5 at Low_Window falling log-linearly to 0.1 at High_Window.
  static double b(double w);
  // Response-function drop rate p(w), log-log interpolated between the ends.
  static double p(double w);
  // Increase a(w) = 2·w²·p(w)·b(w)/(2 − b(w)) segments per RTT, never below
  // NewReno's 1 (at w just above 38 the formula gives 0.96).
  static double a(double w);

 protected:
  double increase_segments(double w) const override;
  uint64_t ssthresh_after_loss(uint64_t bytes_in_flight) const override;
};

}  // namespace xcphost
