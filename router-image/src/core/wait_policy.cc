#include "core/wait_policy.hh"

#include <algorithm>

namespace xcprouter {

using xcp::Duration;
using xcp::Timestamp;

WaitPolicy::WaitPolicy(Duration spin_max) : spin_max_(std::max(spin_max, Duration::zero())) {}

WaitPlan WaitPolicy::plan(Timestamp now, Timestamp deadline) const {
  if (deadline == Timestamp::max()) return {false, Timestamp::max()};
  const Duration lead = std::min(latency_, spin_max_);
  // A sleep shorter than the spin bound is not worth its wake-up: the CPU a
  // wake-up costs (~20 us on a VM) is about what the spin bound is set to.
  if (deadline <= now || deadline - now <= lead + spin_max_) return {true, now};
  return {false, deadline - lead};
}

void WaitPolicy::record_wake(Timestamp asked, Timestamp woke) {
  const Duration late = std::max(woke - asked, Duration::zero());
  // Bounded: an oversleep of seconds (the machine stalled) would otherwise
  // take thousands of samples to decay, spinning at spin_max all that while.
  const Duration sample = std::min(late, spin_max_);
  latency_ = sample >= latency_ ? sample : latency_ - (latency_ - sample) / 8.0;
}

Duration WaitPolicy::rx_defer(Duration min_link_delay) const {
  // The read itself comes late by the wake-up latency; half the delay is the margin.
  const Duration d = std::min(min_link_delay / 2.0 - latency_, kMaxRxDefer);
  return d >= kMinRxDefer ? d : Duration::zero();
}

}  // namespace xcprouter
