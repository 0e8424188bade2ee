// Where a stage hands packets on: the next link, the router's forwarding
// stage or a port's transmitter. Links know nothing else about their
// surroundings, so tests drive them with a collecting sink and a FakeClock.
#pragma once

#include "core/packet.hh"
#include "xcp/units.hh"

namespace xcprouter {

class PacketSink {
 public:
  virtual ~PacketSink() = default;
  // `at` is the (virtual) time the packet reaches the sink; it can lie a
  // little before the wall clock when the engine services a late timer.
  virtual void deliver(PacketPtr p, xcp::Timestamp at) = 0;
};

}  // namespace xcprouter
