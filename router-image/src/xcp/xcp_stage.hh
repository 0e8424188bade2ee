// Extension point of the XCP queue for the later protocol variants, so they
// plug in around the port's own controller instead of rewriting it:
//  - XCP-i (PROTOCOL.md §4): a table of virtual routers V(U), one per
//    upstream XCP router, each an XcpController with EstimatedSpareBandwidth
//    (S = BW_U) driven from the port's timeouts with the port's d and Q;
//    feeds on_arrival, lowers H_feedback in before_feedback, and rewrites
//    xcp_ttl/last_xcp_router in after_feedback.
//  - XCP–TCP fairness (§6): the SRED zombie estimator and p_drop; rejects
//    TCP arrivals in on_arrival (counted as DropCause::kFairness).
// iXCP (§5) changes the port's own law (y0, matching-only shuffling, a
// separate shuffle pool) and is a sibling controller built from the same
// xcp_control_law.hh pieces, selected by the factory.
#pragma once

#include <nlohmann/json.hpp>

#include "core/packet.hh"
#include "xcp/units.hh"
#include "xcp/xcp_control_law.hh"

namespace xcprouter {

class XcpStage {
 public:
  virtual ~XcpStage() = default;
  // Every arrival, before the buffer check. Return false to drop the packet.
  virtual bool on_arrival(Packet& /*p*/, xcp::Timestamp /*now*/) { return true; }
  // Departure, before the port's controller writes its feedback.
  virtual void before_feedback(Packet& /*p*/, xcp::Timestamp /*now*/) {}
  // Departure, after the port's controller wrote its feedback.
  virtual void after_feedback(Packet& /*p*/, xcp::Timestamp /*now*/) {}
  // After the port's control timeout; `port` holds the port's d and Q.
  virtual void on_timeout(const IntervalState& /*port*/, double /*elapsed_s*/) {}
  virtual void report(nlohmann::json& /*out*/) const {}
};

}  // namespace xcprouter
