// Injected clocks. Production code reads time only through a Clock so that
// every algorithm can be driven by a FakeClock in simulated-time tests.
#pragma once

#include "xcp/units.hh"

namespace xcp {

class Clock {
 public:
  virtual ~Clock() = default;
  virtual Timestamp now() const = 0;
};

// CLOCK_MONOTONIC, nanosecond resolution.
class MonotonicClock final : public Clock {
 public:
  Timestamp now() const override;
};

// A clock that moves only when told to.
class FakeClock final : public Clock {
 public:
  explicit FakeClock(Timestamp start = Timestamp::zero()) : now_(start) {}
  Timestamp now() const override { return now_; }
  void advance(Duration d) { now_ += d; }
  void set(Timestamp t) { now_ = t; }

 private:
  Timestamp now_;
};

}  // namespace xcp
