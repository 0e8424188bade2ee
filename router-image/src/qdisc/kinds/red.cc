// `kind: red`: RED with gentle mode (QUEUES.md "red").
#include "qdisc/kinds/kind.hh"
#include "qdisc/red.hh"

namespace xcprouter {

std::unique_ptr<Qdisc> make_qdisc_red(QueueLimit limit, const nlohmann::json& params, uint64_t seed) {
  return std::make_unique<Red>(limit, parse_red_params(params, RedParams{}), seed);
}

}  // namespace xcprouter
