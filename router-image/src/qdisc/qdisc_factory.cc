#include "qdisc/qdisc_factory.hh"

#include <stdexcept>
#include <string>

#include "control/link_fields.hh"
#include "ixcp/ixcp_queue.hh"
#include "qdisc/drop_tail.hh"
#include "qdisc/param_reader.hh"
#include "qdisc/red.hh"
#include "qdisc/xcp_qdisc.hh"

namespace xcprouter {

namespace {

constexpr const char* kContext = "queue";

}  // namespace

std::string_view qdisc_kinds() { return "droptail, red, xcp, xcpi, ixcp"; }

std::unique_ptr<Qdisc> make_qdisc(const nlohmann::json& cfg, uint64_t seed) {
  if (!cfg.is_object()) {
    throw std::invalid_argument(std::string(kContext) + ": must be an object with \"kind\", got " + cfg.dump());
  }
  for (const auto& [k, _] : cfg.items()) {
    if (k != "kind" && k != "limit_packets" && k != "limit_bytes" && k != "params") {
      throw std::invalid_argument(std::string(kContext) + "." + k +
                                  ": unknown field, valid: kind, limit_packets, limit_bytes, params");
    }
  }
  auto kind_it = cfg.find("kind");
  if (kind_it == cfg.end() || !kind_it->is_string()) {
    throw std::invalid_argument(std::string(kContext) + ".kind: missing or not a string, valid values: " +
                                std::string(qdisc_kinds()));
  }
  const std::string kind = kind_it->get<std::string>();
  const QueueLimit limit{read_queue_limit(cfg, "limit_packets", kContext).value_or(0),
                         read_queue_limit(cfg, "limit_bytes", kContext).value_or(0)};
  static const nlohmann::json kNoParams;
  auto params_it = cfg.find("params");
  const nlohmann::json& params = params_it == cfg.end() ? kNoParams : *params_it;
  ParamReader reader(params, std::string(kContext) + ".params");

  if (kind == "droptail") {
    reader.finish();  // DropTail takes no params
    return std::make_unique<DropTail>(limit);
  }
  if (kind == "red") {
    return std::make_unique<Red>(limit, parse_red_params(params, RedParams{}), seed);
  }
  if (kind == "xcp" || kind == "xcpi") {
    auto q = std::make_unique<XcpQdisc>(limit, XcpParams{}, seed, kind == "xcp" ? "xcp" : "xcpi");
    q->configure(params);  // one parser for build-time and live params
    return q;
  }
  if (kind == "ixcp") return make_ixcp_qdisc(limit, params, seed);
  throw std::invalid_argument(std::string(kContext) + ".kind: unknown \"" + kind +
                              "\", valid values: " + std::string(qdisc_kinds()));
}

}  // namespace xcprouter
