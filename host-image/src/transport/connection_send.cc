// Connection, sending half: what the window allows next, and how a segment
// is encoded (shim + segment header + payload) straight into the writer.
#include <algorithm>
#include <array>

#include "transport/connection.hh"

namespace xcphost {

// ---- sending -------------------------------------------------------------

uint64_t Connection::window_payload_bytes() const {
  // congestion_controller.hh contract: cwnd is in sequence-space (payload) bytes.
  return cc_->cwnd_bytes();
}

uint64_t Connection::window_pipe() const {
  // Reno (ns-2's RenoTcpAgent, exitFastRetrans_): duplicate ACKs inflate the
  // window only during fast recovery. Outside it (a hole the `recover` check
  // left to the RTO, or the go-back-N after an RTO) the sender waits instead
  // of clocking out new data on dupacks.
  if (mode() == LossRecovery::kReno && !(in_recovery_ && !recovery_after_rto_)) {
    return board_.pipe_without_dupacks();
  }
  return board_.pipe();
}

uint64_t Connection::peer_window_left() const {
  const uint64_t nxt = board_.snd_nxt();
  return peer_window_end_ > nxt ? peer_window_end_ - nxt : 0;
}

uint32_t Connection::advertised_window() const {
  return rx_.window(handler_ != nullptr ? handler_->unread_bytes() : 0);
}

bool Connection::window_update_due() const {
  if (state_ != ConnState::kEstablished || rx_.fin_received()) return false;
  const uint64_t rcv_nxt = rx_.rcv_nxt();
  const uint64_t right = rcv_nxt + advertised_window();
  const uint64_t left_open = adv_right_edge_ > rcv_nxt ? adv_right_edge_ - rcv_nxt : 0;
  // Only when what the sender may still send is under half the buffer (it is
  // waiting, or soon will), and the window grew by two segments (or half a
  // small buffer): no update for every byte a slow reader takes.
  const uint64_t step = std::max<uint64_t>(1, std::min<uint64_t>(rx_.capacity() / 2, 2 * uint64_t{cfg_.mss_bytes}));
  return left_open < rx_.capacity() / 2 && right >= adv_right_edge_ + step;
}

void Connection::update_persist(xcp::Timestamp now) {
  const uint64_t nxt = board_.snd_nxt();
  const bool blocked = state_ == ConnState::kEstablished && board_.outstanding_bytes() == 0 && nxt < write_end_ &&
                       nxt >= peer_window_end_;
  if (!blocked) {
    persist_deadline_ = xcp::Timestamp::max();
    if (nxt < peer_window_end_) persist_backoff_ = 0;
    return;
  }
  if (persist_deadline_ != xcp::Timestamp::max()) return;
  // RTO-based, doubling per unanswered probe, at most 10 s apart (well
  // inside the peer's idle timeout: its probes keep the connection alive).
  const xcp::Duration d = rtt_.rto() * static_cast<double>(1u << std::min<uint32_t>(persist_backoff_, 6));
  persist_deadline_ = now + std::min(d, xcp::Duration::seconds(10));
}

void Connection::send_window_probe(xcp::Timestamp now) {
  persist_deadline_ = xcp::Timestamp::max();
  ++persist_backoff_;
  const uint64_t nxt = board_.snd_nxt();
  if (!writer_.has_room() || nxt >= write_end_ || nxt < peer_window_end_) return;
  ++stats_.window_probes;
  // One byte of new data beyond the window: the receiver takes in-order
  // bytes whatever its window and answers with its current one.
  send_segment(nxt, 1, false, false, now);
}

void Connection::pump(xcp::Timestamp now) {
  if (state_ == ConnState::kEstablished) {
    if (handler_ && !fin_queued_ && send_buf_.free_space() > 0) handler_->on_send_space(*this);
    while (writer_.has_room() && send_one(now)) {
    }
    update_persist(now);
    if (window_update_due()) rx_.request_ack();
  }
  if (rx_.ack_owed() && !done() && state_ != ConnState::kSynSent && writer_.has_room()) {
    send_control(seg_flags::kAck, now);
  }
}

bool Connection::send_one(xcp::Timestamp now) {
  // Holding the fast retransmit until pipe drains below the reduced window
  // (half an RTT of duplicate ACKs after a halving) delays the repair's ACK
  // past an RTO that a standing queue has shrunk to barely one RTT.
  if (in_recovery_ && retransmit_owed_) {
    retransmit_owed_ = false;
    if (send_next_retransmission(now)) return true;
  }
  if (window_pipe() >= std::max<uint64_t>(window_payload_bytes(), 1)) return false;
  if (in_recovery_ && send_next_retransmission(now)) return true;
  const uint64_t nxt = board_.snd_nxt();
  if (nxt < write_end_) {
    if (nxt >= peer_window_end_) return false;  // the peer's receive window is full
    const uint64_t len = std::min({uint64_t{cfg_.mss_bytes}, write_end_ - nxt, peer_window_end_ - nxt});
    send_segment(nxt, static_cast<uint32_t>(len), false, false, now);
    return true;
  }
  if (fin_queued_ && !fin_sent_ && nxt == write_end_) {
    send_segment(write_end_, 0, true, false, now);
    fin_sent_ = true;
    return true;
  }
  return false;
}

bool Connection::send_next_retransmission(xcp::Timestamp now) {
  const auto r = board_.next_segment_to_retransmit();
  if (!r) return false;
  if (fin_sent_ && r->start == write_end_) {
    send_segment(write_end_, 0, true, true, now);
  } else {
    const uint64_t len = std::min<uint64_t>(r->length(), cfg_.mss_bytes);
    send_segment(r->start, static_cast<uint32_t>(std::min<uint64_t>(len, write_end_ - r->start)), false, true, now);
  }
  return true;
}

void Connection::send_probe(xcp::Timestamp now) {
  probe_sent_ = true;
  if (!writer_.has_room()) return;
  ++stats_.tail_probes;
  // New data if there is any: its ACK (SACK) tells what arrived, and its
  // echoed timestamp lets check_lost_head_retransmission() act. Otherwise the
  // head again (RFC 8985 sends the last segment, which relies on RACK's
  // time-based marking; without per-segment send times the head is what a
  // lone tail loss needs).
  const uint64_t nxt = board_.snd_nxt();
  const uint64_t una = board_.snd_una();
  if (nxt < write_end_ && nxt < peer_window_end_) {
    const uint64_t len = std::min({uint64_t{cfg_.mss_bytes}, write_end_ - nxt, peer_window_end_ - nxt});
    send_segment(nxt, static_cast<uint32_t>(len), false, false, now);
  } else if (una < write_end_) {
    send_segment(una, static_cast<uint32_t>(std::min<uint64_t>(cfg_.mss_bytes, write_end_ - una)), false, true, now);
  } else if (fin_sent_) {
    send_segment(write_end_, 0, true, true, now);
  }
}

void Connection::fill_ack_fields(SegmentHeader& seg) {
  seg.src_port = key_.local_port;
  seg.dst_port = key_.remote_port;
  seg.ack = rx_.rcv_nxt();
  seg.window_bytes = advertised_window();
  seg.ts_ecr_us = rx_.ts_recent();
  adv_right_edge_ = std::max(adv_right_edge_, seg.ack + seg.window_bytes);
}

void Connection::send_segment(uint64_t seq, uint32_t len, bool fin, bool retransmit,
                              xcp::Timestamp now) {
  SegmentHeader seg;
  fill_ack_fields(seg);
  seg.seq = seq;
  seg.flags = seg_flags::kAck | (fin ? seg_flags::kFin : 0);
  seg.ts_val_us = wire_timestamp_us(now);
  if (board_.outstanding_bytes() == 0) last_ack_at_ = now;  // a new flight: the probe clock starts here
  std::span<uint8_t> out = writer_.buffer();
  const size_t hdr = write_packet(seg, true, out);
  if (len > 0) send_buf_.copy_out(seq, out.subspan(hdr, len));
  board_.on_sent(seq, len + (fin ? 1 : 0));
  writer_.commit(key_.remote_addr, hdr + len);
  ++stats_.packets_sent;
  cc_->on_packet_sent(now, len, board_.pipe());
  if (retransmit && seq == board_.snd_una()) {
    // The first repair of this head gets a full RTO to be acknowledged, as in
    // ns-2 (reset_rtx_timer in dupack_action) and Linux: the timer armed by the
    // last cumulative ACK would otherwise fire while this retransmission is
    // still queued behind a full buffer. Repeats of the same head (a lost
    // retransmission, a probe) leave the timer alone, so a head that never
    // gets through still ends in timeouts and their back-off.
    if (head_retx_seq_ != seq) arm_rto(now);
    head_retx_seq_ = seq;
    head_retx_ts_us_ = seg.ts_val_us;
  }
  if (retransmit) {
    ++stats_.retransmits;
  } else {
    stats_.bytes_sent += len;
  }
  rx_.on_ack_sent();  // the data segment carries our ACK
  if (rto_deadline_ == xcp::Timestamp::max()) arm_rto(now);
}

void Connection::send_control(uint8_t flags, xcp::Timestamp now) {
  SegmentHeader seg;
  fill_ack_fields(seg);
  seg.seq = board_.snd_nxt();
  seg.flags = flags;
  seg.ts_val_us = wire_timestamp_us(now);
  if (flags & seg_flags::kSyn) {
    seg.ack = 0;
    if (!(flags & seg_flags::kAck)) seg.ts_ecr_us = 0;
    seg.sack_permitted = cfg_.loss_recovery == LossRecovery::kSack;
  }
  if (flags == seg_flags::kAck && sack_ok_) {
    std::array<SackBlock, kMaxSackBlocks> blocks{};
    seg.sack_count = static_cast<uint8_t>(rx_.sack_blocks(blocks));
    std::copy(blocks.begin(), blocks.end(), seg.sacks.begin());
  }
  // SYNs are Standard (they cross routers like data); ACKs and RSTs are Minimal.
  const bool standard = (flags & seg_flags::kSyn) != 0;
  std::span<uint8_t> out = writer_.buffer();
  const size_t len = write_packet(seg, standard, out);
  writer_.commit(key_.remote_addr, len);
  ++stats_.packets_sent;
  rx_.on_ack_sent();
}

size_t Connection::write_packet(const SegmentHeader& seg, bool standard, std::span<uint8_t> out) {
  xcp::XcpHeader shim;
  if (standard) {
    const bool app_limited = !fin_queued_ && board_.snd_nxt() >= write_end_;
    cc_->fill_header(shim, rtt_.srtt(), app_limited);
    shim.format = xcp::Format::kStandard;
  } else {
    shim.format = xcp::Format::kMinimal;
  }
  shim.next_protocol = kNextProtoTransport;
  feedback_.fill_ack(shim);  // every packet back carries the summed feedback, then resets it
  const size_t n = xcp::write_header(shim, out);
  return n + write_segment_header(seg, out.subspan(n));
}

}  // namespace xcphost
