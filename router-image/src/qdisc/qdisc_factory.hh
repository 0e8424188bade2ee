// The one factory of queue disciplines (schema in router-image/QUEUES.md).
//
//   {"kind": "droptail" | "red" | "xcp" | "xcpi" | "ixcp",
//    "limit_packets": N,   // optional, 0/absent = no packet bound
//    "limit_bytes": N,     // optional, 0/absent = no byte bound
//    "params": {...}}      // kind-specific, optional
//
// Bad input throws std::invalid_argument naming the field ("queue.kind",
// "queue.params.max_p", ...) and the valid values.
#pragma once

#include <cstdint>
#include <memory>
#include <string_view>

#include <nlohmann/json.hpp>

#include "qdisc/qdisc.hh"

namespace xcprouter {

// `seed` feeds every random choice of the discipline (RED drops, XCP
// stochastic rounding) so runs are repeatable.
std::unique_ptr<Qdisc> make_qdisc(const nlohmann::json& queue_cfg, uint64_t seed);

// The kinds make_qdisc accepts, for error messages and the planner.
std::string_view qdisc_kinds();

}  // namespace xcprouter
