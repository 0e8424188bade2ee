#include "xcp/clock.hh"

#include <time.h>

namespace xcp {

Timestamp MonotonicClock::now() const {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return Timestamp::from_ns(static_cast<int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec);
}

}  // namespace xcp
