// The zombie estimator's hit probability P (seed 004 eq. 5, SRED):
// P ← (1 − δ)·P + δ·Hit per probe, and 1/P flows. One per class.
//
// P starts at 1 ("one flow until the table says otherwise"): SRED starts at
// 0, whose 1/P is infinite until the first hits; a class that just appeared
// has at least one flow, and 1 makes BW_XCP start from a finite share.
#pragma once

namespace xcprouter {

class HitRate {
 public:
  explicit HitRate(double delta) : delta_(delta) {}

  void add(bool hit) { p_ = (1.0 - delta_) * p_ + (hit ? delta_ : 0.0); }
  void set_delta(double d) { delta_ = d; }
  void reset() { p_ = 1.0; }

  double p() const { return p_; }
  // Estimated number of active flows of the class, ≥ 1.
  double flows() const { return p_ > 0 ? 1.0 / p_ : 0.0; }

 private:
  double delta_;
  double p_ = 1.0;
};

}  // namespace xcprouter
