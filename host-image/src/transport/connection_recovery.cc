// Connection, loss recovery: fast-recovery entry and exit per ACK, partial
// ACKs, the lost-retransmission check, the tail-loss probe's deadline and the
// retransmission timeout. What differs between --loss-recovery modes
// (transport/loss_recovery.hh) is decided here and nowhere else.
#include <algorithm>

#include "transport/connection.hh"

namespace xcphost {
namespace {

// Timeouts allowed while only our FIN is unacknowledged and the peer has
// finished: the data is delivered, so giving up is quiet, not an error.
constexpr uint32_t kMaxFinTimeouts = 3;

}  // namespace

void Connection::update_recovery(const AckUpdate& upd, xcp::Timestamp now) {
  if (in_recovery_) {
    if (board_.snd_una() >= recovery_point_) {
      exit_recovery(now);  // after an RTO too: clears XCP's loss-fallback flag
    } else if (upd.cumulative_advance_bytes > 0) {
      if (mode() == LossRecovery::kReno && !recovery_after_rto_) {
        // RFC 5681 Reno: the first ACK of new data ends fast recovery, even a
        // partial one. Holes left in this window wait for the RTO (entry
        // below refuses a new fast retransmit until the recovery point).
        exit_recovery(now);
      } else if (!peer_sends_sack_) {
        board_.mark_head_lost();  // NewReno partial ACK (RFC 6582 §3.2 step 3)
        // Not in the go-back-N after an RTO: that repair is slow start, its
        // window clocks every segment (ns-2 routes those ACKs to newack()).
        retransmit_owed_ = !recovery_after_rto_;
      }
    }
    return;
  }
  if (board_.lost_bytes() == 0 || !board_.next_segment_to_retransmit()) return;
  // RFC 6582 §3.2 step 2 (ns-2's bug_fix_): without SACK, duplicate ACKs for
  // data sent before the last recovery point do not start another fast
  // retransmit. The SACK mode keeps its RFC 6675 entry unchanged.
  if (mode() != LossRecovery::kSack && board_.snd_una() < recovery_point_) return;
  in_recovery_ = true;
  recovery_after_rto_ = false;
  recovery_point_ = board_.snd_nxt();
  retransmit_owed_ = true;
  ++stats_.fast_recoveries;
  // RFC 5681 (4): ssthresh from FlightSize, the data outstanding (pipe would
  // already exclude what this very ACK declared lost).
  cc_->on_loss(now, board_.outstanding_bytes());
}

void Connection::exit_recovery(xcp::Timestamp now) {
  in_recovery_ = false;
  retransmit_owed_ = false;
  recovery_after_rto_ = false;
  board_.forget_dupack_estimate();  // Linux tcp_reset_reno_sack on leaving recovery
  cc_->on_recovery_exit(now);
}

void Connection::check_lost_head_retransmission(const SegmentHeader& seg, xcp::Timestamp now) {
  // A SACK-mode refinement: NewReno and Reno senders (RFC 6582, ns-2) leave a
  // lost retransmission to the RTO.
  if (!head_retx_seq_ || mode() != LossRecovery::kSack) return;
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
  if (!writer_.has_room()) return;
  const uint64_t una = board_.snd_una();
  if (fin_sent_ && una == write_end_) {
    send_segment(una, 0, true, true, now);
  } else {
    send_segment(una, static_cast<uint32_t>(std::min<uint64_t>(cfg_.mss_bytes, write_end_ - una)), false, true, now);
  }
}

xcp::Timestamp Connection::probe_deadline() const {
  // The tail-loss probe belongs to the SACK mode; NewReno and Reno senders
  // have only the RTO for a lost tail.
  if (mode() != LossRecovery::kSack || state_ != ConnState::kEstablished || probe_sent_ ||
      board_.outstanding_bytes() == 0 || !rtt_.has_sample()) {
    return xcp::Timestamp::max();
  }
  // RFC 8985 §7.2: PTO = 2·SRTT, plus the peer's delayed-ACK time when a
  // single segment is out (its ACK may legitimately wait that long).
  xcp::Duration pto = std::max(rtt_.srtt() * 2.0, xcp::Duration::milliseconds(10));
  if (board_.outstanding_bytes() <= cfg_.mss_bytes) pto += cfg_.delayed_ack_timeout;
  const xcp::Timestamp at = last_ack_at_ + pto;
  return at < rto_deadline_ ? at : xcp::Timestamp::max();  // the RTO comes first anyway
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
  backoff_held_until_ = board_.snd_nxt();
  board_.on_timeout();
  cc_->on_timeout(now);
  // Everything outstanding goes again from snd_una, in every mode (ns-2's
  // go-back-N after a timeout); the repair lasts until all of it is ACKed.
  in_recovery_ = true;
  recovery_after_rto_ = true;
  retransmit_owed_ = false;  // go-back-N is clocked by the (one-segment) window
  recovery_point_ = board_.snd_nxt();
  rto_deadline_ = xcp::Timestamp::max();
  pump(now);
  if (rto_deadline_ == xcp::Timestamp::max()) arm_rto(now);
}

}  // namespace xcphost
