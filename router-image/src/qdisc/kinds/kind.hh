// One queue kind per file of this folder: `<kind>.cc` defines read_qdisc_<kind>(). The
// list of kinds is generated from the file names (router-image/CMakeLists.txt writes
// qdisc_kinds.inc: XCPLAB_QDISC_KIND(droptail) ...), so a new kind is a new file here
// (and its model in orchestrator/spec/queues/), with no list to edit.
#pragma once

#include <nlohmann/json.hpp>

#include "qdisc/qdisc_factory.hh"

namespace xcprouter {

// Reads and checks the queue's "params" object (null when absent) once, whole, and
// returns what builds that queue at a limit and seed; bad input throws
// std::invalid_argument naming "queue.params.<key>".
#define XCPLAB_QDISC_KIND(k) QdiscBuild read_qdisc_##k(const nlohmann::json& params);
#include "qdisc_kinds.inc"
#undef XCPLAB_QDISC_KIND

}  // namespace xcprouter
