#include "xcp/xcp_controller.hh"

#include <algorithm>
#include <stdexcept>

#include "xcp/header.hh"

namespace xcprouter {

XcpController::XcpController(XcpParams params, std::unique_ptr<SpareBandwidth> spare, uint64_t seed)
    : params_(params), rtt_cap_s_(params.rtt_cap.seconds_f()), spare_(std::move(spare)), rng_(seed) {
  if (!spare_) throw std::invalid_argument("XcpController: spare-bandwidth source is required");
  // Until the first timeout there is no allocation: xi = 0, empty pools, so
  // the first interval gives no positive feedback (it has nothing measured).
  state_.d_new = params_.fallback_interval.seconds_f();
  state_.d = state_.d_new;
}

void XcpController::write_feedback(Packet& p, double fb_bytes) {
  const int32_t v = xcp::round_feedback(fb_bytes, rng_.next());
  xcp::store_feedback(p.xcp_shim(), v);
  p.xcp.feedback_bytes = v;
}

bool XcpController::needs_feedback(Packet& p) {
  if (!p.has_xcp() || p.xcp.format != xcp::Format::kStandard) return false;
  const xcp::XcpHeader& h = p.xcp;
  if (h.rtt_us == 0 || h.cwnd_bytes == 0) {
    // No RTT sample or window yet: this hop cannot size feedback, but it must
    // not let an unlimited request through either (docs/protocol.md §2).
    ++counters_.no_rtt;
    if (h.feedback_bytes > 0) {
      xcp::store_feedback(p.xcp_shim(), 0);
      p.xcp.feedback_bytes = 0;
    }
    return false;
  }
  ++counters_.feedback_packets;
  return true;
}

void XcpController::on_departure(Packet& p) {
  if (!needs_feedback(p)) return;
  const xcp::XcpHeader& h = p.xcp;
  const DepartureFeedback f = compute_departure(state_, pools_, p.wire_bytes(), capped_rtt_s(h.rtt_us),
                                                h.cwnd_bytes, h.feedback_bytes);
  if (f.lowers) {
    ++counters_.feedback_lowered;
    write_feedback(p, f.fb);
  }
}

const IntervalState& XcpController::on_timeout(double elapsed_s, double queue_bytes,
                                               double interval_override_s) {
  // T can be 0 only if the owner fires twice at one instant; y is then
  // unmeasurable and taken as 0 rather than dividing by zero.
  const double y = elapsed_s > 0 ? sums_.y_bytes / elapsed_s : 0.0;
  TimeoutInput in;
  in.elapsed_s = elapsed_s;
  in.queue_bytes = queue_bytes;
  in.spare_bytes_per_s = spare_->spare(y);
  in.interval_override_s = interval_override_s;
  rtt_cap_s_ = params_.rtt_cap.seconds_f();
  state_ = interval_state(y, in);
  // Pools do not carry over: the remainder of the last interval is discarded
  // (ns-2.35 xcpq.cc), the new interval starts with full pools.
  pools_ = {state_.r_pos, state_.r_neg};
  sums_ = {};
  ++counters_.intervals;
  return state_;
}

void XcpController::report(nlohmann::json& out) const {
  out["d"] = state_.d;
  out["d_new"] = state_.d_new;
  out["phi"] = state_.phi;
  out["h"] = state_.h;
  out["y"] = state_.y;
  out["S"] = state_.spare;
  out["Q"] = state_.q;
  out["xi_p"] = state_.xi_p;
  out["xi_n"] = state_.xi_n;
  out["R_pos"] = state_.r_pos;
  out["R_neg"] = state_.r_neg;
  out["R_pos_left"] = pools_.pos;
  out["R_neg_left"] = pools_.neg;
  out["SA"] = state_.sa;
  out["SB"] = state_.sb;
  out["Ss"] = state_.ss;
  out["alpha"] = params_.alpha;
  out["beta"] = params_.beta;
  out["gamma"] = params_.gamma;
  out["intervals"] = counters_.intervals;
  out["arrivals"] = counters_.arrivals;
  out["summed"] = counters_.summed;
  out["non_xcp"] = counters_.non_xcp;
  out["minimal"] = counters_.minimal;
  out["feedback_packets"] = counters_.feedback_packets;
  out["feedback_lowered"] = counters_.feedback_lowered;
  out["no_rtt"] = counters_.no_rtt;
}

}  // namespace xcprouter
