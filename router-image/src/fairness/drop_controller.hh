// The p_drop controller of the XCP–TCP fairness dropper (seed 004 §4.3–4.4).
//
// Driven from outside with what it needs and nothing else (no clock of its
// own): on_interval() at the end of every control interval with that
// interval's load, on_tcp_packet() for every TCP-class arrival. While active:
//   XCP input rate > BW_XCP → p_drop *= D_drop;  < BW_XCP → p_drop *= I_drop
// once per TCP packet or once per interval (FairnessUpdate). It is active
// after an interval in which both classes sent and the input rate exceeded
// threshold·C; after any other interval it is idle and p_drop is back at its
// start value. p_drop stays in [kMinPDrop, 1].
#pragma once

#include <cstdint>

#include "fairness/fairness_params.hh"

namespace xcprouter {

// What one control interval measured at the port.
struct IntervalLoad {
  double input_rate = 0;  // y, every arrival (bytes/s)
  double capacity = 0;    // C the XCP controller uses (bytes/s)
  double xcp_rate = 0;    // XCP-class arrivals (bytes/s)
  bool saw_xcp = false;   // an XCP-class packet arrived in the interval
  bool saw_tcp = false;   // a TCP-class packet arrived in the interval
};

struct DropControllerCounters {
  uint64_t increases = 0;    // p_drop *= I_drop
  uint64_t decreases = 0;    // p_drop *= D_drop
  uint64_t activations = 0;  // idle → active
  uint64_t resets = 0;       // active → idle (p_drop back to its start)
};

class DropController {
 public:
  // Floor of p_drop: 0.9999 per TCP packet would otherwise underflow to 0
  // within minutes of XCP holding more than its share.
  static constexpr double kMinPDrop = 1e-9;

  explicit DropController(const FairnessParams& k) : k_(k), p_(k.p_drop_start) {}

  void set_params(const FairnessParams& k);
  // End of a control interval; `bw_xcp` = O·N/(N+M) now (bytes/s).
  void on_interval(const IntervalLoad& load, double bw_xcp);
  // A TCP-class arrival (bytes/s as above); updates p_drop when the cadence is
  // per TCP packet and the mechanism is active.
  void on_tcp_packet(double bw_xcp) {
    if (active_ && k_.update == FairnessUpdate::kTcpPacket) step(bw_xcp);
  }
  // Drop this TCP packet? `u` uniform in [0, 1).
  bool drop(double u) const { return active_ && u < p_; }

  bool active() const { return active_; }
  double p_drop() const { return p_; }
  double xcp_rate() const { return xcp_rate_; }
  const DropControllerCounters& counters() const { return counters_; }

 private:
  void step(double bw_xcp);

  FairnessParams k_;
  double p_;
  bool active_ = false;
  double xcp_rate_ = 0;  // of the last interval
  DropControllerCounters counters_;
};

}  // namespace xcprouter
