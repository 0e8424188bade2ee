#include "transport/connection.hh"

#include <algorithm>
#include <array>
#include <limits>

namespace xcphost {
namespace {

// Timeouts allowed while only our FIN is unacknowledged and the peer has
// finished: the data is delivered, so giving up is quiet, not an error.
constexpr uint32_t kMaxFinTimeouts = 3;

}  // namespace

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
                       ConnectionHandler* handler, PacketSink& sink)
    : cfg_(cfg),
      key_(key),
      active_(active),
      handler_(handler),
      sink_(sink),
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
  // goes back whole on our next packet (PROTOCOL.md §3 receiver duty).
  if (shim.format == xcp::Format::kStandard && !seg.has(seg_flags::kSyn)) feedback_.on_data(shim);

  if (state_ == ConnState::kSynSent) {
    if (!seg.has(seg_flags::kSyn) || !seg.has(seg_flags::kAck)) return;
    if (seg.ts_ecr_us != 0) rtt_.on_sample(xcp::Duration::microseconds(wire_timestamp_us(now) - seg.ts_ecr_us));
    rx_.set_ts_recent(seg.ts_val_us);
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
  if (seg.has(seg_flags::kAck)) on_ack_field(shim, seg, now);
  if (done()) return;
  if (!payload.empty() || seg.has(seg_flags::kFin)) {
    rx_.on_segment(seg.seq, payload, seg.has(seg_flags::kFin), now, *this);
  }
  pump(now);  // before maybe_done(): the ACK of the peer's FIN must still leave
  maybe_done();
}

void Connection::on_ack_field(const xcp::XcpHeader& shim, const SegmentHeader& seg,
                              xcp::Timestamp now) {
  if (seg.sack_count > 0) peer_sends_sack_ = true;
  const AckUpdate upd =
      board_.on_ack(seg.ack, std::span<const SackBlock>(seg.sacks.data(), seg.sack_count));
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
  if (in_recovery_) {
    if (board_.snd_una() >= recovery_point_) {
      in_recovery_ = false;
      cc_->on_recovery_exit(now);  // after an RTO too: clears XCP's loss-fallback flag
    } else if (upd.cumulative_advance_bytes > 0 && !peer_sends_sack_) {
      board_.mark_head_lost();  // NewReno partial ACK (RFC 6582 §3.2 step 3)
    }
  } else if (board_.lost_bytes() > 0 && board_.next_segment_to_retransmit()) {
    in_recovery_ = true;
    recovery_point_ = board_.snd_nxt();
    ++stats_.fast_recoveries;
    // RFC 5681 (4): ssthresh from FlightSize, the data outstanding (pipe would
    // already exclude what this very ACK declared lost).
    cc_->on_loss(now, board_.outstanding_bytes());
  }
}

void Connection::check_lost_head_retransmission(const SegmentHeader& seg, xcp::Timestamp now) {
  if (!head_retx_seq_) return;
  if (board_.snd_una() != *head_retx_seq_ || board_.outstanding_bytes() == 0) {
    head_retx_seq_.reset();  // the head moved: that retransmission arrived
    return;
  }
  // The peer echoes the ts_val of the segment that triggered this ACK. If that
  // segment left after our retransmission of the head, yet the head is still
  // missing, the retransmission was lost (the idea of RFC 8985 RACK, with
  // echoed timestamps as the send-time record). Without this, a lost
  // retransmission waits for the RTO, and a sender kept busy by SACKs can
  // lose the RTO's retransmission too, again and again.
  if (seg.ts_ecr_us == 0 || static_cast<int32_t>(seg.ts_ecr_us - head_retx_ts_us_) <= 0) return;
  if (!sink_.has_room()) return;
  const uint64_t una = board_.snd_una();
  if (fin_sent_ && una == write_end_) {
    send_segment(una, 0, true, true, now);
  } else {
    send_segment(una, static_cast<uint32_t>(std::min<uint64_t>(cfg_.mss_bytes, write_end_ - una)), false, true, now);
  }
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

xcp::Timestamp Connection::probe_deadline() const {
  if (state_ != ConnState::kEstablished || probe_sent_ || board_.outstanding_bytes() == 0 ||
      !rtt_.has_sample()) {
    return xcp::Timestamp::max();
  }
  // RFC 8985 §7.2: PTO = 2·SRTT, plus the peer's delayed-ACK time when a
  // single segment is out (its ACK may legitimately wait that long).
  xcp::Duration pto = std::max(rtt_.srtt() * 2.0, xcp::Duration::milliseconds(10));
  if (board_.outstanding_bytes() <= cfg_.mss_bytes) pto += cfg_.delayed_ack_timeout;
  const xcp::Timestamp at = last_ack_at_ + pto;
  return at < rto_deadline_ ? at : xcp::Timestamp::max();  // the RTO comes first anyway
}

xcp::Timestamp Connection::next_deadline() const {
  return std::min({rto_deadline_, rx_.delack_deadline(), idle_deadline(), probe_deadline()});
}

void Connection::on_timer(xcp::Timestamp now) {
  if (done()) return;
  if (rx_.delack_deadline() <= now) {
    rx_.on_delack_timer(now);
    if (rx_.ack_owed()) pump(now);
  }
  if (probe_deadline() <= now) send_probe(now);
  if (rto_deadline_ <= now) on_retransmission_timeout(now);
  if (!done() && idle_deadline() <= now) abort(now, ConnError::kTimedOut);
}

void Connection::on_retransmission_timeout(xcp::Timestamp now) {
  rtt_.on_timeout();
  ++stats_.timeouts;
  if (state_ == ConnState::kSynSent) {
    if (now - started_at_ >= cfg_.connect_timeout) {
      finish(ConnState::kFailed, ConnError::kConnectTimeout);
      return;
    }
    send_control(seg_flags::kSyn, now);
    rto_deadline_ = now + rtt_.rto();
    return;
  }
  if (state_ == ConnState::kSynReceived) {
    rto_deadline_ = xcp::Timestamp::max();  // the client repeats its SYN; nothing to resend
    return;
  }
  ++consecutive_timeouts_;
  const bool only_fin_left = fin_sent_ && board_.snd_una() == write_end_ && rx_.fin_received();
  if (only_fin_left && consecutive_timeouts_ > kMaxFinTimeouts) {
    finish(ConnState::kClosed, ConnError::kNone);
    return;
  }
  if (consecutive_timeouts_ > cfg_.max_consecutive_timeouts) {
    abort(now, ConnError::kTimedOut);
    return;
  }
  board_.on_timeout();
  cc_->on_timeout(now);
  in_recovery_ = true;
  recovery_point_ = board_.snd_nxt();
  rto_deadline_ = xcp::Timestamp::max();
  pump(now);
  if (rto_deadline_ == xcp::Timestamp::max()) arm_rto(now);
}

void Connection::arm_rto(xcp::Timestamp now) { rto_deadline_ = now + rtt_.rto(); }

}  // namespace xcphost
