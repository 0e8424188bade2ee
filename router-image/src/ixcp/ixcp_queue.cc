#include "ixcp/ixcp_queue.hh"

#include <stdexcept>
#include <string>

#include "ixcp/ixcp_controller.hh"
#include "qdisc/xcp_qdisc.hh"

namespace xcprouter {

namespace {

constexpr const char* kLinkIdField = "queue.params.link_id";

uint32_t read_link_id(const nlohmann::json& params) {
  const auto it = params.is_object() ? params.find("link_id") : params.end();
  if (!params.is_object() || it == params.end()) {
    throw std::invalid_argument(std::string(kLinkIdField) +
                                ": required for kind ixcp, an integer in [1, 4294967295] (the planner draws it)");
  }
  if (!it->is_number_integer() || it->get<int64_t>() < 1 || it->get<int64_t>() > int64_t{UINT32_MAX}) {
    throw std::invalid_argument(std::string(kLinkIdField) + ": must be an integer in [1, 4294967295], got " +
                                it->dump());
  }
  return static_cast<uint32_t>(it->get<int64_t>());
}

}  // namespace

QdiscBuild read_ixcp_qdisc(const nlohmann::json& params) {
  const uint32_t id = read_link_id(params);
  nlohmann::json rest = params;
  rest.erase("link_id");
  // the XCP params, through XCP's one reader
  const XcpPortSettings s = read_xcp_port_settings(rest, XcpPortSettings{});
  return [id, s](QueueLimit limit, uint64_t seed) {
    const XcpParams defaults;
    auto q = std::make_unique<XcpQdisc>(
        limit,
        [&](std::unique_ptr<SpareBandwidth> spare) {
          return std::make_unique<IxcpController>(defaults, std::move(spare), seed, id);
        },
        defaults, seed, "ixcp");
    q->apply(s);
    return q;
  };
}

}  // namespace xcprouter
