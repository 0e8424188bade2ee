#include "xcp/chirp_schedule.hh"

#include <cmath>

namespace xcp {

namespace {

// Offsets for rates L·scale·γ^k; accumulated in double so that rounding to
// whole nanoseconds happens once per packet, not once per gap.
std::vector<xcp::Duration> make_offsets(const ChirpConfig& c, double scale) {
  std::vector<xcp::Duration> out;
  const uint32_t n = c.packets_per_chirp();
  out.reserve(n);
  const double first_gap_s = c.packet_bytes / (c.low_rate.bytes_per_s() * scale);
  double t = 0.0;
  double gap = first_gap_s;
  out.push_back(xcp::Duration::zero());
  for (uint32_t k = 0; k + 1 < n; ++k) {
    t += gap;
    out.push_back(xcp::Duration::nanoseconds(std::llround(t * 1e9)));
    gap /= c.spread_factor;
  }
  return out;
}

}  // namespace

ChirpSchedule::ChirpSchedule(const ChirpConfig& config) : config_(config) {
  config_.validate();
  offsets_ = make_offsets(config_, 1.0);
}

xcp::Rate ChirpSchedule::gap_rate(uint32_t k) const {
  return config_.low_rate * std::pow(config_.spread_factor, static_cast<double>(k));
}

std::vector<xcp::Duration> ChirpSchedule::dithered_offsets(double u) const {
  if (!config_.dither || u <= 0.0) return offsets_;
  return make_offsets(config_, std::pow(config_.spread_factor, -u));
}

}  // namespace xcp
