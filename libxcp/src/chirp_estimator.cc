#include "xcp/chirp_estimator.hh"

#include <algorithm>
#include <numeric>
#include <vector>

namespace xcp {

ChirpEstimator::ChirpEstimator(const ChirpConfig& config)
    : config_(config), analyzer_(config) {}

void ChirpEstimator::on_probe(const ChirpProbe& probe) {
  for (const ChirpResult& r : analyzer_.on_probe(probe)) add(r);
}

void ChirpEstimator::on_deadline(xcp::Timestamp now) {
  for (const ChirpResult& r : analyzer_.on_deadline(now)) add(r);
}

void ChirpEstimator::add(const ChirpResult& chirp) {
  ++chirps_seen_;
  if (!chirp.estimate) {
    ++chirps_unusable_;
    return;
  }
  window_.push_back(chirp.estimate->bytes_per_s());
  while (window_.size() > config_.chirps_per_estimate) window_.pop_front();
  last_chirp_at_ = chirp.completed_at;
  if (!first_estimate_at_ && window_.size() >= config_.min_chirps)
    first_estimate_at_ = chirp.completed_at;
}

std::optional<xcp::Rate> ChirpEstimator::estimate() const {
  if (window_.size() < config_.min_chirps) return std::nullopt;
  if (config_.smoothing == ChirpSmoothing::kMean) {
    const double sum = std::accumulate(window_.begin(), window_.end(), 0.0);
    return xcp::Rate::from_bytes_per_s(sum / static_cast<double>(window_.size()));
  }
  std::vector<double> v(window_.begin(), window_.end());
  const size_t mid = v.size() / 2;
  std::nth_element(v.begin(), v.begin() + mid, v.end());
  double m = v[mid];
  if (v.size() % 2 == 0) {
    // Even count: mean of the two middle values (the lower one is the
    // largest of the lower half).
    m = 0.5 * (m + *std::max_element(v.begin(), v.begin() + mid));
  }
  return xcp::Rate::from_bytes_per_s(m);
}

void ChirpEstimator::reset() {
  analyzer_ = ChirpAnalyzer(config_);
  window_.clear();
  first_estimate_at_.reset();
  last_chirp_at_.reset();
  chirps_seen_ = 0;
  chirps_unusable_ = 0;
}

}  // namespace xcp
