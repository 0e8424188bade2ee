// One direction of one emulated link:
//
//   offer() -> qdisc -> serialiser at `capacity` -> propagation delay line
//           -> loss model -> sink
//
// Time is injected: offer(p, now) and advance(now) process every event due
// at or before `now` in time order, each at its own scheduled instant, so a
// late wakeup delays delivery but never changes the emulated rate (the next
// packet starts serialising when the previous one finished, not when the
// engine noticed). next_deadline() tells the engine when to call again.
//
// Loss is applied at the far end (after serialisation and delay): a lost
// packet has used the link's capacity, like a frame corrupted on the wire.
#pragma once

#include <cstdint>
#include <memory>

#include <nlohmann/json.hpp>

#include "core/loss_model.hh"
#include "core/packet_sink.hh"
#include "qdisc/qdisc.hh"
#include "util/ring_queue.hh"
#include "xcp/lateness_histogram.hh"
#include "xcp/units.hh"

namespace xcprouter {

struct LinkCounters {
  uint64_t in_packets = 0, in_bytes = 0;    // offered to the link
  uint64_t out_packets = 0, out_bytes = 0;  // left it (after loss)
  uint64_t drops_loss = 0;
  uint64_t drops_link_down = 0;
  // Serialiser busy time of the packets that finished serialising (virtual
  // time): the analysis takes intervals busy throughout as the ones in which
  // the link must have sent at its capacity (fidelity.py), exactly, where queue
  // snapshots can only guess (a queue seen non-empty at both ends of an
  // interval may have drained and idled in between).
  xcp::Duration busy{};
  // Events processed after their scheduled instant (emulation fidelity).
  uint64_t late_events = 0;
  xcp::LatenessHistogram lateness;  // every event, late or not; keeps the worst too
};

class Link {
 public:
  Link(xcp::Rate capacity, xcp::Duration delay, std::unique_ptr<Qdisc> qdisc, LossModel loss,
       PacketSink& sink);
  Link(const Link&) = delete;
  Link& operator=(const Link&) = delete;

  // A packet arrives at the link's entrance at `arrival` (the kernel's
  // receive time for frames from a port). An arrival earlier than the last
  // event this link processed is taken at that event's time.
  void offer(PacketPtr p, xcp::Timestamp arrival);
  // Processes all events due at or before `now`; returns next_deadline()
  // afterwards (computed on the way, so the engine needs no second pass).
  xcp::Timestamp advance(xcp::Timestamp now);
  // Offers made by every link of this thread so far: a caller that reads
  // deadlines while advancing links learns whether one link's output
  // reached another link (whose deadline it read earlier) meanwhile.
  static uint64_t offers_made() { return offers_made_; }
  // Earliest pending event, Timestamp::max() when idle.
  xcp::Timestamp next_deadline() const;
  // The next packet to leave the delay line (max if none): the next event
  // whose timing reaches the link's output.
  xcp::Timestamp next_delivery() const;

  // Live changes: none of them loses a queued packet.
  void set_capacity(xcp::Rate c);  // from the next packet to start serialising
  void set_delay(xcp::Duration d);  // for packets finishing serialisation from now
  void set_limit(QueueLimit l) { qdisc_->set_limit(l); }
  void set_loss(const LossConfig& c) { loss_.set_config(c); }
  void set_up(bool up, xcp::Timestamp now);

  xcp::Rate capacity() const { return capacity_; }
  xcp::Duration delay() const { return delay_; }
  bool up() const { return up_; }
  const LossConfig& loss_config() const { return loss_.config(); }
  Qdisc& qdisc() { return *qdisc_; }
  const Qdisc& qdisc() const { return *qdisc_; }
  const LinkCounters& counters() const { return counters_; }
  size_t in_flight() const { return (in_service_ ? 1 : 0) + delay_line_.size(); }
  // The engine's clock, when later than the arrival times it offers: events
  // run by offer() count their lateness against it, not against the arrival.
  void note_wall_time(xcp::Timestamp now) { wall_time_ = now; }
  // Events later than this count as late (fidelity statistics).
  void set_lateness_threshold(xcp::Duration d) { lateness_threshold_ = d; }

  // Serialiser busy time up to `now`: finished serialisations plus the part of
  // the one in progress before `now` (never beyond the link's own clock).
  xcp::Duration busy_time(xcp::Timestamp now) const;

  // The `<link>` object of CONTROL.md's stats; `now` is the time up to which the
  // link's events were processed (busy_ns counts to it).
  nlohmann::json stats_json(xcp::Timestamp now = xcp::Timestamp::zero()) const;

 private:
  static inline thread_local uint64_t offers_made_ = 0;
  struct InFlight {
    xcp::Timestamp release{};
    PacketPtr packet;
  };

  void try_start(xcp::Timestamp t);
  void finish_serialising(xcp::Timestamp t);
  void release_head(xcp::Timestamp t);
  void note_lateness(xcp::Timestamp due, xcp::Timestamp now);

  xcp::Rate capacity_;
  xcp::Duration delay_;
  std::unique_ptr<Qdisc> qdisc_;
  LossModel loss_;
  PacketSink& sink_;
  bool up_ = true;

  PacketPtr in_service_;
  xcp::Timestamp service_done_ = xcp::Timestamp::max();
  xcp::Timestamp service_start_ = xcp::Timestamp::zero();
  // End of the last serialisation: a packet offered with an earlier virtual
  // time (handed over late by another link) still waits for the wire.
  xcp::Timestamp wire_free_ = xcp::Timestamp::zero();
  RingQueue<InFlight> delay_line_;
  xcp::Timestamp last_release_ = xcp::Timestamp::zero();
  // Time of the latest event or arrival processed: the link's own clock.
  xcp::Timestamp last_event_ = xcp::Timestamp::zero();
  xcp::Timestamp wall_time_ = xcp::Timestamp::zero();

  LinkCounters counters_;
  xcp::Duration lateness_threshold_ = xcp::Duration::microseconds(100);
};

}  // namespace xcprouter
