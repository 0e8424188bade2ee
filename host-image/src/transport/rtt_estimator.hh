// RTT estimation and the retransmission timeout, RFC 6298.
//
// Samples are taken from µs timestamps echoed by the peer. Karn's rule is the
// transport's job: it must not feed a sample measured on a retransmitted
// segment (with echoed timestamps the echo identifies the transmission, so a
// sample is valid when the echoed timestamp belongs to the ACKed transmission).
#pragma once

#include <cstdint>

#include "xcp/units.hh"

namespace xcphost {

struct RttConfig {
  // RFC 6298 (2.4) says 1 s; 200 ms is what Linux uses and what lets the
  // emulated 10–100 ms paths recover from a tail loss without a second-long stall.
  xcp::Duration min_rto = xcp::Duration::milliseconds(200);
  xcp::Duration max_rto = xcp::Duration::seconds(60);           // RFC 6298 (2.5)
  xcp::Duration initial_rto = xcp::Duration::seconds(1);        // RFC 6298 (2.1)
  xcp::Duration clock_granularity = xcp::Duration::microseconds(1);  // samples: µs timestamps
  // G in RTO = SRTT + max(G, 4·RTTVAR): the least margin the timer keeps over
  // SRTT. With µs samples on a path whose RTT has settled (a standing queue),
  // RTTVAR falls to tens of µs and the timer sits within a fraction of a
  // millisecond of one RTT, so a repair's ACK that is a little slower than
  // SRTT loses the race to the timer. The seeds' simulator, ns-2, counts in
  // ticks of tcpTick_ = 10 ms (its RTTVAR never drops below one tick's
  // worth); Linux floors the term at 200 ms. We keep ns-2's margin.
  xcp::Duration timer_granularity = xcp::Duration::milliseconds(10);
  // When the timeout back-off ends. false: at the next valid RTT sample (Linux,
  // and RFC 6298 (5.7)'s note), which with timestamps is the ACK of the first
  // retransmission. true: only when the transport calls end_backoff(), which it
  // does once an ACK covers data first sent after the timeout: ns-2.35's
  // TcpAgent (`t_backoff_ = 1` when rtt_seq_ is ACKed; ts_resetRTO_ false), so a
  // loss among the go-back-N resends waits 2·RTO, then 4·RTO. Seed 000's
  // Fig. 2 (c) depth depends on it (docs/ns2-backend.md).
  bool keep_backoff_until_new_data = false;
};

class RttEstimator {
 public:
  explicit RttEstimator(RttConfig cfg = {});

  // A valid RTT sample (Karn-clean). Updates SRTT/RTTVAR (gains 1/8, 1/4),
  // recomputes RTO and clears any timeout back-off (RFC 6298 (5.7) note) unless
  // the config keeps it until new data is ACKed.
  // Non-positive samples are clamped to G.
  void on_sample(xcp::Duration rtt);
  // The retransmission timer expired: RTO doubles, capped at max_rto (RFC 6298 (5.5)).
  void on_timeout();
  // Drops the back-off (with keep_backoff_until_new_data, on_sample no longer does).
  void end_backoff() { backoffs_ = 0; }

  bool has_sample() const { return has_sample_; }
  xcp::Duration srtt() const { return srtt_; }          // zero before the first sample
  xcp::Duration rttvar() const { return rttvar_; }      // zero before the first sample
  xcp::Duration latest_rtt() const { return latest_; }  // zero before the first sample
  xcp::Duration min_rtt() const { return min_rtt_; }    // infinite before the first sample
  // Current timeout including back-off, within [min_rto, max_rto].
  xcp::Duration rto() const;
  uint32_t backoff_count() const { return backoffs_; }
  const RttConfig& config() const { return cfg_; }

 private:
  xcp::Duration clamp(xcp::Duration d) const;

  RttConfig cfg_;
  bool has_sample_ = false;
  xcp::Duration srtt_ = xcp::Duration::zero();
  xcp::Duration rttvar_ = xcp::Duration::zero();
  xcp::Duration latest_ = xcp::Duration::zero();
  xcp::Duration min_rtt_ = xcp::Duration::infinite();
  xcp::Duration base_rto_;  // RTO from the estimator, before back-off
  uint32_t backoffs_ = 0;
};

}  // namespace xcphost
