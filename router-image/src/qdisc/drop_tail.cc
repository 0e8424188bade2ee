#include "qdisc/drop_tail.hh"

#include "qdisc/param_reader.hh"

namespace xcprouter {

bool DropTail::do_enqueue(PacketPtr& p, xcp::Timestamp /*now*/, DropCause& cause) {
  if (would_overflow(*p)) {
    cause = DropCause::kOverflow;
    return false;
  }
  fifo_.push_back(std::move(p));
  return true;
}

void DropTail::configure(const nlohmann::json& params) { ParamReader(params, "queue.params").finish(); }

PacketPtr DropTail::do_dequeue(xcp::Timestamp /*now*/) {
  if (fifo_.empty()) return nullptr;
  PacketPtr p = std::move(fifo_.front());
  fifo_.pop_front();
  return p;
}

}  // namespace xcprouter
