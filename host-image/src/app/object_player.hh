// Plays an object schedule (app/object_schedule.hh) on an Endpoint: opens one
// connection per object at its start offset, at most `max_concurrent` at a
// time (later objects wait, first come first served, and are counted), and
// measures each object's flow completion time.
//
// FCT = from the SYN being sent to the last payload byte being cumulatively
// acknowledged (bytes_acked reaching preamble + size): the time a web server
// needs to deliver the object, handshake included, close excluded. The slot is
// held until the connection is closed and the server's report read, which
// tells whether the object arrived intact.
//
// Clock-injected and socket-free: the owner calls step(now) after servicing
// the endpoint (xcpperf's I/O loop, or a simulated network in tests).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "app/client_stream.hh"
#include "app/object_schedule.hh"
#include "transport/endpoint.hh"

namespace xcphost {

enum class ObjectStatus { kPending, kRunning, kComplete, kFailed, kIncomplete, kNotStarted };
const char* to_string(ObjectStatus s);

struct ObjectResult {
  ObjectSpec spec;
  ObjectStatus status = ObjectStatus::kPending;
  std::optional<xcp::Duration> started;  // SYN sent, from t0
  std::optional<xcp::Duration> fct;      // SYN sent -> last byte acknowledged
  uint64_t retransmits = 0;              // segments
  uint64_t timeouts = 0;                 // retransmission timeouts
  uint64_t bytes_received = 0;           // payload bytes the server reported
  std::string error;                     // kFailed / kIncomplete: why
  ConnError conn_error = ConnError::kNone;  // kFailed by the connection
  bool altered = false;                  // the server got other bytes than sent
  bool waited = false;                   // due while every slot was taken
};

// Counters summed over every object's connection, finished ones included
// (bytes_acked: payload, preambles excluded; the other byte and packet counts
// are not summed).
using ObjectTotals = ConnectionStats;

class ObjectPlayer {
 public:
  struct Config {
    std::vector<ObjectSpec> objects;
    uint32_t max_concurrent = 32;
    ConnectionConfig conn;        // send buffer capped per object (see .cc)
    uint32_t remote_addr = 0;     // host order
    uint16_t remote_port = 0;
    uint16_t first_local_port = 32768;
    bool verify = false;
  };

  ObjectPlayer(Endpoint& ep, Config cfg, xcp::Timestamp t0);
  ObjectPlayer(const ObjectPlayer&) = delete;
  ObjectPlayer& operator=(const ObjectPlayer&) = delete;
  ~ObjectPlayer();

  // Starts due objects, records completions, frees slots. Returns the indexes
  // of objects that reached a final status in this call.
  std::vector<size_t> step(xcp::Timestamp now);
  // The next scheduled start a free slot is waiting for (max() if none).
  xcp::Timestamp next_wake() const;
  // End of the test (deadline or signal): objects not started become
  // kNotStarted, running ones without their last byte acknowledged are reset
  // and kIncomplete. Those already acknowledged keep waiting for their report.
  std::vector<size_t> stop(xcp::Timestamp now);
  // Every object has a final status.
  bool finished() const { return concluded_ == results_.size(); }
  // Gives up on objects still waiting for the server's report.
  std::vector<size_t> give_up(const std::string& why);

  const std::vector<ObjectResult>& results() const { return results_; }
  ObjectTotals totals() const;
  size_t active() const { return running_.size(); }
  uint32_t max_active() const { return max_active_; }
  uint32_t waited() const { return waited_; }
  // The most recently started live connection (its cwnd and RTT stand for the flow's).
  const Connection* newest() const { return running_.empty() ? nullptr : running_.back().conn; }
  // Local port of object `i` (unique for i < kMaxObjects; wraps in the port range).
  static uint16_t local_port(uint16_t first, size_t i);

 private:
  struct Running {
    size_t index;
    std::unique_ptr<ClientStream> app;
    Connection* conn;
  };
  void conclude(Running& r, std::vector<size_t>& out);
  void finish(size_t index, ObjectStatus s, std::string error, std::vector<size_t>& out);

  Endpoint& ep_;
  Config cfg_;
  xcp::Timestamp t0_;
  std::vector<ObjectResult> results_;
  std::vector<Running> running_;
  size_t next_ = 0;  // first object not started yet
  size_t concluded_ = 0;
  uint32_t max_active_ = 0;
  uint32_t waited_ = 0;
  size_t waited_upto_ = 0;  // objects below this index are already marked waited
  bool stopped_ = false;
  ObjectTotals done_totals_;  // of connections already removed
};

}  // namespace xcphost
