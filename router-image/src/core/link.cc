#include "core/link.hh"

#include <algorithm>
#include <utility>

namespace xcprouter {

using xcp::Duration;
using xcp::Timestamp;

Link::Link(xcp::Rate capacity, Duration delay, std::unique_ptr<Qdisc> qdisc, LossModel loss,
           PacketSink& sink)
    : capacity_(capacity), delay_(delay), qdisc_(std::move(qdisc)), loss_(std::move(loss)), sink_(sink) {
  qdisc_->set_capacity(capacity_);
}

void Link::offer(PacketPtr p, Timestamp arrival) {
  // An arrival stamped before an event this link already ran (another port's
  // later frame, or another link's delivery, came first) is taken at that
  // event: the qdisc and the XCP controller never see time run backwards,
  // and the packet counts in the control interval that is still open.
  ++offers_made_;
  const Timestamp now = std::max(arrival, last_event_);
  advance(now);  // a serialiser that finished before `now` must be free for this packet
  last_event_ = now;
  ++counters_.in_packets;
  counters_.in_bytes += p->wire_bytes();
  if (!up_) {
    ++counters_.drops_link_down;
    return;  // the PacketPtr goes back to the pool
  }
  if (qdisc_->enqueue(std::move(p), now) && !in_service_) try_start(now);
}

void Link::try_start(Timestamp t) {
  if (in_service_ || !up_ || qdisc_->packets() == 0) return;
  in_service_ = qdisc_->dequeue(t);
  if (!in_service_) return;
  service_start_ = std::max(t, wire_free_);
  service_done_ = service_start_ + capacity_.transfer_time(in_service_->wire_bytes());
}

void Link::finish_serialising(Timestamp t) {
  // Packets never overtake each other, even right after a delay decrease.
  wire_free_ = t;
  counters_.busy += t - service_start_;
  const Timestamp release = std::max(t + delay_, last_release_);
  last_release_ = release;
  delay_line_.push_back(InFlight{release, std::move(in_service_)});
  in_service_.reset();
  service_done_ = Timestamp::max();
  try_start(t);
}

void Link::release_head(Timestamp t) {
  PacketPtr p = delay_line_.pop_front().packet;
  if (loss_.lose()) {
    ++counters_.drops_loss;
    return;
  }
  ++counters_.out_packets;
  counters_.out_bytes += p->wire_bytes();
  sink_.deliver(std::move(p), t);
}

void Link::note_lateness(Timestamp due, Timestamp now) {
  const Duration late = std::max(now, wall_time_) - due;
  if (late > lateness_threshold_) ++counters_.late_events;
  counters_.lateness.record(late);
}

Timestamp Link::advance(Timestamp now) {
  for (;;) {
    // The earliest of the three event sources, ties in pipeline order.
    const Timestamp serial = service_done_;
    const Timestamp head = delay_line_.empty() ? Timestamp::max() : delay_line_.front().release;
    const auto q = qdisc_->next_deadline();
    const Timestamp qd = q ? *q : Timestamp::max();
    const Timestamp t = std::min({serial, head, qd});
    if (t > now) return t;  // next_deadline()
    // Only a delivery's lateness reaches the wire: the serialiser and the
    // qdisc run on scheduled time, so running them late (e.g. because the
    // engine read an arrival late, wait_policy.hh) shifts nothing they emit.
    if (t == head) note_lateness(t, now);
    last_event_ = t;
    if (t == head) {
      release_head(t);
    } else if (t == serial) {
      finish_serialising(t);
    } else {
      qdisc_->on_deadline(t);
      // A discipline whose deadline does not move would spin us forever.
      const auto again = qdisc_->next_deadline();
      if (again && *again <= t) return next_deadline();
      try_start(t);
    }
  }
}

Timestamp Link::next_deadline() const {
  Timestamp t = service_done_;
  if (!delay_line_.empty()) t = std::min(t, delay_line_.front().release);
  if (auto q = qdisc_->next_deadline()) t = std::min(t, *q);
  return t;
}

Timestamp Link::next_delivery() const {
  return delay_line_.empty() ? Timestamp::max() : delay_line_.front().release;
}

void Link::set_capacity(xcp::Rate c) {
  capacity_ = c;
  qdisc_->set_capacity(c);
}

void Link::set_delay(Duration d) { delay_ = d; }

void Link::set_up(bool up, Timestamp now) {
  advance(now);
  last_event_ = std::max(last_event_, now);
  up_ = up;
  if (up_) try_start(now);
}

Duration Link::busy_time(Timestamp now) const {
  if (!in_service_) return counters_.busy;
  const Timestamp upto = std::min(std::max(now, last_event_), service_done_);
  return counters_.busy + std::max(upto - service_start_, Duration::zero());
}

nlohmann::json Link::stats_json(Timestamp now) const {
  const QdiscCounters& qc = qdisc_->counters();
  const QueueLimit lim = qdisc_->limit();
  nlohmann::json j = {
      {"config",
       {{"capacity_bps", static_cast<uint64_t>(capacity_.bits_per_s() + 0.5)},
        {"delay_us", delay_.us()},
        {"limit_packets", lim.packets},
        {"limit_bytes", lim.bytes},
        {"loss", loss_.config().to_json()},
        {"up", up_},
        {"queue_kind", std::string(qdisc_->kind())}}},
      {"in_packets", counters_.in_packets},
      {"in_bytes", counters_.in_bytes},
      {"out_packets", counters_.out_packets},
      {"out_bytes", counters_.out_bytes},
      {"queue",
       {{"packets", qdisc_->packets()},
        {"bytes", qdisc_->bytes()},
        {"max_packets", qc.max_packets},
        {"max_bytes", qc.max_bytes}}},
      {"in_flight_packets", in_flight()},
      {"drops",
       {{"queue", qc.drops_total()},
        {"queue_overflow", qc.drops_overflow},
        {"queue_early", qc.drops_early},
        {"queue_fairness", qc.drops_fairness},
        {"loss", counters_.drops_loss},
        {"link_down", counters_.drops_link_down}}},
      {"busy_ns", busy_time(now).ns()},
      {"late_events", counters_.late_events},
      {"max_lateness_us", counters_.lateness.max().us()},
  };
  nlohmann::json q = nlohmann::json::object();
  qdisc_->report(q);
  j["qdisc"] = std::move(q);
  return j;
}

}  // namespace xcprouter
