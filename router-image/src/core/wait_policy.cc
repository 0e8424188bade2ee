#include "core/wait_policy.hh"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace xcprouter {

using xcp::Duration;
using xcp::Timestamp;

WaitPolicy::WaitPolicy(Duration spin_max, double cpu_cap)
    : spin_max_(std::max(spin_max, Duration::zero())), cpu_cap_(cpu_cap) {
  if (!(cpu_cap >= kMinCpuCap && cpu_cap <= 1.0)) {
    throw std::invalid_argument("wait policy: cpu_cap must be " + std::to_string(kMinCpuCap) +
                                "..1.0 (fraction of a core), got " + std::to_string(cpu_cap));
  }
}

WaitPlan WaitPolicy::plan(Timestamp now, Timestamp deadline) const {
  if (deadline == Timestamp::max()) return {false, Timestamp::max()};
  // Over budget: no spin, and no sleep shorter than kBudgetMinSleep.
  if (over_budget_) return {false, std::max(deadline, now + kBudgetMinSleep)};
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

void WaitPolicy::note_cpu(Timestamp now, Duration cpu_total) {
  const Duration wall = now - window_start_;
  if (window_open_ && wall > Duration::zero()) {
    // Bounded below too: a machine stall of seconds must not keep the engine
    // from spinning for seconds afterwards.
    tokens_ = std::clamp(tokens_ + wall * cpu_cap_ - (cpu_total - window_cpu_start_), Duration::zero() - kBudgetBurst,
                         kBudgetBurst);
    over_budget_ = tokens_ <= Duration::zero();
    if (over_budget_) ++windows_over_;
  }
  window_open_ = true;
  window_start_ = now;
  window_cpu_start_ = cpu_total;
}

}  // namespace xcprouter
