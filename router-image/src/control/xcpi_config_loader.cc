#include "control/xcpi_config_loader.hh"

#include <stdexcept>

#include "contract_bounds.hh"
#include "qdisc/param_reader.hh"
#include "util/json_keys.hh"
#include "util/net_address.hh"

namespace xcprouter {

namespace {

using nlohmann::json;

[[noreturn]] void fail(const std::string& where, const std::string& what) {
  throw std::invalid_argument(where + ": " + what);
}

LinkRef parse_link_ref(const json& j, const std::string& where) {
  if (!j.is_object()) fail(where, "must be an object {router, port, direction}");
  if (auto u = find_unknown_key(j, {"router", "port", "direction"})) {
    fail(where + "." + u->key, "unknown field (valid: " + u->valid + ")");
  }
  LinkRef r;
  auto str = [&](const char* k) {
    auto it = j.find(k);
    if (it == j.end() || !it->is_string() || it->get<std::string>().empty()) {
      fail(where + "." + k, "required non-empty string");
    }
    return it->get<std::string>();
  };
  r.router = str("router");
  r.port = str("port");
  if (auto it = j.find("direction"); it != j.end()) {
    if (*it != "egress" && *it != "ingress") fail(where + ".direction", "must be \"egress\" or \"ingress\", got " + it->dump());
    r.ingress = *it == "ingress";
  }
  return r;
}

OracleConfig parse_oracle(const json& j, const std::string& where) {
  if (!j.is_object()) fail(where, "must be an object {error, period_s, paths}");
  json scalars = json::object();
  for (const auto& [k, v] : j.items()) {
    if (k != "paths") scalars[k] = v;
  }
  ParamReader r(scalars, where);
  OracleConfig o;
  o.error = r.number_or("error", 0.0, bounds::kXcpiOracleError);
  o.period = r.seconds_or("period_s", xcp::Duration::zero(), bounds::kXcpiOraclePeriodS);
  r.finish();
  if (auto it = j.find("paths"); it != j.end()) {
    if (!it->is_array()) fail(where + ".paths", "must be an array");
    for (size_t i = 0; i < it->size(); ++i) {
      const std::string w = where + ".paths[" + std::to_string(i) + "]";
      const json& pj = (*it)[i];
      if (!pj.is_object()) fail(w, "must be an object {upstream, links}");
      if (auto u = find_unknown_key(pj, {"upstream", "links"})) fail(w + "." + u->key, "unknown field (valid: " + u->valid + ")");
      OraclePath p;
      auto up = pj.find("upstream");
      auto a = up != pj.end() && up->is_string() ? parse_ipv4(up->get<std::string>()) : std::nullopt;
      if (!a) fail(w + ".upstream", "must be an IPv4 address like \"10.0.0.1\"");
      p.upstream = *a;
      auto links = pj.find("links");
      if (links == pj.end() || !links->is_array() || links->empty()) fail(w + ".links", "must be a non-empty array");
      for (size_t k = 0; k < links->size(); ++k) {
        p.links.push_back(parse_link_ref((*links)[k], w + ".links[" + std::to_string(k) + "]"));
      }
      o.paths.push_back(std::move(p));
    }
  }
  return o;
}

ChirpConfig parse_chirp(const json& j, const std::string& where, double& overhead_out) {
  ParamReader r(j, where);
  // for_rate() derives L, the delay floor and the period from the largest
  // rate and the probe overhead, for the probe size read here; the rest keeps
  // XCPI_ESTIMATOR.md's defaults.
  const double max_rate = r.number_or("max_rate_bps", 10e6, bounds::kXcpiChirpMaxRateBps);
  const double overhead = r.number_or("overhead", 0.02, bounds::kXcpiChirpOverhead);
  overhead_out = overhead;
  ChirpConfig c;
  c.packet_bytes = static_cast<uint32_t>(r.number_or("packet_bytes", c.packet_bytes, bounds::kXcpiChirpPacketBytes));
  c.chirps_per_estimate = static_cast<uint32_t>(r.number_or("chirps_per_estimate", c.chirps_per_estimate, bounds::kXcpiChirpsPerEstimate));
  c.min_chirps = static_cast<uint32_t>(r.number_or("min_chirps", c.min_chirps, bounds::kXcpiMinChirps));
  r.finish();
  c = c.for_rate(xcp::Rate::from_bits_per_s(max_rate), overhead);
  if (c.min_chirps > c.chirps_per_estimate) fail(where + ".min_chirps", "must not exceed chirps_per_estimate");
  try {
    c.validate();
  } catch (const std::invalid_argument& e) {
    fail(where, e.what());
  }
  return c;
}

}  // namespace

XcpiConfig parse_xcpi_config(const json& j, const std::string& where) {
  if (!j.is_object()) fail(where, "must be an object");
  json scalars = json::object();
  for (const auto& [k, v] : j.items()) {
    if (k != "oracle" && k != "chirp") scalars[k] = v;
  }
  ParamReader r(scalars, where);
  XcpiConfig c;
  const auto est = r.choice("estimator", {"oracle", "chirp"});
  c.estimator = est && *est == "chirp" ? EstimatorKind::kChirp : EstimatorKind::kOracle;
  c.max_upstreams = static_cast<uint32_t>(r.number_or("max_upstreams", c.max_upstreams, bounds::kXcpiMaxUpstreams));
  auto secs = [&](const char* key, xcp::Duration cur) { return r.seconds_or(key, cur, bounds::kXcpiTimerS); };
  c.idle_timeout = secs("idle_timeout_s", c.idle_timeout);
  c.request_timeout = secs("request_timeout_s", c.request_timeout);
  c.reestimate_period = secs("reestimate_period_s", c.reestimate_period);
  c.broken_holdoff = secs("broken_holdoff_s", c.broken_holdoff);
  c.estimate_max_age = secs("estimate_max_age_s", c.estimate_max_age);
  c.request_attempts = static_cast<uint32_t>(r.number_or("request_attempts", c.request_attempts, bounds::kXcpiRequestAttempts));
  c.chirps_per_request = static_cast<uint32_t>(r.number_or("chirps_per_request", c.chirps_per_request, bounds::kXcpiChirpsPerRequest));
  if (auto b = r.boolean("cloud_queue")) c.cloud_queue = *b;
  r.finish();
  if (auto it = j.find("oracle"); it != j.end()) c.oracle = parse_oracle(*it, where + ".oracle");
  if (auto it = j.find("chirp"); it != j.end()) c.chirp = parse_chirp(*it, where + ".chirp", c.chirp_overhead);
  return c;
}

}  // namespace xcprouter
