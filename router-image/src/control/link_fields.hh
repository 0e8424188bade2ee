// One reader for the fields of an emulated link direction, used both when the
// engine loads its config (parse_link_config, every link object) and when the
// control socket changes a running link (set_link), so the two accept the same
// values, from the bound table shared with the spec validator
// (xcplab_contract/bounds.json), and refuse them in the same words:
// "WHERE.FIELD: what was given, what is valid (why)".
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "core/loss_model.hh"
#include "qdisc/qdisc.hh"
#include "xcp/units.hh"

namespace xcprouter {

// What a link object or a set_link request gives; nullopt = not given.
struct LinkFields {
  std::optional<uint64_t> capacity_bps;
  std::optional<xcp::Duration> delay;
  std::optional<uint64_t> limit_packets;  // 0 = no bound on that axis
  std::optional<uint64_t> limit_bytes;
  std::optional<LossConfig> loss;
  std::optional<bool> up;
};

// Reads capacity_bps, delay_us, limit_packets, limit_bytes, loss and up from `j`
// where present (unknown keys are the caller's: the two objects differ around
// them). `where` prefixes every message ("routers[0].ports[1].egress", "set_link").
LinkFields read_link_fields(const nlohmann::json& j, const std::string& where);

// A rate in bit/s within the table's link capacity bound (a link's or a port's
// receive rate, `rx_capacity_bps`).
std::optional<uint64_t> read_capacity(const nlohmann::json& j, const char* key, const std::string& where);

// One queue limit axis: 0 (no bound on that axis) or within the table's bound.
std::optional<uint64_t> read_queue_limit(const nlohmann::json& j, const char* key, const std::string& where);

// A link needs a bound on at least one axis: an unbounded buffer is not a link.
void check_queue_limit(const QueueLimit& limit, const std::string& where);

}  // namespace xcprouter
