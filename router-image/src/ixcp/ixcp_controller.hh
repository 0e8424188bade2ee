// The iXCP law of one output port (docs/protocol.md §5, seed 001): XCP's
// controller whose shuffling acts only among the flows bottlenecked at this
// link, recognised by the bottleneck_id of the B block, and which marks the
// packets it limits with its link id (next_bottleneck_id). The XCP queue
// drives it exactly as it drives XCP (xcp_qdisc.hh); the arithmetic is in
// ixcp_law.hh, the choices in router-image/IXCP.md.
#pragma once

#include <cstdint>
#include <memory>

#include "ixcp/ixcp_law.hh"
#include "xcp/xcp_controller.hh"

namespace xcprouter {

struct IxcpCounters {
  uint64_t matching_packets = 0, matching_bytes = 0;          // bottleneck_id = ours, or no id
  uint64_t non_matching_packets = 0, non_matching_bytes = 0;  // counted in y0
  uint64_t no_block = 0;     // Standard arrivals without the B block (treated as matching)
  uint64_t ids_written = 0;  // departures whose next_bottleneck_id this link set
  uint64_t claims_declined = 0;  // negative-feedback claims of flows named elsewhere not drawn
  uint64_t ids_released = 0;     // departures named here whose next_bottleneck_id this link set to 0
  uint64_t held_released = 0;    // of those, flows held upstream below the local rate (not lowered here)
  uint64_t clipped_claims = 0;   // flows named elsewhere claimed because this link clips them (IXCP.md)
  uint64_t fast_claims = 0;      // flows named elsewhere claimed at >= 0.9 of the local rate (IXCP.md)
  // What the clipped claims saw (IXCP.md, "Claim of a flow clipped here"):
  // packets tested (named elsewhere, lowered here with fb >= 0 by a congested
  // port, under 0.8 of the local rate); of the claims, those whose request
  // was an application-limited sender's (flag A) or whose feedback here was
  // 0 (pools drained), and sums of H_feedback as it arrived, of the feedback
  // the flow would get here counted as a matching flow, and of its rate /
  // local rate.
  uint64_t clip_tested = 0, clipped_app_limited = 0, clipped_fb_zero = 0;
  double clipped_h_sum = 0, clipped_as_matching_sum = 0, clipped_rate_ratio_sum = 0;
  // Feedback this link wrote into matching packets, by part (bytes, before
  // rounding), and the matching packets whose H_feedback an upstream hop had
  // already set lower (this hop wrote nothing).
  double m_p_spare = 0, m_n_spare = 0, m_p_shuffle = 0, m_n_shuffle = 0;
  uint64_t m_not_lowered = 0;
};

class IxcpController final : public XcpController {
 public:
  // `link_id` is this output link's id (nonzero, from the plan).
  IxcpController(XcpParams params, std::unique_ptr<SpareBandwidth> spare, uint64_t seed, uint32_t link_id);

  void on_arrival(const Packet& p) override;
  void on_departure(Packet& p) override;
  void report(nlohmann::json& out) const override;

  // Whether a Standard shim counts as bottlenecked here (IXCP.md).
  bool matches(const xcp::XcpHeader& h) const {
    return !h.has_ixcp() || h.bottleneck_id == 0 || h.bottleneck_id == link_id_;
  }
  uint32_t link_id() const { return link_id_; }
  // Mean rate (bytes/s, cwnd/rtt from the headers) of the flows bottlenecked
  // here over the last interval, Ss_m/SA_m; 0 when none were seen.
  double local_rate() const { return shuffle_.sa > 0 ? shuffle_.ss / shuffle_.sa : 0.0; }
  // Past its first control interval and running above half its capacity
  // (y >= C - y): a port that can be a flow's bottleneck. One under half its
  // capacity (an access link, an idle egress) names nobody (IXCP.md).
  bool congested() const { return counters_.intervals > 0 && state_.y >= state_.spare; }
  const ShuffleState& shuffle() const { return shuffle_; }
  const Pools& shuffle_pools() const { return shuffle_pools_; }
  const SparePools& spare_pools() const { return spare_pools_; }
  const IxcpCounters& ixcp_counters() const { return ixcp_counters_; }

 protected:
  IntervalState interval_state(double y, const TimeoutInput& in) override;

 private:
  // The id a lowering hop leaves in next_bottleneck_id (IXCP.md, "Which hop
  // claims the flow"): its own, 0 (released), or the packet's unchanged.
  uint32_t next_bottleneck_id(const xcp::XcpHeader& h, double fb, double s_bytes);
  // Whether a flow named elsewhere that this hop lowers with fb >= 0 is
  // claimed because it would get more here as a flow of its own.
  bool claims_clipped(const xcp::XcpHeader& h, double fb, double s_bytes);

  uint32_t link_id_;
  double y0_bytes_ = 0;     // this interval's non-matching input
  IntervalSums matching_;   // this interval's SA/Ss over matching packets
  IntervalSums last_matching_;  // the last interval's, which shuffle_ was computed from
  double last_elapsed_s_ = 0;   // and its length T
  ShuffleState shuffle_;
  Pools shuffle_pools_;
  SparePools spare_pools_;
  IxcpCounters ixcp_counters_;
  UniformRng claim_rng_;  // the claim draws, apart from XCP's rounding stream
};

}  // namespace xcprouter
