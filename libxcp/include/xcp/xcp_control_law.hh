// The XCP control law of docs/protocol.md §2 as pure functions on plain numbers:
// what is summed per arriving packet, what the control timeout computes, and
// the feedback one departing packet receives. No queue, no clock, no
// packets — the XcpController (hence also the XCP-i virtual routers) and the
// iXCP law compose these, and the test vector checks them directly.
//
// Units: bytes, seconds, bytes/s, all double (round only when writing a
// header field).
#pragma once

#include <algorithm>
#include <cmath>

#include "xcp/xcp_params.hh"

namespace xcp {

// Per-interval sums over arriving packets, reset at every control timeout.
struct IntervalSums {
  double y_bytes = 0;  // every arriving packet: XCP or not, data or ACK
  double sa = 0;       // Σ r·s/H_cwnd    (s)
  double sb = 0;       // Σ r²·s/H_cwnd   (s²)
  double ss = 0;       // Σ s             (bytes)

  // A Standard packet with H_rtt > 0 and H_cwnd > 0 (r already capped).
  void add_standard(double s_bytes, double r_s, double cwnd_bytes) {
    const double w = r_s * s_bytes / cwnd_bytes;
    sa += w;
    sb += w * r_s;
    ss += s_bytes;
  }
};

// Everything one control timeout decides; also what report() shows.
struct IntervalState {
  double y = 0;       // input rate over the elapsed interval (bytes/s)
  double d_new = 0;   // per-flow mean RTT SB/SA, or the fallback (s)
  double d = 0;       // timer period clamp(d_new) (s)
  double spare = 0;   // spare bandwidth S fed to the efficiency controller (bytes/s)
  double q = 0;       // persistent queue used (bytes)
  double phi = 0;     // aggregate feedback (bytes)
  double h = 0;       // shuffled bytes
  double xi_p = 0;    // positive-feedback scale (bytes/s²: p = xi_p·r²·s/cwnd)
  double xi_n = 0;    // negative-feedback scale (1/s: n = xi_n·r·s)
  double r_pos = 0;   // positive pool at the start of the interval (bytes/s)
  double r_neg = 0;   // negative pool at the start of the interval (bytes/s)
  double sa = 0, sb = 0, ss = 0;  // the sums the interval was computed from
};

// Inputs of one control timeout beyond the sums.
struct TimeoutInput {
  double elapsed_s = 0;       // T, time since the previous timeout
  double queue_bytes = 0;     // Q, persistent queue
  // S as a function of y is supplied by the caller (C − y for a link,
  // BW_U for an XCP-i virtual router); see spare_bandwidth.hh.
  double spare_bytes_per_s = 0;
  // XCP-i virtual routers use their router's d instead of their own SB/SA.
  double interval_override_s = 0;  // 0 = compute d_new = SB/SA
};

// Control timeout (docs/protocol.md §2). `y` must already be in `in.spare_bytes_per_s`
// where S depends on it; it is returned in the state for reporting.
inline IntervalState compute_interval(const IntervalSums& sums, double y, const TimeoutInput& in,
                                      const XcpParams& k) {
  IntervalState st;
  st.y = y;
  st.sa = sums.sa;
  st.sb = sums.sb;
  st.ss = sums.ss;
  st.spare = in.spare_bytes_per_s;
  st.q = in.queue_bytes;
  if (in.interval_override_s > 0) {
    st.d_new = in.interval_override_s;
  } else {
    st.d_new = sums.sa > 0 ? sums.sb / sums.sa : k.fallback_interval.seconds_f();
  }
  st.phi = k.alpha * st.d_new * st.spare - k.beta * st.q;
  st.h = std::max(0.0, k.gamma * y * st.d_new - std::abs(st.phi));
  const double pos = st.h + std::max(st.phi, 0.0);
  const double neg = st.h + std::max(-st.phi, 0.0);
  st.xi_p = sums.sa > 0 ? pos / (st.d_new * sums.sa) : 0.0;
  st.xi_n = sums.ss > 0 ? neg / (st.d_new * sums.ss) : 0.0;
  st.r_pos = pos / st.d_new;
  st.r_neg = neg / st.d_new;
  st.d = std::clamp(st.d_new, k.min_interval.seconds_f(), k.max_interval.seconds_f());
  return st;
}

// The pools that departing packets drain during one interval (bytes/s).
struct Pools {
  double pos = 0;
  double neg = 0;
};

struct DepartureFeedback {
  double p = 0, n = 0;  // allocated positive/negative feedback (bytes)
  double fb = 0;        // p − n as computed by this hop (bytes)
  bool lowers = false;  // fb <= H_feedback: this hop writes fb
};

// Feedback for a departing Standard packet with H_rtt > 0 and H_cwnd > 0
// (docs/protocol.md §2), draining `pools`. `h_feedback` is the header's current
// value. The else branch is applied as written (docs/protocol.md §2): when a
// later hop already asked for less, this hop books the difference as negative
// feedback so its pools stay consistent with what the packet really carries.
inline DepartureFeedback compute_departure(const IntervalState& st, Pools& pools, double s_bytes,
                                           double r_s, double cwnd_bytes, double h_feedback) {
  DepartureFeedback f;
  f.p = std::min(st.xi_p * r_s * r_s * s_bytes / cwnd_bytes, pools.pos * r_s);
  f.n = std::min(st.xi_n * r_s * s_bytes, pools.neg * r_s);
  f.fb = f.p - f.n;
  if (f.fb <= h_feedback) {
    f.lowers = true;
  } else {
    f.n = std::min(pools.neg * r_s, f.n + f.fb - h_feedback);
    f.p = h_feedback + f.n;
  }
  pools.pos = std::max(0.0, pools.pos - f.p / r_s);
  pools.neg = std::max(0.0, pools.neg - f.n / r_s);
  return f;
}

}  // namespace xcp

// The engine's code (namespace xcprouter) names these unqualified; they moved
// here so the host stack's receiver-side virtual router shares them.
namespace xcprouter {
using xcp::IntervalSums;
using xcp::IntervalState;
using xcp::TimeoutInput;
using xcp::compute_interval;
using xcp::Pools;
using xcp::DepartureFeedback;
using xcp::compute_departure;
}  // namespace xcprouter
