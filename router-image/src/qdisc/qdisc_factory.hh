// The one factory of queue disciplines (schema in router-image/QUEUES.md).
//
//   {"kind": <a file of qdisc/kinds/>,
//    "limit_packets": N,   // optional, 0/absent = no packet bound
//    "limit_bytes": N,     // optional, 0/absent = no byte bound
//    "params": {...}}      // kind-specific, optional
//
// A queue's config is read once (read_queue_config: the config loader, at load time)
// into a QueueConfig whose `build` holds the kind's params already read and checked;
// the router builds each link's queue from it with that link's seed. Nothing is built
// to validate and nothing is parsed twice.
//
// Bad input throws std::invalid_argument naming the field ("queue.kind",
// "queue.params.max_p", ...) and the valid values.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "qdisc/qdisc.hh"

namespace xcprouter {

// A kind's queue at a limit; `seed` feeds every random choice of the discipline (RED
// drops, XCP stochastic rounding) so runs are repeatable.
using QdiscBuild = std::function<std::unique_ptr<Qdisc>(QueueLimit limit, uint64_t seed)>;

// One link's queue as its config says, read and checked.
struct QueueConfig {
  std::string kind;
  QueueLimit limit;
  QdiscBuild build;  // the kind's (qdisc/kinds/<kind>.cc), its params read
  std::unique_ptr<Qdisc> make(uint64_t seed) const { return build(limit, seed); }
};

QueueConfig read_queue_config(const nlohmann::json& queue_cfg);

// read_queue_config(queue_cfg).make(seed): a queue straight from its JSON (tests, tools).
std::unique_ptr<Qdisc> make_qdisc(const nlohmann::json& queue_cfg, uint64_t seed);

// The kinds there are (the files of qdisc/kinds/), comma-separated, for error
// messages and `xcp-router --list-queue-kinds`.
std::string_view qdisc_kinds();

}  // namespace xcprouter
