#include "transport/receive_side.hh"

namespace xcphost {

void ReceiveSide::on_segment(uint64_t seq, std::span<const uint8_t> payload, bool fin,
                             xcp::Timestamp now, ReceiveSink& sink) {
  const uint64_t end = seq + payload.size();
  bool in_order = false;
  if (!payload.empty()) {
    if (end <= rcv_nxt_) {
      ack_now_ = true;  // duplicate: tell the sender at once
    } else if (seq <= rcv_nxt_) {
      const uint64_t from = rcv_nxt_;
      rcv_nxt_ = end;
      in_order = true;
      sink.on_bytes(payload.subspan(from - seq));
      if (!reasm_.empty()) {
        rcv_nxt_ = reasm_.drain(rcv_nxt_, [&sink](std::span<const uint8_t> b) { sink.on_bytes(b); });
        ack_now_ = true;  // a hole closed: immediate ACK
      }
    } else {
      if (end - rcv_nxt_ <= window_) reasm_.insert(seq, payload);
      ack_now_ = true;  // out of order: immediate duplicate ACK carrying SACK
    }
  }
  if (fin) {
    fin_seq_ = end;
    ack_now_ = true;
  }
  check_fin(sink);
  if (in_order) {
    ++unacked_segments_;
    if (!delayed_ack_ || unacked_segments_ >= 2) {
      ack_now_ = true;
    } else if (delack_deadline_ == xcp::Timestamp::max()) {
      delack_deadline_ = now + delack_timeout_;
    }
  }
}

void ReceiveSide::check_fin(ReceiveSink& sink) {
  if (!fin_received_ && fin_seq_ && rcv_nxt_ == *fin_seq_) {
    rcv_nxt_ += 1;  // FIN occupies one sequence unit
    fin_received_ = true;
    sink.on_fin();
  }
}

void ReceiveSide::on_ack_sent() {
  ack_now_ = false;
  unacked_segments_ = 0;
  delack_deadline_ = xcp::Timestamp::max();
}

void ReceiveSide::on_delack_timer(xcp::Timestamp now) {
  if (delack_deadline_ > now) return;
  delack_deadline_ = xcp::Timestamp::max();
  if (unacked_segments_ > 0) ack_now_ = true;
}

uint32_t ReceiveSide::window(uint64_t unread) const {
  const uint64_t held = reasm_.held_bytes() + unread;
  return held >= window_ ? 0 : static_cast<uint32_t>(window_ - held);
}

}  // namespace xcphost
