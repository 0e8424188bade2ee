// One queue kind per file of this folder: `<kind>.cc` defines make_qdisc_<kind>(). The
// list of kinds is generated from the file names (router-image/CMakeLists.txt writes
// qdisc_kinds.inc: XCPLAB_QDISC_KIND(droptail) ...), so a new kind is a new file here
// (and its model in orchestrator/spec/queues/), with no list to edit.
#pragma once

#include <cstdint>
#include <memory>

#include <nlohmann/json.hpp>

#include "qdisc/qdisc.hh"

namespace xcprouter {

// `params` is the queue's "params" object (null when absent); bad input throws
// std::invalid_argument naming "queue.params.<key>".
#define XCPLAB_QDISC_KIND(k) \
  std::unique_ptr<Qdisc> make_qdisc_##k(QueueLimit limit, const nlohmann::json& params, uint64_t seed);
#include "qdisc_kinds.inc"
#undef XCPLAB_QDISC_KIND

}  // namespace xcprouter
