#include "cc/hstcp.hh"

#include <algorithm>
#include <cmath>

namespace xcphost {

namespace {
// Position of w between Low_Window and High_Window on a log scale.
double log_position(double w) {
  return (std::log(w) - std::log(Hstcp::kLowWindow)) /
         (std::log(Hstcp::kHighWindow) - std::log(Hstcp::kLowWindow));
}
}  // namespace

double Hstcp::b(double w) {
  if (w <= kLowWindow) return 0.5;
  return (kHighDecrease - 0.5) * log_position(w) + 0.5;
}

double Hstcp::p(double w) {
  return std::exp(log_position(w) * (std::log(kHighP) - std::log(kLowP)) + std::log(kLowP));
}

double Hstcp::a(double w) {
  if (w <= kLowWindow) return 1.0;
  const double bw = b(w);
  return std::max(1.0, 2.0 * w * w * p(w) * bw / (2.0 - bw));
}

double Hstcp::increase_segments(double w) const { return a(w); }

uint64_t Hstcp::ssthresh_after_loss(uint64_t bytes_in_flight) const {
  const double w = window_segments();
  if (w <= kLowWindow) return NewReno::ssthresh_after_loss(bytes_in_flight);
  // RFC 3649: w <- (1 - b(w))·w, on the congestion window.
  const double next = (1.0 - b(w)) * cwnd();
  return static_cast<uint64_t>(std::max(next, 2.0 * mss()));
}

}  // namespace xcphost
