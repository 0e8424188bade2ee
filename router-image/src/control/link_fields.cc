#include "control/link_fields.hh"

#include <cstdio>
#include <stdexcept>

#include "contract_bounds.hh"

namespace xcprouter {

namespace {

using nlohmann::json;

[[noreturn]] void fail(const std::string& field, const std::string& what) {
  throw std::invalid_argument(field + ": " + what);
}

std::string num(double x) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.10g", x);
  return buf;
}

const json* find(const json& j, const char* key) {
  auto it = j.find(key);
  return it == j.end() || it->is_null() ? nullptr : &*it;
}

// An integer within `b` (scaled: the table's seconds are the field's microseconds).
std::optional<uint64_t> read_uint(const json& j, const char* key, const std::string& where, const Bound& b,
                                  double scale = 1.0, bool zero_means_none = false) {
  const json* v = find(j, key);
  if (!v) return std::nullopt;
  const std::string field = where + "." + key;
  const double lo = b.lo * scale, hi = b.hi * scale;
  const std::string unit = scale == 1.0 ? std::string(b.unit) : "us";
  const std::string valid = (zero_means_none ? "0 (no bound) or " : "") + std::string("an integer in [") +
                            num(lo) + ", " + num(hi) + "] " + unit + " (" + b.why + ")";
  if (!v->is_number_integer() || (!v->is_number_unsigned() && v->get<int64_t>() < 0)) {
    fail(field, "must be " + valid + ", got " + v->dump());
  }
  const uint64_t x = v->get<uint64_t>();
  if (zero_means_none && x == 0) return x;
  if (!(static_cast<double>(x) >= lo && static_cast<double>(x) <= hi)) {
    fail(field, v->dump() + " out of range, valid " + valid);
  }
  return x;
}

}  // namespace

std::optional<uint64_t> read_capacity(const json& j, const char* key, const std::string& where) {
  return read_uint(j, key, where, bounds::kLinkCapacityBps);
}

std::optional<uint64_t> read_queue_limit(const json& j, const char* key, const std::string& where) {
  const Bound& b = std::string_view(key) == "limit_packets" ? bounds::kLinkLimitPackets : bounds::kLinkLimitBytes;
  return read_uint(j, key, where, b, 1.0, /*zero_means_none=*/true);
}

void check_queue_limit(const QueueLimit& limit, const std::string& where) {
  if (limit.packets == 0 && limit.bytes == 0) {
    fail(where, "needs limit_packets or limit_bytes > 0 (an unbounded buffer is not a link)");
  }
}

LinkFields read_link_fields(const json& j, const std::string& where) {
  LinkFields f;
  f.capacity_bps = read_uint(j, "capacity_bps", where, bounds::kLinkCapacityBps);
  if (auto us = read_uint(j, "delay_us", where, bounds::kLinkDelayS, 1e6)) {
    f.delay = xcp::Duration::microseconds(static_cast<int64_t>(*us));
  }
  f.limit_packets = read_queue_limit(j, "limit_packets", where);
  f.limit_bytes = read_queue_limit(j, "limit_bytes", where);
  if (const json* v = find(j, "loss")) f.loss = LossConfig::from_json(*v, where + ".loss");
  if (const json* v = find(j, "up")) {
    if (!v->is_boolean()) fail(where + ".up", "must be true or false, got " + v->dump());
    f.up = v->get<bool>();
  }
  return f;
}

}  // namespace xcprouter
