// K XCP/iXCP links in series, each flow entering at one link and leaving
// after another (seed 001 Fig. 6: a long flow over three links, short flows
// over one each). Link i has id i + 1 (iXCP) and a propagation delay
// `hop` to the next link or the receiver. iXCP flows start with id 0 ("no
// id"), as the engine's flows do once their idle access port released
// them (IXCP.md).
#pragma once

#include <memory>
#include <vector>

#include "bottleneck.hh"
#include "event_queue.hh"
#include "qdisc/qdisc_factory.hh"
#include "xcp_flow.hh"

namespace xcprouter::sim {

struct ChainFlow {
  size_t first = 0, last = 0;  // links crossed: first..last
  double start_s = 0;
};

struct LinkChainConfig {
  std::vector<xcp::Rate> links;
  std::vector<ChainFlow> flows;
  xcp::Duration hop = xcp::Duration::milliseconds(20);     // each link's propagation delay
  xcp::Duration access = xcp::Duration::milliseconds(1);   // sender → first link, last link → receiver
  uint64_t buffer_packets = 400;
  bool ixcp = true;
};

class LinkChain {
 public:
  explicit LinkChain(const LinkChainConfig& cfg) : cfg_(cfg) {
    for (size_t i = 0; i < cfg.links.size(); ++i) {
      nlohmann::json q = {{"kind", cfg.ixcp ? "ixcp" : "xcp"}, {"limit_packets", cfg.buffer_packets}};
      if (cfg.ixcp) q["params"] = {{"link_id", i + 1}};
      queues_.push_back(make_qdisc(q, i + 1));
    }
    for (size_t i = 0; i < cfg.links.size(); ++i) {
      links_.push_back(std::make_unique<Bottleneck>(
          ev_, *queues_[i], cfg.links[i], [this, i](PacketPtr p, xcp::Timestamp t) { leave(i, std::move(p), t); }));
    }
    for (size_t f = 0; f < cfg.flows.size(); ++f) {
      const ChainFlow& cf = cfg.flows[f];
      const size_t k = cf.last - cf.first + 1;
      // One way: access, k links' propagation, access; ACKs return as fast.
      const FlowPath path{cfg.access, cfg.hop + cfg.access, cfg.hop * static_cast<double>(k) + cfg.access * 2};
      flows_.push_back(std::make_unique<XcpFlow>(ev_, static_cast<uint16_t>(f), path, 1000,
                                                 [this, cf](PacketPtr p, xcp::Timestamp t) {
                                                   return links_[cf.first]->arrive(std::move(p), t);
                                                 }));
      if (cfg.ixcp) flows_.back()->use_ixcp(0);
      flows_.back()->start(xcp::Timestamp::zero() + xcp::Duration::seconds(cf.start_s));
    }
  }

  void run_until(xcp::Timestamp end) { ev_.run_until(end); }

  // Bytes/s leaving link `link` in [t0, t1) of flow `flow`.
  double rate(size_t link, size_t flow, xcp::Timestamp t0, xcp::Timestamp t1) const {
    double bytes = 0;
    for (const auto& d : links_[link]->departures()) {
      if (d.t >= t0 && d.t < t1 && d.flow == flow) bytes += d.bytes;
    }
    return bytes / (t1 - t0).seconds_f();
  }
  // Bytes/s leaving link `link` in [t0, t1), all flows.
  double link_rate(size_t link, xcp::Timestamp t0, xcp::Timestamp t1) const {
    double bytes = 0;
    for (const auto& d : links_[link]->departures()) {
      if (d.t >= t0 && d.t < t1) bytes += d.bytes;
    }
    return bytes / (t1 - t0).seconds_f();
  }
  const XcpFlow& flow(size_t i) const { return *flows_[i]; }
  const Qdisc& queue(size_t link) const { return *queues_[link]; }

 private:
  void leave(size_t link, PacketPtr p, xcp::Timestamp t) {
    const ChainFlow& cf = cfg_.flows[p->flow.sport];
    if (link == cf.last) {
      flows_[p->flow.sport]->on_delivered(*p, t);
      return;
    }
    Packet* raw = p.release();
    ev_.at(t + cfg_.hop, [this, raw, link](xcp::Timestamp t2) { links_[link + 1]->arrive(PacketPtr(raw), t2); });
  }

  LinkChainConfig cfg_;
  EventQueue ev_;
  std::vector<std::unique_ptr<Qdisc>> queues_;
  std::vector<std::unique_ptr<Bottleneck>> links_;
  std::vector<std::unique_ptr<XcpFlow>> flows_;
};

}  // namespace xcprouter::sim
