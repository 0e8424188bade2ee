// The receiving half of a connection: in-order bytes go straight to the
// application (no copy), out-of-order bytes wait in the reassembly queue,
// the peer's FIN is tracked, and the ACK policy decides when an ACK is owed
// (RFC 5681 §4.2 delayed ACK: every 2nd in-order segment or a timeout;
// immediately on out-of-order data, a filled hole, a duplicate or a FIN).
// RFC 7323 TS.Recent: the timestamp echoed is that of the oldest segment the
// next ACK covers.
#pragma once

#include <cstdint>
#include <optional>
#include <span>

#include "transport/reassembly_queue.hh"
#include "transport/segment.hh"
#include "xcp/units.hh"

namespace xcphost {

// Where the receive side hands what it accepted.
class ReceiveSink {
 public:
  virtual ~ReceiveSink() = default;
  virtual void on_bytes(std::span<const uint8_t> in_order) = 0;
  virtual void on_fin() = 0;  // every byte before the FIN was delivered
};

class ReceiveSide {
 public:
  ReceiveSide(uint32_t window_bytes, bool delayed_ack, xcp::Duration delayed_ack_timeout)
      : window_(window_bytes), delayed_ack_(delayed_ack), delack_timeout_(delayed_ack_timeout) {}

  // A segment's payload and FIN flag.
  void on_segment(uint64_t seq, std::span<const uint8_t> payload, bool fin, xcp::Timestamp now,
                  ReceiveSink& sink);
  // Every arriving segment's ts_val, before on_segment().
  void note_timestamp(uint32_t ts_val_us) {
    if (unacked_segments_ == 0) ts_recent_ = ts_val_us;
  }
  void set_ts_recent(uint32_t ts_val_us) { ts_recent_ = ts_val_us; }

  // Forces an ACK with the next opportunity.
  void request_ack() { ack_now_ = true; }
  bool ack_owed() const { return ack_now_; }
  // A packet carrying our current ACK left: nothing is owed any more.
  void on_ack_sent();
  xcp::Timestamp delack_deadline() const { return delack_deadline_; }
  // The delayed-ACK timer expired: owe an ACK if segments wait for one.
  void on_delack_timer(xcp::Timestamp now);

  uint64_t rcv_nxt() const { return rcv_nxt_; }
  // Advertised window: the configured window minus out-of-order bytes held
  // and minus `unread` in-order bytes the application has not taken yet.
  uint32_t window(uint64_t unread = 0) const;
  uint32_t capacity() const { return window_; }
  size_t sack_blocks(std::span<SackBlock> out) const { return reasm_.sack_blocks(out); }
  uint32_t ts_recent() const { return ts_recent_; }
  bool fin_received() const { return fin_received_; }

 private:
  void check_fin(ReceiveSink& sink);

  uint32_t window_;
  bool delayed_ack_;
  xcp::Duration delack_timeout_;
  ReassemblyQueue reasm_;
  uint64_t rcv_nxt_ = 0;
  std::optional<uint64_t> fin_seq_;
  bool fin_received_ = false;
  uint32_t unacked_segments_ = 0;
  bool ack_now_ = false;
  uint32_t ts_recent_ = 0;
  xcp::Timestamp delack_deadline_ = xcp::Timestamp::max();
};

}  // namespace xcphost
