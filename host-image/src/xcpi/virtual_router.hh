// The virtual router V(U) that a receiver runs itself when a non-XCP cloud lies
// after the last XCP-i router U on its path (docs/protocol.md §4 "Host duties",
// seed 000 §III-B: "simply duplicating the XCP-i code in the receiver's XCP
// protocol stack"). The law is libxcp's (xcp/xcp_control_law.hh), the one the
// engine's V(U) runs through its XcpController: per-interval sums on arrival,
// the control timeout, per-packet feedback that only ever lowers H_feedback.
// It acts on a parsed shim (the host has no router Packet) and never sees time:
// the owner calls on_timeout() every state().d with the elapsed time and Q.
#pragma once

#include <cstdint>

#include "xcp/header.hh"
#include "xcp/spare_bandwidth.hh"
#include "xcp/uniform_rng.hh"
#include "xcp/xcp_control_law.hh"
#include "xcp/xcp_params.hh"

namespace xcphost {

class VirtualRouter {
 public:
  VirtualRouter(xcp::XcpParams params, uint64_t seed);

  // A packet from U that crossed the cloud: counted in y, and in SA/SB/Ss when
  // it is a Standard packet with H_rtt and H_cwnd.
  void on_arrival(const xcp::XcpHeader& h, double wire_bytes);
  // V's feedback for that packet: lowers h.feedback_bytes when V asks for less
  // (true), leaves it otherwise. A packet without H_rtt/H_cwnd gets at most 0,
  // as at any XCP hop.
  bool on_departure(xcp::XcpHeader& h, double wire_bytes);
  // Control timeout: elapsed time since the previous one and Q (bytes).
  const xcp::IntervalState& on_timeout(double elapsed_s, double queue_bytes);

  // S comes from here: C_U - y once set_capacity_for_upstream(C_U) was called.
  xcp::EstimatedSpareBandwidth& spare() { return spare_; }
  const xcp::EstimatedSpareBandwidth& spare() const { return spare_; }
  const xcp::IntervalState& state() const { return state_; }
  const xcp::IntervalSums& sums() const { return sums_; }
  uint64_t intervals() const { return intervals_; }

 private:
  double capped_rtt_s(uint32_t rtt_us) const;

  xcp::XcpParams params_;
  xcp::EstimatedSpareBandwidth spare_;
  xcp::UniformRng rng_;
  xcp::IntervalSums sums_;
  xcp::IntervalState state_;
  xcp::Pools pools_;
  uint64_t intervals_ = 0;
};

}  // namespace xcphost
