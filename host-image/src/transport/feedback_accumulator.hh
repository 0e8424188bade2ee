// Receiver-side XCP feedback summing (docs/protocol.md §3).
//
// Every arriving data packet adds its H_feedback; every packet sent back
// (ACK, possibly delayed and covering several segments) carries the sum as
// H_reverse_feedback and resets it. So no feedback is lost or counted twice
// whatever the ACK policy. Also keeps the iXCP echo (docs/protocol.md §5): the
// next_bottleneck_id of the latest data packet, sent back on the next ACK.
#pragma once

#include <cstdint>
#include <optional>

#include "xcp/header.hh"

namespace xcphost {

class FeedbackAccumulator {
 public:
  // Adds one data packet's H_feedback.
  void add(int32_t feedback_bytes);
  // add(h.feedback_bytes), and records h.next_bottleneck_id when h carries
  // the iXCP block. Call for every Standard-format data packet received
  // (duplicates and out-of-order ones included: each crossed the routers).
  void on_data(const xcp::XcpHeader& h);

  // The saturated int32 sum since the last take(); resets to zero.
  int32_t take();
  // Peek without resetting.
  int32_t pending() const;
  // Sets ack.reverse_feedback_bytes = take(); when an iXCP id was seen, sets
  // the B flag and echoes it in ack.next_bottleneck_id (and bottleneck_id).
  void fill_ack(xcp::XcpHeader& ack);

  std::optional<uint32_t> last_next_bottleneck_id() const { return next_bottleneck_id_; }
  uint64_t packets_since_take() const { return packets_; }

 private:
  int64_t sum_ = 0;  // exact; saturated to int32 by pending()/take()
  uint64_t packets_ = 0;
  std::optional<uint32_t> next_bottleneck_id_;
};

}  // namespace xcphost
