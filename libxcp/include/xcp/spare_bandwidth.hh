// Where the efficiency controller's spare bandwidth S comes from
// (phi = α·d·S − β·Q). Pluggable so the same controller serves
//  - a router output port: S = C − y, with C the drain rate of the queue
//    (or an experiment's deliberately wrong capacity override), and
//  - an XCP-i virtual router V(U) (docs/protocol.md §4): S = BW_U, the estimated
//    available bandwidth across the non-XCP cloud, independent of y.
#pragma once

namespace xcp {

class SpareBandwidth {
 public:
  virtual ~SpareBandwidth() = default;
  // S in bytes/s given the measured input rate y (bytes/s).
  virtual double spare(double y_bytes_per_s) const = 0;
};

class LinkSpareBandwidth final : public SpareBandwidth {
 public:
  explicit LinkSpareBandwidth(double capacity_bytes_per_s = 0) : c_(capacity_bytes_per_s) {}
  double spare(double y) const override { return c_ - y; }
  void set_capacity(double c_bytes_per_s) { c_ = c_bytes_per_s; }
  double capacity() const { return c_; }

 private:
  double c_;
};

// Two ways an XCP-i estimate becomes S:
//  - set_estimate(BW): S = BW_U, the paper's eq. (1), right when BW_U is
//    fresh at every control interval (the oracle, as seed 000's ns-2 model);
//  - set_capacity_for_upstream(C_U): S = C_U − y, where C_U is the cloud's
//    capacity left by cross traffic (per chirp: the measured available
//    bandwidth A plus U's own rate while that chirp crossed, averaged over
//    the estimator's window) and y V's input this interval.
//    A probing estimator reports every few hundred ms; using its A as S for
//    every interval in between hands the same spare bandwidth out again and
//    again (the flow overshoots until the next estimate). Tracking U's own
//    rate locally keeps the control loop at XCP's interval and leaves only
//    the cross traffic to the slow estimate.
class EstimatedSpareBandwidth final : public SpareBandwidth {
 public:
  double spare(double y) const override { return tracking_ ? capacity_for_u_ - y : bw_; }
  void set_estimate(double bw_bytes_per_s) {
    bw_ = bw_bytes_per_s;
    tracking_ = false;
  }
  void set_capacity_for_upstream(double c_bytes_per_s) {
    capacity_for_u_ = c_bytes_per_s;
    tracking_ = true;
  }
  double estimate() const { return bw_; }
  bool tracking() const { return tracking_; }
  double capacity_for_upstream() const { return capacity_for_u_; }

 private:
  double bw_ = 0;
  double capacity_for_u_ = 0;
  bool tracking_ = false;
};

}  // namespace xcp

// The engine's code (namespace xcprouter) names these unqualified; they moved
// here so the host stack's receiver-side virtual router shares them.
namespace xcprouter {
using xcp::SpareBandwidth;
using xcp::LinkSpareBandwidth;
using xcp::EstimatedSpareBandwidth;
}  // namespace xcprouter
