// `kind: xcp`: the XCP router's port law (QUEUES.md "xcp").
#include "qdisc/kinds/kind.hh"
#include "qdisc/xcp_qdisc.hh"

namespace xcprouter {

QdiscBuild read_qdisc_xcp(const nlohmann::json& params) {
  const XcpPortSettings s = read_xcp_port_settings(params, XcpPortSettings{});  // live configure's reader too
  return [s](QueueLimit limit, uint64_t seed) {
    auto q = std::make_unique<XcpQdisc>(limit, XcpParams{}, seed, "xcp");
    q->apply(s);
    return q;
  };
}

}  // namespace xcprouter
