// Where the efficiency controller's spare bandwidth S comes from
// (phi = α·d·S − β·Q). Pluggable so the same controller serves
//  - a router output port: S = C − y, with C the drain rate of the queue
//    (or an experiment's deliberately wrong capacity override), and
//  - an XCP-i virtual router V(U) (PROTOCOL.md §4): S = BW_U, the estimated
//    available bandwidth across the non-XCP cloud, independent of y.
#pragma once

namespace xcprouter {

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

class EstimatedSpareBandwidth final : public SpareBandwidth {
 public:
  double spare(double /*y*/) const override { return bw_; }
  void set_estimate(double bw_bytes_per_s) { bw_ = bw_bytes_per_s; }
  double estimate() const { return bw_; }

 private:
  double bw_ = 0;
};

}  // namespace xcprouter
