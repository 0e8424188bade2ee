// The XCP control law of one output port (docs/protocol.md §2) without a queue:
// per-interval sums over arriving packets, the control timeout, and the
// per-packet feedback written into departing Standard packets.
//
// The owner drives it: on_arrival() for every packet that reaches the port
// (dropped ones included — y is the *input* rate), on_departure() for every
// packet leaving, on_timeout() every state().d seconds with the elapsed time
// and the persistent queue. Time never enters otherwise, so tests and the
// XCP-i virtual routers (which share their router's d and Q) drive it freely.
//
// iXCP (docs/protocol.md §5, src/ixcp/ixcp_controller.hh) is the one subclass: it
// changes the law behind the same four calls, so the XCP queue drives either.
#pragma once

#include <cstdint>
#include <memory>

#include <nlohmann/json.hpp>

#include "core/packet.hh"
#include "xcp/spare_bandwidth.hh"
#include "xcp/uniform_rng.hh"
#include "xcp/xcp_control_law.hh"
#include "xcp/xcp_params.hh"

namespace xcprouter {

struct XcpCounters {
  uint64_t intervals = 0;         // control timeouts run
  uint64_t arrivals = 0;          // packets counted in y
  uint64_t summed = 0;            // Standard arrivals that entered SA/SB/Ss
  uint64_t non_xcp = 0;           // arrivals without a valid shim
  uint64_t minimal = 0;           // Minimal (ACK) and Control arrivals: never modified
  uint64_t feedback_packets = 0;  // Standard departures given feedback
  uint64_t feedback_lowered = 0;  // ... of which this hop wrote H_feedback
  uint64_t no_rtt = 0;            // Standard departures with H_rtt = 0 or H_cwnd = 0
};

class XcpController {
 public:
  XcpController(XcpParams params, std::unique_ptr<SpareBandwidth> spare, uint64_t seed);
  virtual ~XcpController() = default;
  XcpController(XcpController&&) = default;
  XcpController& operator=(XcpController&&) = default;

  virtual void on_arrival(const Packet& p) { count_arrival(p); }

  // Writes this hop's feedback into a departing Standard packet's shim (and
  // p.xcp); leaves every other packet untouched.
  virtual void on_departure(Packet& p);

  // Control timeout: `elapsed_s` = T since the previous one, `queue_bytes` =
  // persistent queue Q. `interval_override_s` > 0 replaces SB/SA (XCP-i).
  // Discards what is left of the pools, resets the sums.
  const IntervalState& on_timeout(double elapsed_s, double queue_bytes, double interval_override_s = 0);

  const IntervalState& state() const { return state_; }
  const Pools& pools() const { return pools_; }
  const IntervalSums& sums() const { return sums_; }
  const XcpCounters& counters() const { return counters_; }
  XcpParams& params() { return params_; }
  const XcpParams& params() const { return params_; }
  SpareBandwidth& spare() { return *spare_; }

  // Per-interval state for the control socket (names in QUEUES.md).
  virtual void report(nlohmann::json& out) const;

 protected:
  // docs/protocol.md §2 sums of one arrival; true when it entered SA/SB/Ss.
  bool count_arrival(const Packet& p) {
    ++counters_.arrivals;
    sums_.y_bytes += p.wire_bytes();
    if (!p.has_xcp()) {
      ++counters_.non_xcp;
      return false;
    }
    const xcp::XcpHeader& h = p.xcp;
    if (h.format != xcp::Format::kStandard) {
      ++counters_.minimal;
      return false;
    }
    if (h.rtt_us == 0 || h.cwnd_bytes == 0) return false;
    ++counters_.summed;
    sums_.add_standard(p.wire_bytes(), capped_rtt_s(h.rtt_us), h.cwnd_bytes);
    return true;
  }
  // The control timeout's law over this interval's sums (the iXCP law
  // overrides it and resets its own sums here); pools start from r_pos/r_neg.
  virtual IntervalState interval_state(double y, const TimeoutInput& in) {
    return compute_interval(sums_, y, in, params_);
  }
  // Departure of a Standard packet: false (and H_feedback capped at 0) when
  // it has no H_rtt or H_cwnd, true when it needs this hop's feedback.
  bool needs_feedback(Packet& p);
  double capped_rtt_s(uint32_t rtt_us) const {
    const double r = static_cast<double>(rtt_us) * 1e-6;
    return r < rtt_cap_s_ ? r : rtt_cap_s_;
  }
  void write_feedback(Packet& p, double fb_bytes);

  XcpParams params_;
  double rtt_cap_s_;
  std::unique_ptr<SpareBandwidth> spare_;
  UniformRng rng_;
  IntervalSums sums_;
  IntervalState state_;
  Pools pools_;
  XcpCounters counters_;
};

}  // namespace xcprouter
