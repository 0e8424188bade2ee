// `kind: xcp`: the XCP router's port law (QUEUES.md "xcp").
#include "qdisc/kinds/kind.hh"
#include "qdisc/xcp_qdisc.hh"

namespace xcprouter {

std::unique_ptr<Qdisc> make_qdisc_xcp(QueueLimit limit, const nlohmann::json& params, uint64_t seed) {
  auto q = std::make_unique<XcpQdisc>(limit, XcpParams{}, seed, "xcp");
  q->configure(params);  // one parser for build-time and live params
  return q;
}

}  // namespace xcprouter
