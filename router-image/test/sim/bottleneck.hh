// One output port of a simulated router: a queue discipline drained by a
// serialiser at the link rate (the engine's Port does the same in real time).
// Departures are logged for throughput and queue measurements.
#pragma once

#include <functional>
#include <vector>

#include "qdisc/qdisc.hh"
#include "event_queue.hh"

namespace xcprouter::sim {

struct Departure {
  xcp::Timestamp t;
  uint16_t flow;
  uint32_t bytes;
  uint64_t queue_bytes_after;
};

class Bottleneck {
 public:
  using Deliver = std::function<void(PacketPtr, xcp::Timestamp)>;

  Bottleneck(EventQueue& ev, Qdisc& q, xcp::Rate rate, Deliver deliver)
      : ev_(ev), q_(q), rate_(rate), deliver_(std::move(deliver)) {
    q_.set_capacity(rate_);
    ev_.add_deadline_source([this] { return q_.next_deadline(); },
                            [this](xcp::Timestamp t) {
                              q_.on_deadline(t);
                              if (after_deadline) after_deadline(t);
                            });
  }

  // Returns false when the queue dropped the packet.
  bool arrive(PacketPtr p, xcp::Timestamp now) {
    const bool queued = q_.enqueue(std::move(p), now);
    if (!busy_) transmit_next(now);
    return queued;
  }

  const std::vector<Departure>& departures() const { return log_; }
  // Observer called after every on_deadline() of the queue (tests log timeouts).
  std::function<void(xcp::Timestamp)> after_deadline;
  Qdisc& qdisc() { return q_; }

 private:
  void transmit_next(xcp::Timestamp now) {
    PacketPtr p = q_.dequeue(now);
    if (!p) {
      busy_ = false;
      return;
    }
    busy_ = true;
    log_.push_back({now, p->flow.sport, p->wire_bytes(), q_.bytes()});
    const xcp::Timestamp done = now + rate_.transfer_time(p->wire_bytes());
    // std::function needs a copyable callable: hand the packet over raw.
    Packet* raw = p.release();
    ev_.at(done, [this, raw](xcp::Timestamp t) {
      deliver_(PacketPtr(raw), t);
      transmit_next(t);
    });
  }

  EventQueue& ev_;
  Qdisc& q_;
  xcp::Rate rate_;
  Deliver deliver_;
  bool busy_ = false;
  std::vector<Departure> log_;
};

}  // namespace xcprouter::sim
