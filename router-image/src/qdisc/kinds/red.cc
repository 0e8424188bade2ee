// `kind: red`: RED with gentle mode (QUEUES.md "red").
#include "qdisc/kinds/kind.hh"
#include "qdisc/red.hh"

namespace xcprouter {

QdiscBuild read_qdisc_red(const nlohmann::json& params) {
  const RedParams p = parse_red_params(params, RedParams{});
  return [p](QueueLimit limit, uint64_t seed) { return std::make_unique<Red>(limit, p, seed); };
}

}  // namespace xcprouter
