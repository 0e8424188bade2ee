// Extension point of the XCP queue: work that plugs in around the port's own
// controller instead of rewriting it. Its one user is the XCP–TCP fairness
// dropper (docs/protocol.md §6, src/fairness/): the SRED zombie estimator and
// p_drop; it rejects TCP arrivals in on_arrival (DropCause::kFairness).
// XCP-i (§4) is not a stage: a cloud lies before the router, so its virtual
// routers belong to the router (src/xcpi/xcpi_node.hh). iXCP (§5) changes the
// port's own law and is a controller of its own (src/ixcp/).
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
