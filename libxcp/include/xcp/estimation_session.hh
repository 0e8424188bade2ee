// The estimation protocol of one upstream XCP-i router U, seen from the
// downstream router R (docs/protocol.md §4, seed 000 §III-A.3), as a pure state
// machine with injected time: R requests, waits request_timeout for the
// acknowledgement, retries; after request_attempts unanswered requests the
// path U->R is broken until a packet from U arrives after the hold-off; while
// U is active the request repeats every reestimate_period.
//
// It never sends anything itself: calls return the request to send (if any),
// so tests drive it with a fake clock and the owner does the I/O. Two owners:
// the engine's XCP-i routers (router-image/src/xcpi/) and a receiver host that
// runs V itself (host-image/src/xcpi/receiver_xcpi.hh).
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "xcp/units.hh"

namespace xcp {

// The protocol's timing, which seed 000 leaves open ([decide] in
// docs/protocol.md §4); the engine's XcpiConfig extends it.
struct EstimationTiming {
  // xcp_req_timeout: wait for U's acknowledgement. The paper leaves it open;
  // 200 ms exceeds the round trip of every seed topology (<= 330 ms is the
  // SIGCOMM'02 extreme, for which 500 ms should be configured).
  Duration request_timeout = Duration::milliseconds(200);
  // Unanswered requests before the path U->R is declared broken (paper: 3).
  uint32_t request_attempts = 3;
  // While U is active R asks again this often (periodic re-estimation).
  Duration reestimate_period = Duration::seconds(1.0);
  // A broken path is retried on the first packet from U after this hold-off
  // ([decide]: "until a new packet from U arrives" taken literally restarts at
  // once, since data from U keeps arriving; the hold-off bounds request traffic).
  Duration broken_holdoff = Duration::seconds(1.0);
};

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

  EstimationSession(const EstimationTiming& config, uint32_t session_id);

  // A packet from U crossed the cloud to us at `now`.
  std::optional<Request> on_packet(Timestamp now);
  // U acknowledged (session, seq).
  void on_ack(uint32_t session, uint32_t seq, Timestamp now);
  // Due work at `now` (retries, breakage, periodic re-estimation).
  std::optional<Request> on_deadline(Timestamp now);
  Timestamp next_deadline() const;

  State state() const { return state_; }
  bool acknowledged() const { return acked_once_; }
  Timestamp last_packet() const { return last_packet_; }
  const SessionCounters& counters() const { return counters_; }
  uint32_t session_id() const { return session_; }

 private:
  Request send(Timestamp now);

  const EstimationTiming& config_;  // outlives the session (its owner's config)
  uint32_t session_;
  State state_ = State::kIdle;
  uint32_t seq_ = 0;           // attempt number of the last request sent
  uint32_t attempts_ = 0;      // unanswered attempts of the current round
  bool acked_once_ = false;
  Timestamp last_packet_{};
  Timestamp ack_deadline_ = Timestamp::max();
  Timestamp next_round_ = Timestamp::max();
  Timestamp broken_since_{};
  SessionCounters counters_;
};

std::string_view to_string(EstimationSession::State s);

// A random session id for a new entry: never 0 and not held by any entry in `owners`
// (session -> upstream), so a late acknowledgement to an expired entry cannot be
// taken for its successor's. Engine routers and receiver hosts share it.
template <typename Rng, typename Owners>
uint32_t fresh_session_id(Rng& rng, const Owners& owners) {
  uint32_t session = 0;
  do {
    session = static_cast<uint32_t>(rng.next_u64());
  } while (session == 0 || owners.contains(session));
  return session;
}

// Removes from `table` (upstream -> owning pointer to an entry with a `session`)
// every entry whose U sent nothing for longer than `idle` (the paper's "stopped
// after an inactivity period"), and its session id from `owners` (session ->
// upstream). Returns how many went. Engine routers and receiver hosts share it.
template <typename Table, typename Owners>
uint64_t expire_idle(Table& table, Owners& owners, Duration idle, Timestamp now) {
  uint64_t removed = 0;
  for (auto it = table.begin(); it != table.end();) {
    if (now - it->second->session.last_packet() > idle) {
      owners.erase(it->second->session.session_id());
      it = table.erase(it);
      ++removed;
    } else {
      ++it;
    }
  }
  return removed;
}

}  // namespace xcp

// The engine's code (namespace xcprouter) names these unqualified; they moved
// here so the host stack's receiver-side virtual router shares them.
namespace xcprouter {
using xcp::EstimationTiming;
using xcp::SessionCounters;
using xcp::EstimationSession;
}  // namespace xcprouter
