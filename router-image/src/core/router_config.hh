// Typed engine configuration, parsed once at the edge (control/config_loader)
// from the JSON schema in router-image/CONFIG.md. Algorithms never parse text.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/loss_model.hh"
#include "qdisc/qdisc_factory.hh"
#include "util/net_address.hh"
#include "xcpi/xcpi_config.hh"
#include "xcp/units.hh"

namespace xcprouter {

struct LinkConfig {
  uint64_t capacity_bps = 0;
  xcp::Duration delay = xcp::Duration::zero();
  QueueConfig queue;  // read once by the config loader; Router builds it with the link's seed
  LossConfig loss;
  bool up = true;
  xcp::Rate capacity() const { return xcp::Rate::from_bits_per_s(static_cast<double>(capacity_bps)); }
};

struct PortConfig {
  std::string name;
  std::string ifname;
  std::optional<MacAddress> mac;  // resolved from the interface when absent
  Ipv4Prefix ipv4;                // the port's own address (host bits kept)
  LinkConfig egress;
  std::optional<LinkConfig> ingress;
  // The rate frames arrive at (the peer's sending direction of this link); sizes the
  // port's receive ring. Absent: the larger of egress and ingress stands in.
  std::optional<uint64_t> rx_capacity_bps;
  xcp::Rate rx_rate() const {
    if (rx_capacity_bps) return xcp::Rate::from_bits_per_s(static_cast<double>(*rx_capacity_bps));
    const xcp::Rate e = egress.capacity();
    return ingress && ingress->capacity() > e ? ingress->capacity() : e;
  }
};

struct RouteConfig {
  Ipv4Prefix prefix;
  uint16_t port = 0;  // index into RouterConfig::ports
  MacAddress next_hop_mac;
};

struct RouterConfig {
  std::string name;
  std::string netns;  // empty: the engine's own namespace
  uint32_t xcp_address = 0;
  std::vector<PortConfig> ports;
  std::vector<RouteConfig> routes;
  // Present when the router speaks XCP-i (docs/protocol.md §4).
  std::optional<XcpiConfig> xcpi;
};

struct EngineConfig {
  std::string run;
  uint64_t seed = 0;
  std::string control_socket;
  bool busy_poll = false;
  // Spin instead of sleeping when the next link event is closer than this:
  // a timerfd sleep/wakeup costs several microseconds, a packet at 1 Gb/s 12.
  xcp::Duration spin = xcp::Duration::microseconds(20);
  // > 0: run under SCHED_FIFO at this priority (1..99) so other processes
  // cannot delay the emulation; 0: normal scheduling.
  int sched_priority = 0;
  // Fraction of a core above which the engine stops spinning (wait_policy.hh,
  // WaitPolicy::kMinCpuCap..1.0, 1.0 = no budget); unset: the kernel's
  // real-time budget less a margin under SCHED_FIFO, none otherwise (engine.cc).
  std::optional<double> cpu_cap;
  xcp::Duration lateness_threshold = xcp::Duration::microseconds(100);
  std::vector<RouterConfig> routers;
};

}  // namespace xcprouter
