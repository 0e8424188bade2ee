#include "xcp/estimation_session.hh"

#include <algorithm>

namespace xcp {

std::string_view to_string(EstimationSession::State s) {
  switch (s) {
    case EstimationSession::State::kIdle: return "idle";
    case EstimationSession::State::kRequesting: return "requesting";
    case EstimationSession::State::kEstablished: return "established";
    case EstimationSession::State::kBroken: return "broken";
  }
  return "unknown";
}

EstimationSession::EstimationSession(const EstimationTiming& config, uint32_t session_id)
    : config_(config), session_(session_id) {}

EstimationSession::Request EstimationSession::send(Timestamp now) {
  ++seq_;
  ++attempts_;
  ++counters_.requests;
  state_ = State::kRequesting;
  ack_deadline_ = now + config_.request_timeout;
  return {session_, seq_};
}

std::optional<EstimationSession::Request> EstimationSession::on_packet(Timestamp now) {
  last_packet_ = now;
  if (state_ == State::kIdle) {
    attempts_ = 0;
    return send(now);
  }
  if (state_ == State::kBroken && now >= broken_since_ + config_.broken_holdoff) {
    attempts_ = 0;
    return send(now);
  }
  return std::nullopt;
}

void EstimationSession::on_ack(uint32_t session, uint32_t seq, Timestamp now) {
  // Only the acknowledgement of the attempt in flight counts: an ack of an
  // earlier, timed-out attempt arriving late still proves U is reachable, but
  // mixing attempts would hide a path that loses most requests.
  if (session != session_ || state_ != State::kRequesting || seq != seq_) {
    ++counters_.stale_acks;
    return;
  }
  ++counters_.acks;
  acked_once_ = true;
  attempts_ = 0;
  state_ = State::kEstablished;
  ack_deadline_ = Timestamp::max();
  next_round_ = now + config_.reestimate_period;
}

std::optional<EstimationSession::Request> EstimationSession::on_deadline(Timestamp now) {
  if (state_ == State::kRequesting && now >= ack_deadline_) {
    ++counters_.timeouts;
    if (attempts_ >= config_.request_attempts) {
      ++counters_.broken;
      state_ = State::kBroken;
      broken_since_ = now;
      acked_once_ = false;
      ack_deadline_ = Timestamp::max();
      return std::nullopt;
    }
    return send(now);
  }
  if (state_ == State::kEstablished && now >= next_round_) {
    next_round_ = Timestamp::max();
    // Re-estimate only while U is active; an idle U is left to expire.
    if (now - last_packet_ <= config_.reestimate_period) {
      attempts_ = 0;
      return send(now);
    }
  }
  return std::nullopt;
}

Timestamp EstimationSession::next_deadline() const {
  switch (state_) {
    case State::kRequesting: return ack_deadline_;
    case State::kEstablished: return next_round_;
    default: return Timestamp::max();
  }
}

}  // namespace xcp
