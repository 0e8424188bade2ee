#include "app/stream_sample.hh"

#include <algorithm>

namespace xcphost {

void set_deltas(StreamSample& s, const ConnectionStats& now, const ConnectionStats& prev) {
  s.bytes = now.bytes_acked - prev.bytes_acked;
  s.retransmits = now.retransmits - prev.retransmits;
  s.timeouts = now.timeouts - prev.timeouts;
  s.fast_recoveries = now.fast_recoveries - prev.fast_recoveries;
  s.feedback_bytes = now.feedback_bytes - prev.feedback_bytes;
}

StreamSample StreamSampler::take(const Connection& c, double end_s) {
  const ConnectionStats& now = c.stats();
  StreamSample s;
  s.id = id_;
  s.start_s = last_s_;
  s.end_s = end_s;
  set_deltas(s, now, prev_);
  s.cwnd_bytes = c.controller().cwnd_bytes();
  s.srtt_us = c.rtt().srtt().us();
  s.rttvar_us = c.rtt().rttvar().us();
  s.bytes_in_flight = c.bytes_in_flight();
  const SackScoreboard& b = c.scoreboard();
  s.unacked_bytes = b.outstanding_bytes();
  s.sacked_bytes = b.sacked_bytes();
  s.lost_bytes = b.lost_bytes();
  s.retransmitted_bytes = b.retransmitted_bytes();
  s.in_recovery = c.in_recovery();
  s.loss_fallback = c.controller().in_loss_fallback();
  prev_ = now;
  last_s_ = end_s;
  max_cwnd_ = std::max<int64_t>(max_cwnd_, static_cast<int64_t>(s.cwnd_bytes));
  if (s.srtt_us > 0) {
    max_rtt_us_ = std::max(max_rtt_us_, s.srtt_us);
    min_rtt_us_ = min_rtt_us_ == 0 ? s.srtt_us : std::min(min_rtt_us_, s.srtt_us);
    rtt_sum_us_ += s.srtt_us;
    ++rtt_samples_;
  }
  return s;
}

StreamSample StreamSampler::total(const Connection& c, double end_s) const {
  const ConnectionStats& now = c.stats();
  StreamSample s;
  s.id = id_;
  s.start_s = 0;
  s.end_s = end_s;
  set_deltas(s, now, ConnectionStats{});
  s.cwnd_bytes = c.controller().cwnd_bytes();
  s.srtt_us = c.rtt().srtt().us();
  s.rttvar_us = c.rtt().rttvar().us();
  return s;
}

}  // namespace xcphost
