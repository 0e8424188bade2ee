#include "transport/connection.hh"

#include <algorithm>
#include <array>
#include <limits>

namespace xcphost {

std::string_view to_string(ConnState s) {
  switch (s) {
    case ConnState::kSynSent: return "syn_sent";
    case ConnState::kSynReceived: return "syn_received";
    case ConnState::kEstablished: return "established";
    case ConnState::kClosed: return "closed";
    case ConnState::kFailed: return "failed";
  }
  return "unknown";
}

std::string_view to_string(ConnError e) {
  switch (e) {
    case ConnError::kNone: return "none";
    case ConnError::kConnectTimeout: return "no answer to SYN (no server listening on that port?)";
    case ConnError::kReset: return "connection reset by peer";
    case ConnError::kTimedOut: return "connection lost (retransmission timeouts without progress)";
  }
  return "unknown";
}

Connection::Connection(const ConnectionConfig& cfg, FlowKey key, bool active,
                       ConnectionHandler* handler, PacketWriter& writer)
    : cfg_(cfg),
      key_(key),
      active_(active),
      handler_(handler),
      writer_(writer),
      cc_(make_congestion_controller(cfg.cc, cfg.cc_config())),
      rtt_(cfg.rtt),
      board_(0, cfg.mss_bytes),
      send_buf_(cfg.send_buffer_bytes),
      rx_(cfg.receive_window_bytes, cfg.delayed_ack, cfg.delayed_ack_timeout),
      state_(active ? ConnState::kSynSent : ConnState::kSynReceived) {}

void Connection::start(xcp::Timestamp now) {
  started_at_ = now;
  last_rx_ = now;
  if (active_) {
    send_control(seg_flags::kSyn, now);
    rto_deadline_ = now + rtt_.rto();
  }
}

size_t Connection::write(std::span<const uint8_t> data) {
  if (fin_queued_ || done()) return 0;
  const size_t n = send_buf_.append(data);
  write_end_ += n;
  return n;
}

void Connection::close(bool discard_unsent) {
  if (discard_unsent && !fin_queued_ && board_.snd_nxt() < write_end_) {
    write_end_ = std::max(board_.snd_nxt(), send_buf_.base_offset());
    send_buf_.truncate(write_end_);
  }
  fin_queued_ = true;
}

void Connection::abort(xcp::Timestamp now, ConnError err) {
  if (done()) return;
  send_control(seg_flags::kRst, now);
  finish(ConnState::kFailed, err);
}

void Connection::finish(ConnState s, ConnError e) {
  if (done()) return;
  state_ = s;
  error_ = e;
  rto_deadline_ = xcp::Timestamp::max();
  persist_deadline_ = xcp::Timestamp::max();
  if (handler_) handler_->on_closed(*this);
}

void Connection::maybe_done() {
  if (state_ == ConnState::kEstablished && fin_acked_ && rx_.fin_received()) {
    finish(ConnState::kClosed, ConnError::kNone);
  }
}

void Connection::enter_established(xcp::Timestamp now) {
  state_ = ConnState::kEstablished;
  consecutive_timeouts_ = 0;
  rto_deadline_ = xcp::Timestamp::max();
  (void)now;
  if (handler_) handler_->on_established(*this);
}

// ---- arrival -------------------------------------------------------------

void Connection::on_packet(const xcp::XcpHeader& shim, const SegmentHeader& seg,
                           std::span<const uint8_t> payload, xcp::Timestamp now) {
  if (done()) return;
  ++stats_.packets_received;
  last_rx_ = now;
  if (seg.has(seg_flags::kRst)) {
    finish(ConnState::kFailed, ConnError::kReset);
    return;
  }
  // Every Standard packet from the peer crossed the routers: its allocation
  // goes back whole on our next packet (docs/protocol.md §3 receiver duty).
  if (shim.format == xcp::Format::kStandard && !seg.has(seg_flags::kSyn)) feedback_.on_data(shim);

  if (state_ == ConnState::kSynSent) {
    if (!seg.has(seg_flags::kSyn) || !seg.has(seg_flags::kAck)) return;
    if (seg.ts_ecr_us != 0) rtt_.on_sample(xcp::Duration::microseconds(wire_timestamp_us(now) - seg.ts_ecr_us));
    rx_.set_ts_recent(seg.ts_val_us);
    sack_ok_ = mode() == LossRecovery::kSack && seg.sack_permitted;
    board_.set_sack_negotiated(sack_ok_);
    peer_window_end_ = seg.window_bytes;
    enter_established(now);
    rx_.request_ack();
    pump(now);
    return;
  }
  if (seg.has(seg_flags::kSyn)) {
    // A repeated SYN (our SYN-ACK was lost) or SYN-ACK (our ACK was lost).
    rx_.set_ts_recent(seg.ts_val_us);
    if (state_ == ConnState::kSynReceived) {
      sack_ok_ = mode() == LossRecovery::kSack && seg.sack_permitted;
      board_.set_sack_negotiated(sack_ok_);
      send_control(seg_flags::kSyn | seg_flags::kAck, now);
    } else {
      rx_.request_ack();
      pump(now);
    }
    return;
  }
  if (state_ == ConnState::kSynReceived) {
    if (!seg.has(seg_flags::kAck)) return;
    if (seg.ts_ecr_us != 0) rtt_.on_sample(xcp::Duration::microseconds(wire_timestamp_us(now) - seg.ts_ecr_us));
    peer_window_end_ = seg.ack + seg.window_bytes;
    enter_established(now);
  }

  rx_.note_timestamp(seg.ts_val_us);
  const bool carries_data = !payload.empty() || seg.has(seg_flags::kFin);
  if (seg.has(seg_flags::kAck)) on_ack_field(shim, seg, carries_data, now);
  if (done()) return;
  if (carries_data) {
    rx_.on_segment(seg.seq, payload, seg.has(seg_flags::kFin), now, *this);
  }
  pump(now);  // before maybe_done(): the ACK of the peer's FIN must still leave
  maybe_done();
}

void Connection::on_ack_field(const xcp::XcpHeader& shim, const SegmentHeader& seg, bool carries_data,
                              xcp::Timestamp now) {
  // Without SACK (NewReno/Reno modes) blocks a peer sends anyway are ignored.
  const size_t blocks = mode() == LossRecovery::kSack ? seg.sack_count : 0;
  if (blocks > 0) peer_sends_sack_ = true;
  // An ACK that opens the peer's window is a window update, not a duplicate
  // (RFC 5681 §2: a duplicate leaves the advertised window unchanged).
  const bool window_update = seg.ack + seg.window_bytes > peer_window_end_;
  const AckUpdate upd = board_.on_ack(seg.ack, std::span<const SackBlock>(seg.sacks.data(), blocks),
                                      carries_data || window_update);
  // Without SACK the scoreboard takes each duplicate ACK as a segment
  // delivered past a hole (tcp_add_reno_sack). Outside fast recovery an advance
  // of snd_una ends what the duplicates before it meant (reordering,
  // duplicated segments), and kept they would stay in pipe for good. In the
  // go-back-N after an RTO, until data beyond the recovery point leaves, a
  // duplicate ACK answers a resent segment the peer already had: it frees
  // nothing (Linux tcp_process_loss counts them only once snd_nxt > high_seq).
  const bool fast_recovery = in_recovery_ && !recovery_after_rto_;
  const bool resending_after_rto = in_recovery_ && recovery_after_rto_ && board_.snd_nxt() <= recovery_point_;
  if ((upd.cumulative_advance_bytes > 0 && !fast_recovery) || (upd.duplicate && resending_after_rto)) {
    board_.forget_dupack_estimate();
  }
  last_ack_at_ = now;
  probe_sent_ = false;
  AckEvent ev;
  ev.now = now;
  ev.reverse_feedback_bytes = shim.reverse_feedback_bytes;
  if (shim.has_ixcp()) ev.echoed_next_bottleneck_id = shim.next_bottleneck_id;
  stats_.feedback_bytes += shim.reverse_feedback_bytes;
  if (!upd.stale) {
    peer_window_end_ = std::max(peer_window_end_, seg.ack + seg.window_bytes);
    if (upd.cumulative_advance_bytes > 0) {
      const uint64_t data_acked = std::min(seg.ack, write_end_);
      stats_.bytes_acked = data_acked;
      send_buf_.release_until(data_acked);
      if (fin_sent_ && seg.ack > write_end_) fin_acked_ = true;
      consecutive_timeouts_ = 0;
      if (seg.ts_ecr_us != 0) {
        ev.rtt_sample = xcp::Duration::microseconds(wire_timestamp_us(now) - seg.ts_ecr_us);
        rtt_.on_sample(*ev.rtt_sample);
      }
      if (cfg_.rtt.keep_backoff_until_new_data && seg.ack > backoff_held_until_) rtt_.end_backoff();
      rto_deadline_ = board_.outstanding_bytes() > 0 ? now + rtt_.rto() : xcp::Timestamp::max();
    }
  }
  ev.newly_acked_bytes = upd.newly_acked_bytes;
  ev.duplicate = upd.duplicate;
  ev.srtt = rtt_.srtt();
  ev.bytes_in_flight = board_.pipe();
  ev.in_recovery = in_recovery_;
  cc_->on_ack(ev);  // exactly once per ACK, duplicates and stale ones included

  check_lost_head_retransmission(seg, now);
  update_recovery(upd, now);
}

void Connection::on_bytes(std::span<const uint8_t> bytes) {
  stats_.bytes_received += bytes.size();
  if (handler_ && !done()) handler_->on_data(*this, bytes);
}

void Connection::on_fin() {
  if (handler_ && !done()) handler_->on_peer_fin(*this);
}

// ---- timers --------------------------------------------------------------

xcp::Timestamp Connection::idle_deadline() const {
  if (done() || state_ == ConnState::kSynSent || cfg_.idle_timeout <= xcp::Duration::zero()) {
    return xcp::Timestamp::max();
  }
  return last_rx_ + cfg_.idle_timeout;
}

xcp::Timestamp Connection::next_deadline() const {
  return std::min({rto_deadline_, rx_.delack_deadline(), idle_deadline(), probe_deadline(), persist_deadline_});
}

void Connection::on_timer(xcp::Timestamp now) {
  if (done()) return;
  if (rx_.delack_deadline() <= now) {
    rx_.on_delack_timer(now);
    if (rx_.ack_owed()) pump(now);
  }
  if (probe_deadline() <= now) send_probe(now);
  if (persist_deadline_ <= now) send_window_probe(now);
  if (rto_deadline_ <= now) on_retransmission_timeout(now);
  if (!done() && idle_deadline() <= now) abort(now, ConnError::kTimedOut);
}

void Connection::arm_rto(xcp::Timestamp now) { rto_deadline_ = now + rtt_.rto(); }

}  // namespace xcphost
