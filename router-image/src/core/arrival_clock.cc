#include "core/arrival_clock.hh"

#include <time.h>

#include <algorithm>

namespace xcprouter {

namespace {

xcp::Timestamp read(clockid_t id) {
  timespec ts{};
  ::clock_gettime(id, &ts);
  return xcp::Timestamp::from_ns(static_cast<int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec);
}

}  // namespace

ClockSample ClockSample::now() {
  // Monotonic read last: the sample then bounds every frame read after it
  // from above only by a few nanoseconds of skew, never from below.
  const xcp::Timestamp real = read(CLOCK_REALTIME);
  const xcp::Timestamp mono = read(CLOCK_MONOTONIC);
  return ClockSample{mono, real};
}

xcp::Timestamp ArrivalClock::peek(xcp::Timestamp kernel_realtime, const ClockSample& s) const {
  const xcp::Timestamp converted = s.monotonic + (kernel_realtime - s.realtime);
  // A sample older than the last stamp (callers mixing samples) must not
  // invert the clamp's bounds: the last stamp wins.
  return std::max(last_, std::min(converted, s.monotonic));
}

xcp::Timestamp ArrivalClock::stamp(xcp::Timestamp kernel_realtime, const ClockSample& s) {
  const xcp::Timestamp t = peek(kernel_realtime, s);
  if (t != s.monotonic + (kernel_realtime - s.realtime)) ++clamped_;
  last_ = t;
  return t;
}

xcp::Timestamp ArrivalClock::stamp_now(const ClockSample& s) {
  last_ = std::max(last_, s.monotonic);
  return last_;
}

}  // namespace xcprouter
