#include "ixcp/ixcp_controller.hh"

#include <stdexcept>

#include "xcp/header.hh"

namespace xcprouter {

IxcpController::IxcpController(XcpParams params, std::unique_ptr<SpareBandwidth> spare, uint64_t seed,
                               uint32_t link_id)
    : XcpController(params, std::move(spare), seed), link_id_(link_id) {
  if (link_id_ == 0) throw std::invalid_argument("IxcpController: link id 0 is reserved (\"no id\")");
}

void IxcpController::on_arrival(const Packet& p) {
  const bool summed = count_arrival(p);
  // Non-XCP packets and ACKs stay in y − y0: nothing marks them as
  // bottlenecked elsewhere (IXCP.md).
  if (!p.has_xcp() || p.xcp.format != xcp::Format::kStandard) return;
  const xcp::XcpHeader& h = p.xcp;
  if (!h.has_ixcp()) ++ixcp_counters_.no_block;
  if (!matches(h)) {
    ++ixcp_counters_.non_matching_packets;
    ixcp_counters_.non_matching_bytes += p.wire_bytes();
    y0_bytes_ += p.wire_bytes();
    return;
  }
  ++ixcp_counters_.matching_packets;
  ixcp_counters_.matching_bytes += p.wire_bytes();
  if (summed) matching_.add_standard(p.wire_bytes(), capped_rtt_s(h.rtt_us), h.cwnd_bytes);
}

IntervalState IxcpController::interval_state(double y, const TimeoutInput& in) {
  // The efficiency half is XCP's with no shuffling of its own: phi, d and the
  // spare pools over every packet.
  XcpParams spare_only = params_;
  spare_only.gamma = 0;
  IntervalState st = compute_interval(sums_, y, in, spare_only);
  const double y0 = in.elapsed_s > 0 ? y0_bytes_ / in.elapsed_s : 0.0;
  shuffle_ = compute_shuffle(st, y0, matching_, params_.gamma);
  shuffle_pools_ = {shuffle_.r_pos, shuffle_.r_neg};
  st.h = shuffle_.h;  // reported h is the shuffled bytes, as for XCP
  y0_bytes_ = 0;
  matching_ = {};
  return st;
}

void IxcpController::on_departure(Packet& p) {
  if (!needs_feedback(p)) return;
  const xcp::XcpHeader& h = p.xcp;
  const IxcpFeedback f = compute_ixcp_departure(state_, shuffle_, pools_, shuffle_pools_, matches(h),
                                                p.wire_bytes(), capped_rtt_s(h.rtt_us), h.cwnd_bytes,
                                                h.feedback_bytes);
  if (!f.lowers) return;
  ++counters_.feedback_lowered;
  // The id follows the paper: only a strictly smaller feedback makes this
  // link the flow's bottleneck (an equal one leaves the earlier hop's id).
  const bool new_bottleneck = f.fb < h.feedback_bytes && (matches(h) || f.fb < 0);
  write_feedback(p, f.fb);
  if (new_bottleneck && h.has_ixcp() && h.next_bottleneck_id != link_id_) {
    xcp::store_next_bottleneck_id(p.xcp_shim(), link_id_);
    p.xcp.next_bottleneck_id = link_id_;
    ++ixcp_counters_.ids_written;
  }
}

void IxcpController::report(nlohmann::json& out) const {
  XcpController::report(out);
  out["ixcp"] = {
      {"link_id", link_id_},
      {"y0", shuffle_.y0},
      {"h", shuffle_.h},
      {"xi_p", shuffle_.xi_p},
      {"xi_n", shuffle_.xi_n},
      {"SA_m", shuffle_.sa},
      {"Ss_m", shuffle_.ss},
      {"R_pos", shuffle_.r_pos},
      {"R_neg", shuffle_.r_neg},
      {"R_pos_left", shuffle_pools_.pos},
      {"R_neg_left", shuffle_pools_.neg},
      {"matching_packets", ixcp_counters_.matching_packets},
      {"matching_bytes", ixcp_counters_.matching_bytes},
      {"non_matching_packets", ixcp_counters_.non_matching_packets},
      {"non_matching_bytes", ixcp_counters_.non_matching_bytes},
      {"no_block", ixcp_counters_.no_block},
      {"ids_written", ixcp_counters_.ids_written},
      {"local_rate", local_rate()},
  };
}

}  // namespace xcprouter
