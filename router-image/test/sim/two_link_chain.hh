// Two XCP bottlenecks in series (Low's topology, seed 001): "long" flows
// cross link 1 then link 2, "short" flows cross link 1 only. Exercises the
// multi-hop rule that a router only ever lowers H_feedback. With
// `ixcp = true` both links run iXCP (ids 1 and 2) and every flow starts from
// link 1's id, its access link.
#pragma once

#include <memory>
#include <vector>

#include "bottleneck.hh"
#include "event_queue.hh"
#include "qdisc/qdisc_factory.hh"
#include "xcp_flow.hh"

namespace xcprouter::sim {

struct ChainConfig {
  xcp::Rate link1, link2;
  uint64_t buffer_packets = 200;
  size_t long_flows = 1, short_flows = 1;
  xcp::Duration hop = xcp::Duration::milliseconds(10);  // link 1 → link 2
  // to_receiver counts from the flow's last link; long flows also spend `hop`.
  FlowPath long_path, short_path;
  bool ixcp = false;
};

// Low's topology (155 then 100 Mb/s) scaled to 20 then 10 Mb/s: the long
// flows' downstream link is the tighter one. Both paths have an 80 ms RTT.
inline ChainConfig low_chain(size_t long_flows, bool ixcp = false) {
  ChainConfig cfg;
  cfg.link1 = xcp::Rate::from_megabits_per_s(20);
  cfg.link2 = xcp::Rate::from_megabits_per_s(10);
  cfg.long_flows = long_flows;
  cfg.short_flows = 1;
  cfg.long_path = {xcp::Duration::milliseconds(5), xcp::Duration::milliseconds(20), xcp::Duration::milliseconds(45)};
  cfg.short_path = {xcp::Duration::milliseconds(5), xcp::Duration::milliseconds(30), xcp::Duration::milliseconds(45)};
  cfg.ixcp = ixcp;
  return cfg;
}

inline std::unique_ptr<Qdisc> chain_queue(const ChainConfig& cfg, uint32_t link_id) {
  nlohmann::json q = {{"kind", cfg.ixcp ? "ixcp" : "xcp"}, {"limit_packets", cfg.buffer_packets}};
  if (cfg.ixcp) q["params"] = {{"link_id", link_id}};
  return make_qdisc(q, link_id);
}

class TwoLinkChain {
 public:
  explicit TwoLinkChain(const ChainConfig& cfg)
      : long_flows_(cfg.long_flows),
        hop_(cfg.hop),
        q1_(chain_queue(cfg, 1)),
        q2_(chain_queue(cfg, 2)),
        l1_(ev_, *q1_, cfg.link1, [this](PacketPtr p, xcp::Timestamp t) { leave_link1(std::move(p), t); }),
        l2_(ev_, *q2_, cfg.link2,
            [this](PacketPtr p, xcp::Timestamp t) { flows_[p->flow.sport]->on_delivered(*p, t); }) {
    for (size_t i = 0; i < cfg.long_flows + cfg.short_flows; ++i) {
      const FlowPath& path = i < cfg.long_flows ? cfg.long_path : cfg.short_path;
      flows_.push_back(std::make_unique<XcpFlow>(ev_, static_cast<uint16_t>(i), path, 1000,
                                                 [this](PacketPtr p, xcp::Timestamp t) {
                                                   return l1_.arrive(std::move(p), t);
                                                 }));
      if (cfg.ixcp) flows_.back()->use_ixcp(1);
      flows_.back()->start(xcp::Timestamp::zero());
    }
  }

  void run_until(xcp::Timestamp end) { ev_.run_until(end); }

  // Bytes/s leaving link 1 or 2 in [t0, t1), of flows [first, last).
  double rate(int link, size_t first, size_t last, xcp::Timestamp t0, xcp::Timestamp t1) const {
    double bytes = 0;
    for (const auto& d : (link == 1 ? l1_ : l2_).departures()) {
      if (d.t >= t0 && d.t < t1 && d.flow >= first && d.flow < last) bytes += d.bytes;
    }
    return bytes / (t1 - t0).seconds_f();
  }
  size_t flow_count() const { return flows_.size(); }
  const Qdisc& queue(int link) const { return link == 1 ? *q1_ : *q2_; }
  const XcpFlow& flow(size_t i) const { return *flows_[i]; }

 private:
  void leave_link1(PacketPtr p, xcp::Timestamp t) {
    if (p->flow.sport >= long_flows_) {
      flows_[p->flow.sport]->on_delivered(*p, t);
      return;
    }
    Packet* raw = p.release();
    ev_.at(t + hop_, [this, raw](xcp::Timestamp t2) { l2_.arrive(PacketPtr(raw), t2); });
  }

  size_t long_flows_;
  xcp::Duration hop_;
  EventQueue ev_;
  std::unique_ptr<Qdisc> q1_, q2_;
  Bottleneck l1_, l2_;
  std::vector<std::unique_ptr<XcpFlow>> flows_;
};

}  // namespace xcprouter::sim
