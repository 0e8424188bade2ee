// `kind: ixcp`: iXCP's port law (ixcp/ixcp_queue.hh, IXCP.md).
#include "ixcp/ixcp_queue.hh"
#include "qdisc/kinds/kind.hh"

namespace xcprouter {

std::unique_ptr<Qdisc> make_qdisc_ixcp(QueueLimit limit, const nlohmann::json& params, uint64_t seed) {
  return make_ixcp_qdisc(limit, params, seed);
}

}  // namespace xcprouter
