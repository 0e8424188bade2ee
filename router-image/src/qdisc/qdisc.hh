// Queue discipline of one output port.
//
// The base class owns byte/packet accounting, the buffer limit and drop
// counters, so concrete disciplines implement only their policy. Time enters
// only through arguments (injected clock); periodic work (XCP control
// interval, persistent-queue window, RED idle handling) is exposed as
// next_deadline()/on_deadline() so the port schedules it on the event loop
// and tests drive it with a FakeClock.
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <string_view>

#include <nlohmann/json.hpp>

#include "core/packet.hh"
#include "xcp/units.hh"

namespace xcprouter {

// Buffer limit: whichever bound is hit first. 0 = unbounded on that axis.
struct QueueLimit {
  uint64_t packets = 0;
  uint64_t bytes = 0;
};

enum class DropCause : uint8_t { kOverflow, kEarly, kFairness };

struct QdiscCounters {
  uint64_t enqueued_packets = 0, enqueued_bytes = 0;
  uint64_t dequeued_packets = 0, dequeued_bytes = 0;
  uint64_t drops_overflow = 0;   // buffer full
  uint64_t drops_early = 0;      // AQM (RED) early drop
  uint64_t drops_fairness = 0;   // XCP-TCP fairness dropper
  uint64_t max_packets = 0, max_bytes = 0;
  uint64_t drops_total() const { return drops_overflow + drops_early + drops_fairness; }
};

class Qdisc {
 public:
  explicit Qdisc(QueueLimit limit) : limit_(limit) {}
  virtual ~Qdisc() = default;
  Qdisc(const Qdisc&) = delete;
  Qdisc& operator=(const Qdisc&) = delete;

  // Takes the packet or drops it (counted). Returns true when queued.
  bool enqueue(PacketPtr p, xcp::Timestamp now);
  // Next packet to serialise, or nullptr. Departure-time processing (XCP
  // feedback) happens here, so the packet leaves with its final header.
  PacketPtr dequeue(xcp::Timestamp now);

  uint64_t packets() const { return packets_; }
  uint64_t bytes() const { return bytes_; }
  const QdiscCounters& counters() const { return counters_; }
  QueueLimit limit() const { return limit_; }
  void set_limit(QueueLimit l) { limit_ = l; }  // queued packets are kept

  // The drain rate of this queue (the port's capacity). XCP needs it as C.
  virtual void set_capacity(xcp::Rate c) { capacity_ = c; }
  xcp::Rate capacity() const { return capacity_; }

  // Periodic work: when next to call on_deadline(), or nullopt.
  virtual std::optional<xcp::Timestamp> next_deadline() const { return std::nullopt; }
  virtual void on_deadline(xcp::Timestamp /*now*/) {}

  virtual std::string_view kind() const = 0;
  // Adds discipline-specific state (e.g. "xcp": {d, phi, ...}) to `out`.
  virtual void report(nlohmann::json& /*out*/) const {}
  // Applies discipline parameters given live over the control socket;
  // throws std::invalid_argument naming the bad field.
  virtual void configure(const nlohmann::json& /*params*/) {}

 protected:
  // Policy hooks. do_enqueue may drop (return false, counted by the base with
  // `cause`); it must not exceed the limit (use would_overflow()).
  virtual bool do_enqueue(PacketPtr& p, xcp::Timestamp now, DropCause& cause) = 0;
  virtual PacketPtr do_dequeue(xcp::Timestamp now) = 0;

  bool would_overflow(const Packet& p) const {
    return (limit_.packets && packets_ + 1 > limit_.packets) ||
           (limit_.bytes && bytes_ + p.wire_bytes() > limit_.bytes);
  }
  // FIFO storage most disciplines share.
  std::deque<PacketPtr> fifo_;

 private:
  QueueLimit limit_;
  xcp::Rate capacity_;
  uint64_t packets_ = 0, bytes_ = 0;
  QdiscCounters counters_;
};

}  // namespace xcprouter
