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
//
// CPU budget: a SCHED_FIFO engine that uses more than the kernel's real-time
// budget (sched_rt_runtime_us per sched_rt_period_us, 0.95 of 1 s by default) is
// stopped by the kernel for the rest of the period: 50 ms with no event run and no
// ring read (measured at 100 % of a 1 Gb/s link: deliveries 44-52 ms late,
// thousands of frames lost to full rings). The spin is the engine's elective CPU.
// A token bucket follows the engine's own CPU: it fills at `cpu_cap` of the wall
// time, up to kBudgetBurst, and the CPU used drains it; while it is empty the
// engine does not spin and sleeps at least kBudgetMinSleep per turn, serving the
// events due by then together (late by about that much, not by 50 ms). Over any
// interval the engine then uses at most cpu_cap x wall + kBudgetBurst (+ one
// window), under the kernel's budget; a load that stays under the cap on
// average (bursts of spinning included) never meets the bucket's bottom.
#pragma once

#include <cstdint>

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

  // CPU accounting window for the budget: short against the kernel's 1 s
  // real-time period, long enough that sampling the CPU clock (a syscall)
  // stays rare.
  static constexpr xcp::Duration kBudgetWindow = xcp::Duration::milliseconds(10);
  // The bucket's depth: with the engine's cap 0.05 under the kernel's budget
  // (engine.cc), cap x 1 s + 40 ms + one window of overshoot stays under the
  // kernel's 0.95 s per 1 s period.
  static constexpr xcp::Duration kBudgetBurst = xcp::Duration::milliseconds(40);
  // Over budget, the shortest sleep per turn. At 100 % of a 1 Gb/s link (a
  // departure every 12 us) one wake-up then serves ~5 departures, and a wake-up
  // costs 13-18 us of CPU on the VMs measured (xcp-wake-cost): the engine's CPU
  // falls to ~0.7 core while those events run at most ~50 us + the wake-up
  // latency late (bench_engine_cpu, 2026-11-27).
  static constexpr xcp::Duration kBudgetMinSleep = xcp::Duration::microseconds(50);
  // Smallest cap accepted: below it the engine could not keep up with a busy link.
  static constexpr double kMinCpuCap = 0.5;

  // spin_max: bound on the spin before one event (config spin_us); zero =
  // always sleep, exactly to the deadline. cpu_cap: fraction of a core above
  // which the engine stops spinning (1.0 = no budget), kMinCpuCap..1.0, else
  // std::invalid_argument.
  explicit WaitPolicy(xcp::Duration spin_max, double cpu_cap = 1.0);

  WaitPlan plan(xcp::Timestamp now, xcp::Timestamp deadline) const;
  // A sleep asked to end at `asked` ended at `woke`.
  void record_wake(xcp::Timestamp asked, xcp::Timestamp woke);
  xcp::Duration wake_latency() const { return latency_; }
  xcp::Duration spin_max() const { return spin_max_; }
  // How long arrivals may wait unread (zero: wake on every arrival).
  xcp::Duration rx_defer(xcp::Duration min_link_delay) const;

  // True when a CPU sample is due (a window has passed since the last one).
  bool cpu_sample_due(xcp::Timestamp now) const {
    return cpu_cap_ < 1.0 && (!window_open_ || now - window_start_ >= kBudgetWindow);
  }
  // The process's CPU time so far, at `now`: closes the window (the bucket
  // gains cap x its wall time and loses the CPU used in it).
  void note_cpu(xcp::Timestamp now, xcp::Duration cpu_total);
  bool over_budget() const { return over_budget_; }
  double cpu_cap() const { return cpu_cap_; }
  uint64_t windows_over_budget() const { return windows_over_; }

 private:
  xcp::Duration spin_max_;
  xcp::Duration latency_ = xcp::Duration::zero();
  double cpu_cap_;
  bool window_open_ = false;  // the first sample only opens a window
  xcp::Timestamp window_start_{};
  xcp::Duration window_cpu_start_ = xcp::Duration::zero();
  xcp::Duration tokens_ = kBudgetBurst;
  bool over_budget_ = false;
  uint64_t windows_over_ = 0;
};

}  // namespace xcprouter
