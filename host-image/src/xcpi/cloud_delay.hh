// Q of a receiver's virtual router: the standing queue of the cloud, seen as
// one-way delay. A receiver has no queue of its own (what it receives goes to
// the application), so seed 000 eq. (1)'s Q — the queue of the node that
// hosts V — is zero there, and the cloud's queue cannot be read: what arrives
// has already left the cloud's bottleneck, so y <= C and S = C_U - y never goes
// negative. What the receiver can see is the queueing delay: every data segment
// carries its sender's timestamp (ts_val), so arrival - ts_val is the one-way
// delay plus a constant clock offset. Per V interval: queue delay = the least
// one-way delay of the interval minus the least ever seen (offsets cancel;
// a minimum, like XCP's persistent queue, so one burst does not count).
// The engine's V makes the same choice for its chirp estimator (XcpiConfig::
// cloud_queue: Q_V = Q_R + q_cloud · C_U), there from the probes' delays.
#pragma once

#include <algorithm>
#include <cstdint>
#include <limits>

namespace xcphost {

class CloudDelay {
 public:
  // A segment stamped `ts_val_us` (sender's clock, wrapping µs) arriving at
  // `arrival_us` (our clock, wrapping µs).
  void on_sample(uint32_t ts_val_us, uint32_t arrival_us) {
    const uint32_t raw = arrival_us - ts_val_us;  // owd + offset, mod 2^32
    if (!have_base_) {
      base_ = raw;
      have_base_ = true;
    }
    // Relative to the first sample so a wrap of either clock does not matter
    // while the delay varies by less than 2^31 µs.
    const int64_t owd = static_cast<int32_t>(raw - base_);
    floor_us_ = std::min(floor_us_, owd);
    interval_min_us_ = std::min(interval_min_us_, owd);
  }
  // Closes one V interval: its queueing delay in seconds. An interval without
  // samples keeps the previous value (V still runs its timer).
  double close_interval() {
    if (interval_min_us_ != kNone) queue_s_ = static_cast<double>(interval_min_us_ - floor_us_) * 1e-6;
    interval_min_us_ = kNone;
    return queue_s_;
  }
  double queue_s() const { return queue_s_; }

 private:
  static constexpr int64_t kNone = std::numeric_limits<int64_t>::max();
  bool have_base_ = false;
  uint32_t base_ = 0;
  int64_t floor_us_ = kNone;
  int64_t interval_min_us_ = kNone;
  double queue_s_ = 0;
};

}  // namespace xcphost
