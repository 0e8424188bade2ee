// `kind: ixcp`: iXCP's port law (ixcp/ixcp_queue.hh, IXCP.md).
#include "ixcp/ixcp_queue.hh"
#include "qdisc/kinds/kind.hh"

namespace xcprouter {

QdiscBuild read_qdisc_ixcp(const nlohmann::json& params) { return read_ixcp_qdisc(params); }

}  // namespace xcprouter
