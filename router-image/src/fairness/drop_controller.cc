#include "fairness/drop_controller.hh"

#include <algorithm>

namespace xcprouter {

void DropController::set_params(const FairnessParams& k) {
  k_ = k;
  if (!active_) p_ = k_.p_drop_start;  // an active controller keeps its p_drop
  p_ = std::clamp(p_, kMinPDrop, 1.0);
}

void DropController::on_interval(const IntervalLoad& load, double bw_xcp) {
  xcp_rate_ = load.xcp_rate;
  const bool run = load.saw_xcp && load.saw_tcp && load.capacity > 0 &&
                   load.input_rate > k_.threshold * load.capacity;
  if (!run) {
    if (active_) ++counters_.resets;
    active_ = false;
    p_ = k_.p_drop_start;  // seed 004 §4.4: reinitialised below γ
    return;
  }
  if (!active_) ++counters_.activations;
  active_ = true;
  if (k_.update == FairnessUpdate::kInterval) step(bw_xcp);
}

void DropController::step(double bw_xcp) {
  if (xcp_rate_ > bw_xcp) {
    p_ = std::max(kMinPDrop, p_ * k_.d_drop);
    ++counters_.decreases;
  } else if (xcp_rate_ < bw_xcp) {
    p_ = std::min(1.0, p_ * k_.i_drop);
    ++counters_.increases;
  }
}

}  // namespace xcprouter
