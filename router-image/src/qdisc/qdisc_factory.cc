#include "qdisc/qdisc_factory.hh"

#include <stdexcept>
#include <string>

#include "control/link_fields.hh"
#include "qdisc/kinds/kind.hh"
#include "qdisc/param_reader.hh"

namespace xcprouter {

namespace {

constexpr const char* kContext = "queue";

}  // namespace

// From the files of qdisc/kinds/ (qdisc_kinds.inc, generated), in file-name order.
std::string_view qdisc_kinds() {
  static const std::string names = [] {
    std::string out;
#define XCPLAB_QDISC_KIND(k) out += (out.empty() ? "" : ", ") + std::string(#k);
#include "qdisc_kinds.inc"
#undef XCPLAB_QDISC_KIND
    return out;
  }();
  return names;
}

QueueConfig read_queue_config(const nlohmann::json& cfg) {
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
  const ParamReader object_or_absent(params, std::string(kContext) + ".params");  // for every kind
#define XCPLAB_QDISC_KIND(k) \
  if (kind == #k) return QueueConfig{kind, limit, read_qdisc_##k(params)};
#include "qdisc_kinds.inc"
#undef XCPLAB_QDISC_KIND
  throw std::invalid_argument(std::string(kContext) + ".kind: unknown \"" + kind +
                              "\", valid values: " + std::string(qdisc_kinds()));
}

std::unique_ptr<Qdisc> make_qdisc(const nlohmann::json& cfg, uint64_t seed) {
  return read_queue_config(cfg).make(seed);
}

}  // namespace xcprouter
