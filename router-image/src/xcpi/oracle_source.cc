#include "xcpi/oracle_source.hh"

#include <limits>

namespace xcprouter {

OracleSource::OracleSource(std::vector<const Link*> links, double error, uint64_t seed)
    : links_(std::move(links)), last_in_bytes_(links_.size(), 0), error_(error), rng_(seed) {}

std::optional<OracleSample> OracleSource::sample(xcp::Timestamp now) {
  if (!started_) {
    for (size_t i = 0; i < links_.size(); ++i) last_in_bytes_[i] = links_[i]->counters().in_bytes;
    last_ = now;
    started_ = true;
    return std::nullopt;
  }
  if (now <= last_) return std::nullopt;
  const double dt = (now - last_).seconds_f();
  double spare_bytes = std::numeric_limits<double>::infinity();
  for (size_t i = 0; i < links_.size(); ++i) {
    const uint64_t in = links_[i]->counters().in_bytes;
    const double y = static_cast<double>(in - last_in_bytes_[i]) / dt;
    last_in_bytes_[i] = in;
    // A link that is down carries nothing: its available bandwidth is zero.
    const double c = links_[i]->up() ? links_[i]->capacity().bytes_per_s() : 0.0;
    spare_bytes = std::min(spare_bytes, c - y);
  }
  last_ = now;
  if (links_.empty()) return std::nullopt;
  OracleSample s;
  s.truth_bps = spare_bytes * 8.0;
  s.error_factor = 1.0 + error_ * (2.0 * rng_.next() - 1.0);
  return s;
}

}  // namespace xcprouter
