// `kind: droptail`: FIFO, tail drop at the limit; no params.
#include "qdisc/drop_tail.hh"
#include "qdisc/kinds/kind.hh"
#include "qdisc/param_reader.hh"

namespace xcprouter {

QdiscBuild read_qdisc_droptail(const nlohmann::json& params) {
  ParamReader(params, "queue.params").finish();  // DropTail takes no params
  return [](QueueLimit limit, uint64_t) { return std::make_unique<DropTail>(limit); };
}

}  // namespace xcprouter
