#include "qdisc/qdisc.hh"

#include <algorithm>

namespace xcprouter {

bool Qdisc::enqueue(PacketPtr p, xcp::Timestamp now) {
  const uint32_t size = p->wire_bytes();
  DropCause cause = DropCause::kOverflow;
  p->enqueued = now;
  if (!do_enqueue(p, now, cause)) {
    switch (cause) {
      case DropCause::kOverflow: ++counters_.drops_overflow; break;
      case DropCause::kEarly: ++counters_.drops_early; break;
      case DropCause::kFairness: ++counters_.drops_fairness; break;
    }
    return false;
  }
  ++packets_;
  bytes_ += size;
  ++counters_.enqueued_packets;
  counters_.enqueued_bytes += size;
  counters_.max_packets = std::max(counters_.max_packets, packets_);
  counters_.max_bytes = std::max(counters_.max_bytes, bytes_);
  return true;
}

PacketPtr Qdisc::dequeue(xcp::Timestamp now) {
  PacketPtr p = do_dequeue(now);
  if (p) {
    --packets_;
    bytes_ -= p->wire_bytes();
    ++counters_.dequeued_packets;
    counters_.dequeued_bytes += p->wire_bytes();
  }
  return p;
}

}  // namespace xcprouter
