// xcp-stackd --json-stream: the stack's per-connection state as JSON lines on
// stdout, for the agent that samples an `app:` flow (docs/socket-stack.md) the
// way it samples xcpperf's --json-stream. Lines:
//   {"event":"start","data":{"socket":"@xcp-stackd"}}           once, when serving
//   {"event":"listen","data":{"port":8080}}                     a listen() was accepted
//   {"event":"interval","data":{"t_s":..,"streams":[STREAM..]}}  every interval with connections
//   {"event":"closed","data":STREAM}                             a connection's last state
// STREAM = {"socket":"LPORT-ADDR:RPORT","local_port","remote_addr","remote_port","cc",
//           "state","bytes","bytes_received","cwnd","srtt_us","retransmits","timeouts",
//           "feedback_bytes"}; byte and event counters are cumulative (a closed
// connection's last line is exact even when it lived shorter than an interval).
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cc/congestion_controller.hh"
#include "socket/xcpsock.h"
#include "transport/connection.hh"
#include "xcp/clock.hh"

namespace xcpstackd {

// A connection's state as the C API reports it (xcpsock_info) plus what the
// report needs beyond it.
struct ConnSnapshot {
  xcphost::FlowKey key{};
  xcphost::CcKind cc = xcphost::CcKind::kNewReno;
  struct ::xcpsock_info info{};
  uint64_t timeouts = 0;
};

struct ::xcpsock_info connection_info(const xcphost::Connection& c);
ConnSnapshot snapshot_of(const xcphost::Connection& c, xcphost::CcKind cc);
nlohmann::json stream_json(const ConnSnapshot& s);

class StatsReport {
 public:
  // `out` null: reporting off (every call is a no-op).
  StatsReport(std::FILE* out, xcp::Duration interval, xcp::Timestamp start);

  bool enabled() const { return out_ != nullptr; }
  // True once per interval; the caller then writes one interval().
  bool due(xcp::Timestamp now);
  void started(const std::string& socket);
  void listening(uint16_t port);
  void interval(xcp::Timestamp now, const std::vector<ConnSnapshot>& streams);
  void closed(const ConnSnapshot& s);

 private:
  void line(const nlohmann::json& j);

  std::FILE* out_;
  xcp::Duration interval_;
  xcp::Timestamp start_;
  xcp::Timestamp next_;
};

}  // namespace xcpstackd
