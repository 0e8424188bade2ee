#include "fairness/fairness_params.hh"

#include <cmath>
#include <stdexcept>
#include <string>

#include "contract_bounds.hh"
#include "qdisc/param_reader.hh"

namespace xcprouter {

std::string_view to_string(FairnessUpdate u) {
  return u == FairnessUpdate::kInterval ? "interval" : "tcp_packet";
}

FairnessParams parse_fairness_params(ParamReader& r, FairnessParams k) {
  if (auto v = r.boolean("tcp_fairness")) k.enabled = *v;
  if (auto v = r.number("fairness_zombie_entries", bounds::kFairnessZombieEntries)) {
    k.zombie_entries = static_cast<uint32_t>(*v);
  }
  k.delta = r.number_or("fairness_delta", k.delta, bounds::kFairnessDelta);
  if (auto v = r.number("fairness_replacement", bounds::kFairnessReplacement)) k.replacement = *v;
  k.inspect = r.number_or("fairness_inspect", k.inspect, bounds::kFairnessInspect);
  k.p_drop_start = r.number_or("fairness_p_drop_start", k.p_drop_start, bounds::kFairnessPDropStart);
  k.d_drop = r.number_or("fairness_d_drop", k.d_drop, bounds::kFairnessDDrop);
  k.i_drop = r.number_or("fairness_i_drop", k.i_drop, bounds::kFairnessIDrop);
  k.threshold = r.number_or("fairness_threshold", k.threshold, bounds::kFairnessThreshold);
  k.window_s = r.number_or("fairness_window_s", k.window_s, bounds::kFairnessWindowS);
  if (auto v = r.choice("fairness_update", {"tcp_packet", "interval"})) {
    k.update = *v == "interval" ? FairnessUpdate::kInterval : FairnessUpdate::kTcpPacket;
  }
  return k;
}

}  // namespace xcprouter
