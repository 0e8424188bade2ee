// NewReno (RFC 5681 + RFC 6582), windows in bytes.
//
// Split with the transport (see congestion_controller.hh): the transport keeps
// the recovery point, decides entry/exit of fast recovery, retransmits, and
// sends while pipe < cwnd. So this class never inflates or deflates the window
// per duplicate/partial ACK (RFC 6582 steps 3-5 are done by pipe accounting,
// as in RFC 6675); it sets ssthresh/cwnd on entry, holds cwnd during recovery,
// and applies the RFC 6582 exit rule.
#pragma once

#include "cc/congestion_controller.hh"

namespace xcphost {

class NewReno : public CongestionController {
 public:
  explicit NewReno(const CcConfig& cfg);

  std::string_view name() const override { return "newreno"; }
  uint64_t cwnd_bytes() const override;
  uint64_t ssthresh_bytes() const override { return ssthresh_; }

  // TCP flows carry a neutral shim: H_cwnd = H_rtt = 0 keeps routers from
  // counting them as XCP flows; H_feedback = 0.
  void fill_header(xcp::XcpHeader& h, xcp::Duration srtt, bool app_limited) const override;
  void on_ack(const AckEvent& ack) override;
  void on_loss(xcp::Timestamp now, uint64_t bytes_in_flight) override;
  void on_recovery_exit(xcp::Timestamp now) override;
  void on_timeout(xcp::Timestamp now) override;
  void on_packet_sent(xcp::Timestamp now, uint64_t bytes, uint64_t bytes_in_flight) override;
  bool in_loss_fallback() const override { return in_recovery_; }

  bool in_slow_start() const { return cwnd_ < static_cast<double>(ssthresh_); }

 protected:
  // Segments added per window of ACKed data in congestion avoidance: 1 for
  // NewReno, a(w) for HighSpeed TCP. w = cwnd in segments.
  virtual double increase_segments(double w) const;
  // ssthresh after a loss (RFC 5681 (4): max(FlightSize/2, 2·SMSS)).
  virtual uint64_t ssthresh_after_loss(uint64_t bytes_in_flight) const;

  double window_segments() const { return cwnd_ / mss_; }
  double mss() const { return mss_; }
  double cwnd() const { return cwnd_; }

 private:
  double mss_;
  double cwnd_;                 // bytes, fractional so per-ACK growth is not lost to rounding
  uint64_t ssthresh_;
  uint64_t last_flight_ = 0;    // latest bytes_in_flight the transport reported
  bool in_recovery_ = false;
};

}  // namespace xcphost
