// How the engine waits for its next piece of work: sleep, or spin.
//
// A sleep costs a wake-up (on the VMs we run on, ~20 us of CPU for the
// context switch and the timer programming) and comes back late by the
// wake-up latency; a spin costs the CPU for as long as it lasts. The policy
// sleeps until `deadline - expected wake-up latency` and spins the rest, so
// events run on time while the CPU spent spinning per event is bounded by
// the measured latency plus `spin_max` (a sleep shorter than `spin_max` is
// not worth its wake-up), never by the traffic.
//
// The latency estimate follows the measured oversleeps: it rises at once to a
// larger sample (a late event costs fidelity) and decays by 1/8 of the gap
// per smaller one (a spin too long costs only CPU).
//
// Arrivals: frames carry kernel receive stamps and every emulated output
// leaves through a link with at least `min_link_delay` of propagation delay,
// so reading the receive rings up to `rx_defer(min_link_delay)` after a frame
// arrived changes nothing the emulation emits: while traffic flows the engine
// reads the rings when it wakes for an event (or at that bound) instead of
// being woken by every frame.
#pragma once

#include "xcp/units.hh"

namespace xcprouter {

struct WaitPlan {
  bool spin = false;                // poll now, do not sleep
  xcp::Timestamp wake_at{};         // when sleeping: wake-up to ask the kernel for
};

class WaitPolicy {
 public:
  // Longest read deferral of arrivals: bounds the receive ring's fill (2048
  // slots per port: 8 Mpps for 250 us) and the reply time to control traffic.
  static constexpr xcp::Duration kMaxRxDefer = xcp::Duration::microseconds(250);
  // Below this, deferring reads saves too few wake-ups to be worth the lag.
  static constexpr xcp::Duration kMinRxDefer = xcp::Duration::microseconds(50);

  // spin_max: bound on the spin before one event (config spin_us); zero =
  // always sleep, exactly to the deadline.
  explicit WaitPolicy(xcp::Duration spin_max);

  WaitPlan plan(xcp::Timestamp now, xcp::Timestamp deadline) const;
  // A sleep asked to end at `asked` ended at `woke`.
  void record_wake(xcp::Timestamp asked, xcp::Timestamp woke);
  xcp::Duration wake_latency() const { return latency_; }
  xcp::Duration spin_max() const { return spin_max_; }
  // How long arrivals may wait unread (zero: wake on every arrival).
  xcp::Duration rx_defer(xcp::Duration min_link_delay) const;

 private:
  xcp::Duration spin_max_;
  xcp::Duration latency_ = xcp::Duration::zero();
};

}  // namespace xcprouter
