// `kind: droptail`: FIFO, tail drop at the limit; no params.
#include "qdisc/drop_tail.hh"
#include "qdisc/kinds/kind.hh"
#include "qdisc/param_reader.hh"

namespace xcprouter {

std::unique_ptr<Qdisc> make_qdisc_droptail(QueueLimit limit, const nlohmann::json& params, uint64_t) {
  ParamReader(params, "queue.params").finish();  // DropTail takes no params
  return std::make_unique<DropTail>(limit);
}

}  // namespace xcprouter
