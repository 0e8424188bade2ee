#include "ixcp/ixcp_controller.hh"

#include <climits>
#include <stdexcept>

#include "xcp/header.hh"

namespace xcprouter {

IxcpController::IxcpController(XcpParams params, std::unique_ptr<SpareBandwidth> spare, uint64_t seed,
                               uint32_t link_id)
    : XcpController(params, std::move(spare), seed),
      link_id_(link_id),
      claim_rng_(seed ^ 0x1c9a5f3e7b2d4681ULL) {
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
  shuffle_ = compute_shuffle(st, y0, matching_, in.elapsed_s, params_.gamma);
  shuffle_pools_ = {shuffle_.r_pos, shuffle_.r_neg};
  spare_pools_ = {shuffle_.r_pos_m, shuffle_.r_pos_nm, st.r_neg};
  st.h = shuffle_.h;  // reported h is the shuffled bytes, as for XCP
  last_matching_ = matching_;
  last_elapsed_s_ = in.elapsed_s;
  y0_bytes_ = 0;
  matching_ = {};
  return st;
}

void IxcpController::on_departure(Packet& p) {
  if (!needs_feedback(p)) return;
  const xcp::XcpHeader& h = p.xcp;
  const bool m = matches(h);  // bottlenecked here: decided once per departure
  const IxcpFeedback f = compute_ixcp_departure(state_, shuffle_, spare_pools_, shuffle_pools_, m,
                                                p.wire_bytes(), capped_rtt_s(h.rtt_us), h.cwnd_bytes,
                                                h.feedback_bytes);
  if (!f.lowers) {
    if (!m) return;
    ++ixcp_counters_.m_not_lowered;
    // Named here, but an upstream hop gives the flow less than this link
    // would and the flow runs well under the local rate: released (IXCP.md,
    // "Release of a flow held upstream"). A flow an upstream hop renamed,
    // and ports with spare (named nobody), are left alone.
    if (h.has_ixcp() && h.bottleneck_id == link_id_ && h.next_bottleneck_id == link_id_ &&
        congested() && release_held_upstream(h.cwnd_bytes / capped_rtt_s(h.rtt_us), local_rate())) {
      xcp::store_next_bottleneck_id(p.xcp_shim(), 0);
      p.xcp.next_bottleneck_id = 0;
      ++ixcp_counters_.ids_released;
      ++ixcp_counters_.held_released;
    }
    return;
  }
  ++counters_.feedback_lowered;
  if (m) {
    ixcp_counters_.m_p_spare += f.p_spare;
    ixcp_counters_.m_n_spare += f.n_spare;
    ixcp_counters_.m_p_shuffle += f.p_shuffle;
    ixcp_counters_.m_n_shuffle += f.n_shuffle;
  }
  // Decided on the header as it arrived (H_feedback before this hop's write).
  const uint32_t next = h.has_ixcp() ? next_bottleneck_id(h, f.fb, p.wire_bytes()) : 0;
  write_feedback(p, f.fb);
  if (!h.has_ixcp()) return;
  if (next != h.next_bottleneck_id) {
    xcp::store_next_bottleneck_id(p.xcp_shim(), next);
    p.xcp.next_bottleneck_id = next;
    ++(next == link_id_ ? ixcp_counters_.ids_written : ixcp_counters_.ids_released);
  }
}

uint32_t IxcpController::next_bottleneck_id(const xcp::XcpHeader& h, double fb, double s_bytes) {
  // The id follows the paper: only a strictly smaller feedback makes this
  // link the flow's bottleneck (an equal one leaves the earlier hop's id).
  if (fb >= h.feedback_bytes) return h.next_bottleneck_id;
  if (matches(h)) {
    // A link at under half its capacity is nobody's bottleneck and never
    // names a flow, whatever its feedback (in its first interval it has no
    // allocation yet and gives 0, which can be the smallest): a flow named
    // here (the sender's access link, its starting id) is released to
    // "no id" (0), which every link treats as its own, so the flow shuffles
    // wherever it goes until its real bottleneck claims it; any other id
    // is left as it came (IXCP.md).
    if (!congested()) {
      return h.bottleneck_id == link_id_ || h.next_bottleneck_id == link_id_ ? 0 : h.next_bottleneck_id;
    }
    return link_id_;
  }
  // A flow named elsewhere that runs as fast as the flows named here (0.9
  // of the local rate) is claimed by a congested link that lowers it: with
  // negative feedback always, with positive feedback when the request it
  // carries is a congested hop's share (at most a packet per packet, as for
  // the clipped claim below: lowering the sender's unlimited request or an
  // access port's spare says nothing). Its packets named elsewhere would
  // otherwise keep that name: each ACK names the next packet after the one
  // it acknowledges, so a window's packets keep the ids they carried (IXCP.md,
  // "Claim of a flow as fast as the flows here").
  const double r_s = capped_rtt_s(h.rtt_us);
  if (congested() && (fb < 0 || h.feedback_bytes <= s_bytes) &&
      as_fast_as_local(h.cwnd_bytes / r_s, local_rate())) {
    ++ixcp_counters_.fast_claims;
    return link_id_;
  }
  // A slower flow named elsewhere: claimed when this link asks it to slow
  // down (a link with spare bandwidth is nobody's bottleneck), and then with
  // probability s/(rtt·local_rate), about rate/local_rate per round trip
  // (ixcp_law.hh); with positive feedback only when this link clips a slow
  // flow it would speed up as its own (claims_clipped).
  if (fb >= 0) return claims_clipped(h, fb, s_bytes) ? link_id_ : h.next_bottleneck_id;
  if (claim_rng_.next() < claim_probability(s_bytes, r_s, local_rate())) return link_id_;
  ++ixcp_counters_.claims_declined;
  return h.next_bottleneck_id;
}

bool IxcpController::claims_clipped(const xcp::XcpHeader& h, double fb, double s_bytes) {
  // A flow named elsewhere that this congested link slows below what the
  // hops before it gave, with spare-only feedback, where as a flow of its own
  // it would get more than it carries (the shuffle toward a slow flow) and
  // it runs under 0.8 of the local rate: this link holds it only because it
  // does not count it as its own (Fig. 6, a flow named after the first of
  // several full links; IXCP.md, "Claim of a flow clipped here"). The
  // matching feedback is computed on copies of the pools (nothing drained).
  if (!congested()) return false;
  // A request above one packet per packet asks to more than double the
  // window in a round trip: the spare of a port far from full (an access
  // port gives α·(C − y)·d·s/W per packet, W the windows it carries, the same
  // at any n), not the share of a congested hop that holds the flow; such a
  // flow is left to the hops after (Low's long flows at the 155 link:
  // 31 570 claims at n = 256 without this, 27 with it; IXCP.md).
  if (h.feedback_bytes > s_bytes) return false;
  const double r_s = capped_rtt_s(h.rtt_us);
  const double rate = h.cwnd_bytes / r_s;
  if (!release_held_upstream(rate, local_rate())) return false;
  ++ixcp_counters_.clip_tested;
  // The interval as it would have been with the flow counted as matching:
  // its bytes out of y0, one flow more in SA_m (a flow adds T per
  // interval) and its bytes in Ss_m. Without it the flow, absent from the
  // sums the scales were sized with, is computed to take a whole interval's
  // shuffle when it is the only other flow (IXCP.md, "Why claims cost").
  IntervalSums m = last_matching_;
  const double t = last_elapsed_s_;
  m.sa += t;
  m.sb += t * r_s;
  m.ss += rate * t;
  const ShuffleState sh = compute_shuffle(state_, std::max(0.0, shuffle_.y0 - rate), m, t, params_.gamma);
  SparePools spare = spare_pools_;
  spare.pos_m += std::max(0.0, sh.r_pos_m - shuffle_.r_pos_m);
  Pools shuffle = shuffle_pools_;
  shuffle.pos += std::max(0.0, sh.r_pos - shuffle_.r_pos);
  shuffle.neg += std::max(0.0, sh.r_neg - shuffle_.r_neg);
  const double as_matching =
      compute_ixcp_departure(state_, sh, spare, shuffle, true, s_bytes, r_s, h.cwnd_bytes, INT32_MAX).fb;
  if (as_matching <= h.feedback_bytes) return false;
  IxcpCounters& c = ixcp_counters_;
  if (h.flags & xcp::flags::kAppLimited) ++c.clipped_app_limited;
  if (fb == 0) ++c.clipped_fb_zero;
  c.clipped_h_sum += h.feedback_bytes;
  c.clipped_as_matching_sum += as_matching;
  c.clipped_rate_ratio_sum += rate / local_rate();
  ++c.clipped_claims;
  return true;
}

void IxcpController::report(nlohmann::json& out) const {
  XcpController::report(out);
  // The spare pools this controller drains are its own (XCP's stay full).
  out["R_pos_left"] = spare_pools_.pos_m + spare_pools_.pos_nm;
  out["R_neg_left"] = spare_pools_.neg;
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
      {"nm_share", shuffle_.nm_share},
      {"xi_p_m", shuffle_.xi_p_m},
      {"xi_p_nm", shuffle_.xi_p_nm},
      {"R_pos_m", shuffle_.r_pos_m},
      {"R_pos_nm", shuffle_.r_pos_nm},
      {"matching_packets", ixcp_counters_.matching_packets},
      {"matching_bytes", ixcp_counters_.matching_bytes},
      {"non_matching_packets", ixcp_counters_.non_matching_packets},
      {"non_matching_bytes", ixcp_counters_.non_matching_bytes},
      {"no_block", ixcp_counters_.no_block},
      {"ids_written", ixcp_counters_.ids_written},
      {"claims_declined", ixcp_counters_.claims_declined},
      {"ids_released", ixcp_counters_.ids_released},
      {"held_released", ixcp_counters_.held_released},
      {"clipped_claims", ixcp_counters_.clipped_claims},
      {"fast_claims", ixcp_counters_.fast_claims},
      {"clip_tested", ixcp_counters_.clip_tested},
      {"clipped_app_limited", ixcp_counters_.clipped_app_limited},
      {"clipped_fb_zero", ixcp_counters_.clipped_fb_zero},
      {"clipped_h_sum", ixcp_counters_.clipped_h_sum},
      {"clipped_as_matching_sum", ixcp_counters_.clipped_as_matching_sum},
      {"clipped_rate_ratio_sum", ixcp_counters_.clipped_rate_ratio_sum},
      {"local_rate", local_rate()},
      {"m_p_spare", ixcp_counters_.m_p_spare},
      {"m_n_spare", ixcp_counters_.m_n_spare},
      {"m_p_shuffle", ixcp_counters_.m_p_shuffle},
      {"m_n_shuffle", ixcp_counters_.m_n_shuffle},
      {"m_not_lowered", ixcp_counters_.m_not_lowered},
  };
}

}  // namespace xcprouter
