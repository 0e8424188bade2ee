// Arrival time of a received frame on the engine's monotonic timeline.
//
// The kernel stamps every frame it puts into a port's receive ring with the
// wall clock (CLOCK_REALTIME) at reception. The engine reads frames late —
// 2-10 ms when the machine is busy — and the emulated link must see them
// when they arrived, not when they were read: a late read would otherwise
// look like a gap followed by a burst (XCP measures its input rate y from
// arrivals, and an arrival to an idle link would start serialising late).
//
// Per batch the caller samples both clocks back to back (ClockSample); the
// kernel stamp is shifted by (monotonic - realtime) and clamped into
// [last stamp of this port, sample time]: time never runs backwards on one
// port (a realtime step backwards, or stamp noise) and never lies in the
// future (a realtime step forwards). Pure: no system calls, no state but
// the last stamp, so tests drive it with any numbers.
#pragma once

#include "xcp/units.hh"

namespace xcprouter {

// Both clocks read back to back, once per receive batch.
struct ClockSample {
  xcp::Timestamp monotonic{};
  xcp::Timestamp realtime{};

  // Reads CLOCK_MONOTONIC and CLOCK_REALTIME (vDSO, no system call).
  static ClockSample now();
};

class ArrivalClock {
 public:
  // The monotonic arrival time of a frame stamped `kernel_realtime`, as
  // stamp() would return it, without recording it.
  xcp::Timestamp peek(xcp::Timestamp kernel_realtime, const ClockSample& s) const;
  // Same, and records it as this port's latest arrival.
  xcp::Timestamp stamp(xcp::Timestamp kernel_realtime, const ClockSample& s);
  // For frames without a kernel stamp (recvmmsg fallback): the sample time,
  // kept monotonic with the stamped ones.
  xcp::Timestamp stamp_now(const ClockSample& s);

  xcp::Timestamp last() const { return last_; }
  // Stamps moved by the clamp (either bound) — a realtime step, or a
  // timestamp source that is not CLOCK_REALTIME.
  uint64_t clamped() const { return clamped_; }

 private:
  xcp::Timestamp last_ = xcp::Timestamp::zero();
  uint64_t clamped_ = 0;
};

}  // namespace xcprouter
