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
// The positive spare (phi > 0) is split between the two kinds of traffic:
// the non-matching packets get the share max(y0/y, 1/N) (N = SA/T, the number
// of flows), the matching ones the rest; within each kind it is XCP's equal
// per-flow split (p = xi·r²·s/cwnd over SA_nm = SA − SA_m, resp. SA_m). With
// no flow bottlenecked here the others get it all. The negative spare is
// XCP's, over every packet (IXCP.md, "The spare split").
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
  // The positive spare, split by bytes between the two kinds of traffic.
  double nm_share = 0;  // the non-matching traffic's share of the positive spare
  double xi_p_m = 0;    // matching positive spare scale (p = xi_p_m·r²·s/cwnd)
  double xi_p_nm = 0;   // non-matching positive spare scale (p = xi_p_nm·r²·s/cwnd)
  double r_pos_m = 0;   // the two positive spare pools at the start (bytes/s)
  double r_pos_nm = 0;
};

// Positive spare pools of one interval: one per kind of traffic, so flows
// bottlenecked elsewhere cannot take the share sized for the flows here.
struct SparePools {
  double pos_m = 0, pos_nm = 0, neg = 0;
};

// `port` is the interval XCP computed with γ = 0 (its y, d_new and phi);
// `matching` holds SA/Ss over the packets bottlenecked here.
// `elapsed_s` is the interval T the sums cover (N = SA/T flows).
inline ShuffleState compute_shuffle(const IntervalState& port, double y0, const IntervalSums& matching,
                                    double elapsed_s, double gamma) {
  ShuffleState sh;
  sh.y0 = y0;
  sh.sa = matching.sa;
  sh.ss = matching.ss;
  const double sa_nm = std::max(0.0, port.sa - matching.sa);
  if (sa_nm > 0) {
    // With no flow bottlenecked here the whole positive spare is the others'.
    const double bytes = port.y > 0 ? y0 / port.y : 0.0;
    const double one_flow = port.sa > 0 ? elapsed_s / port.sa : 0.0;
    sh.nm_share = matching.sa <= 0 ? 1.0 : std::clamp(std::max(bytes, one_flow), 0.0, 1.0);
  }
  const double pos = std::max(port.phi, 0.0);
  const double pos_nm = pos * sh.nm_share;
  const double pos_m = pos - pos_nm;
  sh.xi_p_m = matching.sa > 0 ? pos_m / (port.d_new * matching.sa) : 0.0;
  sh.xi_p_nm = sa_nm > 0 ? pos_nm / (port.d_new * sa_nm) : 0.0;
  sh.r_pos_m = pos_m / port.d_new;
  sh.r_pos_nm = pos_nm / port.d_new;
  sh.h = std::max(0.0, gamma * std::max(0.0, port.y - y0) * port.d_new - std::abs(port.phi));
  sh.xi_p = matching.sa > 0 ? sh.h / (port.d_new * matching.sa) : 0.0;
  sh.xi_n = matching.ss > 0 ? sh.h / (port.d_new * matching.ss) : 0.0;
  sh.r_pos = sh.h / port.d_new;
  sh.r_neg = sh.r_pos;
  return sh;
}

// Probability that a congested link claims, with one packet, a flow whose
// bottleneck_id names another link (IXCP.md, "Which hop claims the flow"):
// s/(rtt·local_rate), so that per round trip (cwnd/s packets) the flow is
// claimed with about rate/local_rate claims, rate = cwnd/rtt. A flow as fast
// as the flows bottlenecked here is claimed in every negative interval; one
// held far below them by its own bottleneck only rarely. 1 when no flow is
// bottlenecked here (local_rate 0).
inline double claim_probability(double s_bytes, double r_s, double local_rate) {
  if (local_rate <= 0 || r_s <= 0) return 1.0;
  return std::min(1.0, s_bytes / (r_s * local_rate));
}

// A congested link releases a flow named after it (writes 0, "no id") when
// an upstream hop already limited the flow's feedback below this link's and
// the flow runs under this fraction of the local rate (IXCP.md, "Release of
// a flow held upstream"): the link's shuffle would speed the flow up, so
// something else holds it, and shuffling only here never moves the
// bandwidth the flow lacks at the hop that holds it. Released, the flow
// matches on every link for a round trip, each shuffles toward it and the
// hop giving it least claims it.
constexpr double kReleaseHeldBelowLocalRate = 0.8;

inline bool release_held_upstream(double rate, double local_rate) {
  return local_rate > 0 && rate < kReleaseHeldBelowLocalRate * local_rate;
}

// A congested link claims a flow named after another link when it lowers
// the flow's H_feedback (with negative feedback, or positive feedback below
// a request of at most a packet per packet) and the flow runs at least at
// this fraction of the local rate (IXCP.md, "Claim of a flow as fast
// as the flows here"): in a max-min allocation the flows bottlenecked at a
// link are the fastest there, so a flow this link slows that is as fast as
// its own flows is held here whatever its id says (seed 001: the hop whose
// feedback is smaller becomes the flow's bottleneck). The margin under the
// mean catches such a flow while it is still a little slower than the flows
// already named here.
constexpr double kClaimAtLocalRate = 0.9;

inline bool as_fast_as_local(double rate, double local_rate) {
  return local_rate > 0 && rate >= kClaimAtLocalRate * local_rate;
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
inline IxcpFeedback compute_ixcp_departure(const IntervalState& port, const ShuffleState& sh,
                                           SparePools& spare, Pools& shuffle, bool matching, double s_bytes,
                                           double r_s, double cwnd_bytes, double h_feedback) {
  IxcpFeedback f;
  const double w = r_s * r_s * s_bytes / cwnd_bytes;
  double& spare_pos = matching ? spare.pos_m : spare.pos_nm;
  f.p_spare = std::min((matching ? sh.xi_p_m : sh.xi_p_nm) * w, spare_pos * r_s);
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
  spare_pos = std::max(0.0, spare_pos - f.p_spare / r_s);
  spare.neg = std::max(0.0, spare.neg - f.n_spare / r_s);
  shuffle.pos = std::max(0.0, shuffle.pos - f.p_shuffle / r_s);
  shuffle.neg = std::max(0.0, shuffle.neg - f.n_shuffle / r_s);
  return f;
}

}  // namespace xcprouter
