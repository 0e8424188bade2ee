// The XCP end host's window control (docs/protocol.md §3): the sender's congestion
// controller for `--cc xcp` (the routers' control law is router-image's
// XcpController).
//
// Internally the window is kept in wire bytes (the unit of s, H_cwnd and the
// routers' feedback), so feedback is added without conversion; cwnd_bytes()
// reports it in payload bytes (× mss/s) because that is what the transport
// compares with pipe. A window of one packet on the wire is one MSS of payload.
//
// Host duties of the extensions:
// - iXCP (§5): bottleneck id bookkeeping is here (CcConfig::ixcp_access_link_id,
//   AckEvent::echoed_next_bottleneck_id); the receiver's echo is in
//   FeedbackAccumulator::fill_ack.
// - XCP-i (§4): the I block is filled here when configured. Answering
//   estimation requests (Format 3) is a transport-level duty, not window
//   control: Endpoint::on_control does it. A receiver running a virtual router
//   behind a cloud is not implemented (host-image/CC.md).
#pragma once

#include <cstdint>

#include "cc/congestion_controller.hh"

namespace xcphost {

class XcpWindowControl final : public CongestionController {
 public:
  explicit XcpWindowControl(const CcConfig& cfg);

  std::string_view name() const override { return "xcp"; }
  uint64_t cwnd_bytes() const override;
  // XCP has no slow start and no threshold.
  uint64_t ssthresh_bytes() const override { return 0; }

  void fill_header(xcp::XcpHeader& h, xcp::Duration srtt, bool app_limited) const override;
  // Applies H_reverse_feedback exactly once per ACK, duplicates included.
  void on_ack(const AckEvent& ack) override;
  void on_loss(xcp::Timestamp now, uint64_t bytes_in_flight) override;
  void on_recovery_exit(xcp::Timestamp now) override;
  void on_timeout(xcp::Timestamp now) override;
  bool in_loss_fallback() const override { return loss_fallback_; }

  uint64_t wire_cwnd_bytes() const { return static_cast<uint64_t>(cwnd_wire_); }
  uint32_t bottleneck_id() const { return bottleneck_id_; }
  // Sum of H_reverse_feedback applied so far (bytes; for reports).
  int64_t feedback_applied_bytes() const { return feedback_total_; }

  // H_feedback request for a desired wire rate: s·(r·srtt − cwnd)/cwnd,
  // saturated to int32. Exposed for tests and xcpperf reports.
  static int32_t feedback_request(double packet_bytes, double rate_bytes_per_s,
                                  xcp::Duration srtt, double cwnd_wire_bytes);

 private:
  CcConfig cfg_;
  int64_t s_;            // packet size on the wire, bytes (the window's floor)
  int64_t cwnd_wire_;    // bytes on the wire
  int64_t feedback_total_ = 0;
  uint32_t bottleneck_id_ = 0;
  bool loss_fallback_ = false;
  bool after_timeout_ = false;
};

}  // namespace xcphost
