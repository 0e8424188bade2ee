// Per-stream counters over one report interval, taken as deltas of a
// connection's monotonic statistics.
#pragma once

#include <cstdint>

#include "transport/connection.hh"

namespace xcphost {

struct StreamSample {
  int id = 0;
  double start_s = 0;  // since the test started
  double end_s = 0;
  uint64_t bytes = 0;            // payload bytes newly acknowledged by the receiver
  uint64_t cwnd_bytes = 0;       // at the end of the interval
  int64_t srtt_us = 0;
  int64_t rttvar_us = 0;
  uint64_t retransmits = 0;      // segments
  uint64_t timeouts = 0;         // retransmission timeouts
  uint64_t fast_recoveries = 0;  // fast-retransmit recovery episodes entered
  int64_t feedback_bytes = 0;    // sum of H_reverse_feedback received
  uint64_t bytes_in_flight = 0;  // RFC 6675 pipe
  // The scoreboard behind pipe, at the end of the interval: unacked =
  // snd_nxt - snd_una; pipe = unacked - sacked - lost + retransmitted, less
  // the no-SACK estimate of segments delivered past a hole. in_recovery: fast
  // recovery or the go-back-N repair after an RTO.
  uint64_t unacked_bytes = 0;
  uint64_t sacked_bytes = 0;
  uint64_t lost_bytes = 0;
  uint64_t retransmitted_bytes = 0;
  bool in_recovery = false;
  bool loss_fallback = false;
  double seconds() const { return end_s - start_s; }
  double bits_per_second() const { return seconds() > 0 ? static_cast<double>(bytes) * 8 / seconds() : 0; }
};

// Sets the interval counters of `s` (bytes, retransmits, timeouts, fast
// recoveries, feedback) to `now` less `prev`, both cumulative.
void set_deltas(StreamSample& s, const ConnectionStats& now, const ConnectionStats& prev);

// Turns successive reads of one connection's statistics into interval samples.
class StreamSampler {
 public:
  explicit StreamSampler(int id) : id_(id) {}
  // Sample covering [last call's end, end_s). Call with the live connection.
  StreamSample take(const Connection& c, double end_s);
  // Totals since the start (for the end section).
  StreamSample total(const Connection& c, double end_s) const;
  int64_t max_cwnd() const { return max_cwnd_; }
  int64_t max_rtt_us() const { return max_rtt_us_; }
  int64_t min_rtt_us() const { return min_rtt_us_; }
  int64_t mean_rtt_us() const { return rtt_samples_ ? rtt_sum_us_ / rtt_samples_ : 0; }

 private:
  int id_;
  double last_s_ = 0;
  ConnectionStats prev_{};
  int64_t max_cwnd_ = 0, max_rtt_us_ = 0, min_rtt_us_ = 0, rtt_sum_us_ = 0, rtt_samples_ = 0;
};

}  // namespace xcphost
