#include "xcpi/virtual_router.hh"

#include <algorithm>

namespace xcphost {

VirtualRouter::VirtualRouter(xcp::XcpParams params, uint64_t seed) : params_(params), rng_(seed) {
  // Nothing measured before the first timeout: xi = 0 and empty pools, so V
  // gives no positive feedback yet (as the engine's controller).
  state_.d_new = params_.fallback_interval.seconds_f();
  state_.d = state_.d_new;
}

double VirtualRouter::capped_rtt_s(uint32_t rtt_us) const {
  return std::min(static_cast<double>(rtt_us) * 1e-6, params_.rtt_cap.seconds_f());
}

void VirtualRouter::on_arrival(const xcp::XcpHeader& h, double wire_bytes) {
  sums_.y_bytes += wire_bytes;
  if (h.format == xcp::Format::kStandard && h.rtt_us != 0 && h.cwnd_bytes != 0) {
    sums_.add_standard(wire_bytes, capped_rtt_s(h.rtt_us), h.cwnd_bytes);
  }
}

bool VirtualRouter::on_departure(xcp::XcpHeader& h, double wire_bytes) {
  if (h.format != xcp::Format::kStandard) return false;
  if (h.rtt_us == 0 || h.cwnd_bytes == 0) {
    if (h.feedback_bytes <= 0) return false;
    h.feedback_bytes = 0;
    return true;
  }
  const xcp::DepartureFeedback f = xcp::compute_departure(state_, pools_, wire_bytes, capped_rtt_s(h.rtt_us),
                                                          h.cwnd_bytes, h.feedback_bytes);
  if (!f.lowers) return false;
  h.feedback_bytes = xcp::round_feedback(f.fb, rng_.next());
  return true;
}

const xcp::IntervalState& VirtualRouter::on_timeout(double elapsed_s, double queue_bytes) {
  const double y = elapsed_s > 0 ? sums_.y_bytes / elapsed_s : 0.0;
  xcp::TimeoutInput in;
  in.elapsed_s = elapsed_s;
  in.queue_bytes = queue_bytes;
  in.spare_bytes_per_s = spare_.spare(y);
  state_ = xcp::compute_interval(sums_, y, in, params_);
  pools_ = {state_.r_pos, state_.r_neg};  // remainders are discarded (ns-2.35 xcpq.cc)
  sums_ = {};
  ++intervals_;
  return state_;
}

}  // namespace xcphost
