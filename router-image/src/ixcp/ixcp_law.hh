// The iXCP control law (docs/protocol.md §5, seed 001 eq. 3) as pure functions,
// built on XCP's (xcp_control_law.hh). The port's interval is XCP's with
// γ = 0 — phi, d and the spare-bandwidth pools over every packet — and a
// second, separate set of shuffle pools sized from the traffic bottlenecked
// here only:
//
//   h     = max(0, γ·(y − y0)·d_new − |phi|)        (bytes)
//   xi_p' = h / (d_new·SA_m),  xi_n' = h / (d_new·Ss_m)
//   R_pos' = R_neg' = h / d_new                      (bytes/s)
//
// y0 is the input rate of packets whose bottleneck_id names another link;
// SA_m, Ss_m are XCP's sums over the matching packets. A matching packet gets
// spare-bandwidth plus shuffled feedback, a non-matching one spare-bandwidth
// feedback only. Why the pools are separate: router-image/IXCP.md.
//
// Units: bytes, seconds, bytes/s, all double.
#pragma once

#include <algorithm>
#include <cmath>

#include "xcp/xcp_control_law.hh"

namespace xcprouter {

// The shuffling half of one iXCP control interval.
struct ShuffleState {
  double y0 = 0;     // input rate of non-matching packets (bytes/s)
  double h = 0;      // shuffled bytes among the flows bottlenecked here
  double xi_p = 0;   // positive shuffle scale (p' = xi_p·r²·s/cwnd)
  double xi_n = 0;   // negative shuffle scale (n' = xi_n·r·s)
  double r_pos = 0;  // shuffle pools at the start of the interval (bytes/s)
  double r_neg = 0;
  double sa = 0, ss = 0;  // the matching sums it was computed from
};

// `port` is the interval XCP computed with γ = 0 (its y, d_new and phi);
// `matching` holds SA/Ss over the packets bottlenecked here.
inline ShuffleState compute_shuffle(const IntervalState& port, double y0, const IntervalSums& matching,
                                    double gamma) {
  ShuffleState sh;
  sh.y0 = y0;
  sh.sa = matching.sa;
  sh.ss = matching.ss;
  sh.h = std::max(0.0, gamma * std::max(0.0, port.y - y0) * port.d_new - std::abs(port.phi));
  sh.xi_p = matching.sa > 0 ? sh.h / (port.d_new * matching.sa) : 0.0;
  sh.xi_n = matching.ss > 0 ? sh.h / (port.d_new * matching.ss) : 0.0;
  sh.r_pos = sh.h / port.d_new;
  sh.r_neg = sh.r_pos;
  return sh;
}

struct IxcpFeedback {
  double p_spare = 0, n_spare = 0;      // from the efficiency controller's pools (bytes)
  double p_shuffle = 0, n_shuffle = 0;  // from the shuffle pools, matching packets only (bytes)
  double fb = 0;                        // this hop's p − n (bytes)
  bool lowers = false;                  // fb <= H_feedback: this hop writes fb
  double p() const { return p_spare + p_shuffle; }
  double n() const { return n_spare + n_shuffle; }
};

// Feedback for a departing Standard packet with H_rtt > 0 and H_cwnd > 0,
// draining `spare` always and `shuffle` only when `matching`. The else branch
// is XCP's (docs/protocol.md §2) over both pool sets: the packet carries
// H_feedback, the extra negative feedback is booked against the spare pool
// first, then the shuffle pool; the positive part shrinks to H + n, taken
// off the shuffled share first (an upstream hop already limited this packet
// more than our shuffling would).
inline IxcpFeedback compute_ixcp_departure(const IntervalState& port, const ShuffleState& sh, Pools& spare,
                                           Pools& shuffle, bool matching, double s_bytes, double r_s,
                                           double cwnd_bytes, double h_feedback) {
  IxcpFeedback f;
  const double w = r_s * r_s * s_bytes / cwnd_bytes;
  f.p_spare = std::min(port.xi_p * w, spare.pos * r_s);
  f.n_spare = std::min(port.xi_n * r_s * s_bytes, spare.neg * r_s);
  if (matching) {
    f.p_shuffle = std::min(sh.xi_p * w, shuffle.pos * r_s);
    f.n_shuffle = std::min(sh.xi_n * r_s * s_bytes, shuffle.neg * r_s);
  }
  f.fb = f.p() - f.n();
  if (f.fb <= h_feedback) {
    f.lowers = true;
  } else {
    double extra = f.fb - h_feedback;
    const double add_spare = std::min(extra, spare.neg * r_s - f.n_spare);
    f.n_spare += add_spare;
    extra -= add_spare;
    if (matching) f.n_shuffle += std::min(extra, shuffle.neg * r_s - f.n_shuffle);
    const double cut = f.p() - (h_feedback + f.n());
    const double cut_shuffle = std::min(cut, f.p_shuffle);
    f.p_shuffle -= cut_shuffle;
    f.p_spare -= cut - cut_shuffle;
  }
  spare.pos = std::max(0.0, spare.pos - f.p_spare / r_s);
  spare.neg = std::max(0.0, spare.neg - f.n_spare / r_s);
  shuffle.pos = std::max(0.0, shuffle.pos - f.p_shuffle / r_s);
  shuffle.neg = std::max(0.0, shuffle.neg - f.n_shuffle / r_s);
  return f;
}

}  // namespace xcprouter
