#include "transport/rtt_estimator.hh"

#include <algorithm>

namespace xcphost {

using xcp::Duration;

RttEstimator::RttEstimator(RttConfig cfg) : cfg_(cfg), base_rto_(cfg.initial_rto) {}

Duration RttEstimator::clamp(Duration d) const {
  return std::clamp(d, cfg_.min_rto, cfg_.max_rto);
}

void RttEstimator::on_sample(Duration rtt) {
  if (rtt < cfg_.clock_granularity) rtt = cfg_.clock_granularity;
  latest_ = rtt;
  min_rtt_ = std::min(min_rtt_, rtt);
  if (!has_sample_) {
    // RFC 6298 (2.2): SRTT <- R, RTTVAR <- R/2.
    srtt_ = rtt;
    rttvar_ = Duration::nanoseconds(rtt.ns() / 2);
    has_sample_ = true;
  } else {
    // RFC 6298 (2.3), beta = 1/4 then alpha = 1/8 (RTTVAR uses the old SRTT).
    const int64_t err = srtt_.ns() > rtt.ns() ? srtt_.ns() - rtt.ns() : rtt.ns() - srtt_.ns();
    rttvar_ = Duration::nanoseconds(rttvar_.ns() - rttvar_.ns() / 4 + err / 4);
    srtt_ = Duration::nanoseconds(srtt_.ns() - srtt_.ns() / 8 + rtt.ns() / 8);
  }
  // RTO <- SRTT + max(G, K*RTTVAR), K = 4.
  base_rto_ = srtt_ + std::max(cfg_.timer_granularity, Duration::nanoseconds(4 * rttvar_.ns()));
  // A fresh sample means the path answers again: drop the back-off
  // (RFC 6298 (5.7) discussion; what every deployed stack does), unless the
  // transport ends it itself (keep_backoff_until_new_data, ns-2's rule).
  if (!cfg_.keep_backoff_until_new_data) backoffs_ = 0;
}

void RttEstimator::on_timeout() {
  // Stop counting once the cap is reached so the shift below cannot overflow.
  if (rto() < cfg_.max_rto) ++backoffs_;
}

Duration RttEstimator::rto() const {
  Duration r = clamp(base_rto_);
  for (uint32_t i = 0; i < backoffs_ && r < cfg_.max_rto; ++i) r = r + r;
  return std::min(r, cfg_.max_rto);
}

}  // namespace xcphost
