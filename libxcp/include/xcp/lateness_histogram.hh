// How late scheduled events ran: counts in fixed, roughly logarithmic buckets.
//
// A running maximum says only that the worst event was late; whether a run is
// faithful depends on how many were (one 2 ms stall in a minute is noise, a
// 2 ms stall every interval shifts every packet's delay). Fixed bounds keep
// recording to a few compares and let samples from different processes and
// times be subtracted and summed bucket by bucket.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

#include "xcp/units.hh"

namespace xcp {

class LatenessHistogram {
 public:
  // Upper bounds (inclusive) of every bucket but the last, in microseconds.
  static constexpr std::array<int64_t, 12> kBoundsUs = {10,   20,   50,    100,   200,   500,
                                                        1000, 2000, 5000, 10000, 20000, 50000};
  static constexpr size_t kBuckets = kBoundsUs.size() + 1;  // the last is "above 50 ms"

  void record(Duration late) {
    const int64_t us = late.ns() <= 0 ? 0 : (late.ns() + 999) / 1000;  // 0.5 us late is "up to 1 us"
    size_t i = 0;
    while (i < kBoundsUs.size() && us > kBoundsUs[i]) ++i;
    ++counts_[i];
    ++total_;
    if (late > max_) max_ = late;
  }

  void merge(const LatenessHistogram& other) {
    for (size_t i = 0; i < kBuckets; ++i) counts_[i] += other.counts_[i];
    total_ += other.total_;
    if (other.max_ > max_) max_ = other.max_;
  }

  const std::array<uint64_t, kBuckets>& counts() const { return counts_; }
  uint64_t total() const { return total_; }
  Duration max() const { return max_; }

  // Events later than `bound_us`, which must be one of kBoundsUs.
  uint64_t later_than_us(int64_t bound_us) const {
    uint64_t n = 0;
    for (size_t i = kBuckets; i-- > 0;) {
      if (i < kBoundsUs.size() && kBoundsUs[i] <= bound_us) break;
      n += counts_[i];
    }
    return n;
  }

 private:
  std::array<uint64_t, kBuckets> counts_{};
  uint64_t total_ = 0;
  Duration max_ = Duration::zero();
};

}  // namespace xcp
