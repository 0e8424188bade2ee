// The estimation protocol of one upstream XCP-i router U, seen from the
// downstream router R (docs/protocol.md §4, seed 000 §III-A.3), as a pure state
// machine with injected time: R requests, waits request_timeout for the
// acknowledgement, retries; after request_attempts unanswered requests the
// path U->R is broken until a packet from U arrives after the hold-off; while
// U is active the request repeats every reestimate_period.
//
// It never sends anything itself: calls return the request to send (if any),
// so tests drive it with a fake clock and the owner does the I/O.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "xcp/units.hh"
#include "xcpi/xcpi_config.hh"

namespace xcprouter {

struct SessionCounters {
  uint64_t requests = 0;       // sent (first attempts and retries)
  uint64_t acks = 0;           // matching acknowledgements received
  uint64_t stale_acks = 0;     // acks of another session or an old attempt
  uint64_t timeouts = 0;       // request_timeout expiries
  uint64_t broken = 0;         // times the path was declared broken
};

class EstimationSession {
 public:
  enum class State : uint8_t { kIdle, kRequesting, kEstablished, kBroken };

  struct Request {
    uint32_t session;
    uint32_t seq;
  };

  EstimationSession(const XcpiConfig& config, uint32_t session_id);

  // A packet from U crossed the cloud to us at `now`.
  std::optional<Request> on_packet(xcp::Timestamp now);
  // U acknowledged (session, seq).
  void on_ack(uint32_t session, uint32_t seq, xcp::Timestamp now);
  // Due work at `now` (retries, breakage, periodic re-estimation).
  std::optional<Request> on_deadline(xcp::Timestamp now);
  xcp::Timestamp next_deadline() const;

  State state() const { return state_; }
  bool acknowledged() const { return acked_once_; }
  xcp::Timestamp last_packet() const { return last_packet_; }
  const SessionCounters& counters() const { return counters_; }
  uint32_t session_id() const { return session_; }

 private:
  Request send(xcp::Timestamp now);

  const XcpiConfig& config_;
  uint32_t session_;
  State state_ = State::kIdle;
  uint32_t seq_ = 0;           // attempt number of the last request sent
  uint32_t attempts_ = 0;      // unanswered attempts of the current round
  bool acked_once_ = false;
  xcp::Timestamp last_packet_{};
  xcp::Timestamp ack_deadline_ = xcp::Timestamp::max();
  xcp::Timestamp next_round_ = xcp::Timestamp::max();
  xcp::Timestamp broken_since_{};
  SessionCounters counters_;
};

std::string_view to_string(EstimationSession::State s);

}  // namespace xcprouter
