// N XCP flows with individual RTTs sharing one bottleneck whose queue is an
// XcpQdisc draining at the link rate: the SIGCOMM'02 dumbbell in simulated
// time. Measurements come from the bottleneck's departure log and the
// controller's timeout times.
#pragma once

#include <memory>
#include <vector>

#include "qdisc/xcp_qdisc.hh"
#include "bottleneck.hh"
#include "event_queue.hh"
#include "xcp_flow.hh"

namespace xcprouter::sim {

struct DumbbellConfig {
  xcp::Rate link;
  double xcp_capacity_bps = 0;  // 0 = XCP uses the link rate; else a deliberate error
  uint64_t buffer_packets = 0;
  std::vector<FlowPath> flows;
  uint32_t packet_bytes = 1000;
  uint64_t seed = 1;
};

class XcpDumbbell {
 public:
  explicit XcpDumbbell(const DumbbellConfig& cfg)
      : qdisc_({.packets = cfg.buffer_packets, .bytes = 0}, XcpParams{}, cfg.seed),
        link_(ev_, qdisc_, cfg.link, [this](PacketPtr p, xcp::Timestamp t) {
          flows_[p->flow.sport]->on_delivered(*p, t);
        }) {
    if (cfg.xcp_capacity_bps > 0) qdisc_.configure({{"capacity_bps", cfg.xcp_capacity_bps}});
    link_.after_deadline = [this](xcp::Timestamp t) {
      while (timeouts_.size() < qdisc_.controller().counters().intervals) timeouts_.push_back(t);
    };
    for (size_t i = 0; i < cfg.flows.size(); ++i) {
      flows_.push_back(std::make_unique<XcpFlow>(
          ev_, static_cast<uint16_t>(i), cfg.flows[i], cfg.packet_bytes,
          [this](PacketPtr p, xcp::Timestamp t) { return link_.arrive(std::move(p), t); }));
      flows_.back()->start(xcp::Timestamp::zero());
    }
  }

  void run_until(xcp::Timestamp end) { ev_.run_until(end); }

  // Bytes/s of `flow` leaving the bottleneck in [t0, t1).
  double throughput(uint16_t flow, xcp::Timestamp t0, xcp::Timestamp t1) const {
    double bytes = 0;
    for (const auto& d : link_.departures()) {
      if (d.flow == flow && d.t >= t0 && d.t < t1) bytes += d.bytes;
    }
    return bytes / (t1 - t0).seconds_f();
  }
  double total_throughput(xcp::Timestamp t0, xcp::Timestamp t1) const {
    double bytes = 0;
    for (const auto& d : link_.departures()) {
      if (d.t >= t0 && d.t < t1) bytes += d.bytes;
    }
    return bytes / (t1 - t0).seconds_f();
  }
  // Largest / mean queue (bytes) seen at departures in [t0, t1).
  double max_queue(xcp::Timestamp t0, xcp::Timestamp t1) const {
    double m = 0;
    for (const auto& d : link_.departures()) {
      if (d.t >= t0 && d.t < t1) m = std::max(m, static_cast<double>(d.queue_bytes_after));
    }
    return m;
  }
  double mean_queue(xcp::Timestamp t0, xcp::Timestamp t1) const {
    double sum = 0;
    size_t n = 0;
    for (const auto& d : link_.departures()) {
      if (d.t >= t0 && d.t < t1) {
        sum += static_cast<double>(d.queue_bytes_after);
        ++n;
      }
    }
    return n ? sum / static_cast<double>(n) : 0;
  }

  // Time of the k-th control timeout (1-based).
  xcp::Timestamp timeout(size_t k) const { return timeouts_.at(k - 1); }
  size_t timeouts() const { return timeouts_.size(); }
  const XcpQdisc& qdisc() const { return qdisc_; }
  const XcpFlow& flow(size_t i) const { return *flows_.at(i); }
  size_t flow_count() const { return flows_.size(); }

 private:
  EventQueue ev_;
  XcpQdisc qdisc_;
  Bottleneck link_;
  std::vector<std::unique_ptr<XcpFlow>> flows_;
  std::vector<xcp::Timestamp> timeouts_;
};

}  // namespace xcprouter::sim
