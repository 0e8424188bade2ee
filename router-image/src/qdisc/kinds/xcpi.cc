// `kind: xcpi`: an XCP-i router's port runs XCP's port law (QUEUES.md "xcpi"); its
// router-level options are the router config's `xcpi` object (CONFIG.md).
#include "qdisc/kinds/kind.hh"
#include "qdisc/xcp_qdisc.hh"

namespace xcprouter {

std::unique_ptr<Qdisc> make_qdisc_xcpi(QueueLimit limit, const nlohmann::json& params, uint64_t seed) {
  auto q = std::make_unique<XcpQdisc>(limit, XcpParams{}, seed, "xcpi");
  q->configure(params);
  return q;
}

}  // namespace xcprouter
