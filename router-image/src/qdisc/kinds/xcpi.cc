// `kind: xcpi`: an XCP-i router's port runs XCP's port law (QUEUES.md "xcpi"); its
// router-level options are the router config's `xcpi` object (CONFIG.md).
#include "qdisc/kinds/kind.hh"
#include "qdisc/xcp_qdisc.hh"

namespace xcprouter {

QdiscBuild read_qdisc_xcpi(const nlohmann::json& params) {
  const XcpPortSettings s = read_xcp_port_settings(params, XcpPortSettings{});
  return [s](QueueLimit limit, uint64_t seed) {
    auto q = std::make_unique<XcpQdisc>(limit, XcpParams{}, seed, "xcpi");
    q->apply(s);
    return q;
  };
}

}  // namespace xcprouter
