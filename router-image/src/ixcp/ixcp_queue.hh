// Builds the queue of an iXCP port: the XCP queue (buffer, timers,
// persistent queue, optional fairness dropper) driven by an IxcpController.
//
// params: those of "xcp" (QUEUES.md) plus "link_id", the port's nonzero
// 32-bit link id, fixed when the queue is built (the plan records it; a live
// configure may not change it).
#pragma once

#include <cstdint>
#include <memory>

#include <nlohmann/json.hpp>

#include "qdisc/qdisc_factory.hh"

namespace xcprouter {

// Reads link_id and the XCP params once; the build makes the queue at a limit and seed.
QdiscBuild read_ixcp_qdisc(const nlohmann::json& params);

}  // namespace xcprouter
