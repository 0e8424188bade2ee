// DropTail: FIFO that drops arrivals once the packet or byte limit is reached.
// All accounting and the limit live in the Qdisc base; this is only the policy.
#pragma once

#include "qdisc/qdisc.hh"

namespace xcprouter {

class DropTail final : public Qdisc {
 public:
  explicit DropTail(QueueLimit limit) : Qdisc(limit) {}
  std::string_view kind() const override { return "droptail"; }
  // DropTail has no params: any key is rejected, naming it.
  void configure(const nlohmann::json& params) override;

 protected:
  bool do_enqueue(PacketPtr& p, xcp::Timestamp now, DropCause& cause) override;
  PacketPtr do_dequeue(xcp::Timestamp now) override;
};

}  // namespace xcprouter
