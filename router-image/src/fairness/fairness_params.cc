#include "fairness/fairness_params.hh"

#include <cmath>
#include <stdexcept>
#include <string>

#include "qdisc/param_reader.hh"

namespace xcprouter {

std::string_view to_string(FairnessUpdate u) {
  return u == FairnessUpdate::kInterval ? "interval" : "tcp_packet";
}

FairnessParams parse_fairness_params(ParamReader& r, FairnessParams k) {
  if (auto v = r.boolean("tcp_fairness")) k.enabled = *v;
  if (auto v = r.number("fairness_zombie_entries", 1, 1'000'000)) {
    if (std::floor(*v) != *v) {
      throw std::invalid_argument(r.field("fairness_zombie_entries") + ": must be an integer in [1, 1000000], got " +
                                  std::to_string(*v));
    }
    k.zombie_entries = static_cast<uint32_t>(*v);
  }
  k.delta = r.number_or("fairness_delta", k.delta, 1e-9, 1.0);
  if (auto v = r.number("fairness_replacement", 0.0, 1.0)) k.replacement = *v;
  k.inspect = r.number_or("fairness_inspect", k.inspect, 1e-6, 1.0);
  k.p_drop_start = r.number_or("fairness_p_drop_start", k.p_drop_start, 1e-9, 1.0);
  k.d_drop = r.number_or("fairness_d_drop", k.d_drop, 0.5, 1.0);
  k.i_drop = r.number_or("fairness_i_drop", k.i_drop, 1.0, 2.0);
  k.threshold = r.number_or("fairness_threshold", k.threshold, 0.0, 2.0);
  k.window_s = r.number_or("fairness_window_s", k.window_s, 0.0, 10.0);
  if (auto v = r.choice("fairness_update", {"tcp_packet", "interval"})) {
    k.update = *v == "interval" ? FairnessUpdate::kInterval : FairnessUpdate::kTcpPacket;
  }
  return k;
}

}  // namespace xcprouter
