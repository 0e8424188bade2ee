// The XCP queue of one output port: a DropTail FIFO whose arrivals and
// departures drive an XcpController (docs/protocol.md §2), plus the
// persistent-queue estimator and the two timers (control interval d, queue
// window Tq) exposed through next_deadline()/on_deadline().
//
// C is the drain rate given by set_capacity() — the port shapes its output at
// C, so this queue is the bottleneck queue. configure({"capacity_bps": x})
// decouples the controller's C from the real rate (an experiment's wrong
// capacity estimate); 0 restores "C = link rate".
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <vector>

#include "fairness/fairness_params.hh"
#include "qdisc/qdisc.hh"
#include "xcp/persistent_queue.hh"
#include "xcp/spare_bandwidth.hh"
#include "xcp/xcp_controller.hh"
#include "xcp/xcp_stage.hh"

namespace xcprouter {

class FairnessStage;

// The port params of the XCP family (QUEUES.md "xcp": the law's constants and
// intervals, capacity_bps, the fairness dropper's), as one value read from a queue's
// `params` before anything changes.
struct XcpPortSettings {
  XcpParams law;
  std::optional<double> capacity_bps;  // given: the controller's C (0 = the link rate again)
  FairnessParams fairness;
};

// `params` over `current` (a key left out keeps current's value), checked as a whole;
// throws std::invalid_argument naming "queue.params.<key>".
XcpPortSettings read_xcp_port_settings(const nlohmann::json& params, const XcpPortSettings& current);

class XcpQdisc final : public Qdisc {
 public:
  // Builds the port's control law around the port's spare bandwidth S = C − y.
  using LawMaker = std::function<std::unique_ptr<XcpController>(std::unique_ptr<SpareBandwidth>)>;

  // `kind` is "xcp", or "xcpi" on an XCP-i router's ports (same port law;
  // the router adds the virtual routers, xcpi/xcpi_node.hh).
  XcpQdisc(QueueLimit limit, XcpParams params, uint64_t seed, std::string_view kind = "xcp");
  // Another law behind the same queue, timers and stages ("ixcp",
  // src/ixcp/ixcp_controller.hh).
  XcpQdisc(QueueLimit limit, const LawMaker& make_law, const XcpParams& params, uint64_t seed,
           std::string_view kind);

  std::string_view kind() const override { return kind_; }
  void set_capacity(xcp::Rate c) override;
  std::optional<xcp::Timestamp> next_deadline() const override;
  void on_deadline(xcp::Timestamp now) override;
  void report(nlohmann::json& out) const override;
  // Live params (QUEUES.md "xcp"): alpha, beta, gamma, capacity_bps, ...
  // = apply(read_xcp_port_settings(params, settings())).
  void configure(const nlohmann::json& params) override;
  // Settings read once (the config loader's read_queue_config) take effect here.
  void apply(const XcpPortSettings& s);
  XcpPortSettings settings() const { return {controller_->params(), std::nullopt, fairness_params_}; }

  // C the controller uses (bytes/s).
  double xcp_capacity() const { return link_spare_->capacity(); }
  double persistent_queue() const { return pq_.value(); }
  XcpController& controller() { return *controller_; }
  const XcpController& controller() const { return *controller_; }
  void add_stage(std::unique_ptr<XcpStage> stage) { stages_.push_back(std::move(stage)); }
  // The XCP–TCP fairness dropper (params tcp_fairness, fairness_*), or null.
  const FairnessStage* fairness() const { return fairness_; }

 protected:
  bool do_enqueue(PacketPtr& p, xcp::Timestamp now, DropCause& cause) override;
  PacketPtr do_dequeue(xcp::Timestamp now) override;

 private:
  void start_timers(xcp::Timestamp now);
  void apply_fairness(const FairnessParams& k);

  std::string_view kind_;
  LinkSpareBandwidth* link_spare_;  // owned by controller_
  std::unique_ptr<XcpController> controller_;
  PersistentQueue pq_;
  std::vector<std::unique_ptr<XcpStage>> stages_;
  uint64_t seed_;
  FairnessParams fairness_params_;
  FairnessStage* fairness_ = nullptr;  // owned by stages_ while enabled
  double capacity_override_ = 0;  // bytes/s, 0 = follow set_capacity()
  bool started_ = false;
  xcp::Timestamp last_timeout_{};
  xcp::Timestamp next_timeout_ = xcp::Timestamp::max();
};

}  // namespace xcprouter
