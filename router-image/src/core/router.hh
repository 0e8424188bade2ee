// One emulated router: its ports' link emulation (optional ingress link,
// egress link), the route table, and the forwarding stage between them.
//
//   receive(port) -> parse -> [ingress link] -> forward: local? / route /
//   TTL-1 -> egress link of the output port -> transmit sink of that port
//
// Sockets are outside: the engine calls receive() with frames it read and
// gives one transmit sink per port, so the whole router runs under a fake
// clock in tests. Nothing on this path throws or logs: every drop is counted.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/link.hh"
#include "core/route_table.hh"
#include "core/router_config.hh"
#include "xcpi/xcpi_node.hh"

namespace xcprouter {

struct PortCounters {
  uint64_t rx_packets = 0, rx_bytes = 0;  // frames received (Ethernet bytes)
  uint64_t tx_packets = 0, tx_bytes = 0;  // frames handed to the transmit sink
  uint64_t drops_malformed = 0, drops_non_ipv4 = 0, drops_ttl = 0, drops_no_route = 0;
  uint64_t drops_not_for_us = 0, drops_local = 0;
  uint64_t xcp_shim_malformed = 0;  // forwarded as non-XCP (docs/protocol.md §1)
  uint64_t icmp_echo_replies = 0;
  uint64_t icmp_time_exceeded = 0;  // sent back for TTL drops (rate-limited)
};

class Router {
 public:
  // `config.ports[i].mac` must be resolved. `tx[i]` transmits frames of port
  // i. `first_port_index` is this router's first port's index in the whole
  // config (random stream numbering, CONFIG.md).
  Router(const RouterConfig& config, uint64_t seed, uint64_t first_port_index, std::vector<PacketSink*> tx);
  Router(const Router&) = delete;
  Router& operator=(const Router&) = delete;

  const std::string& name() const { return name_; }
  size_t port_count() const { return ports_.size(); }
  const std::string& port_name(size_t i) const { return ports_[i]->config.name; }
  // -1 when unknown.
  int find_port(const std::string& name) const;

  // A frame received on port `port` at `now` (its arrival time, which may be
  // earlier than the engine's clock); `for_us` is false for frames
  // the NIC saw addressed elsewhere (PACKET_OTHERHOST/BROADCAST/MULTICAST).
  void receive(uint16_t port, PacketPtr p, xcp::Timestamp now, bool for_us = true);

  // The engine's clock when it offers frames stamped with (earlier) arrival
  // times: the links' lateness statistics measure against it.
  void note_wall_time(xcp::Timestamp now);

  // What is due next after advance(): next_deadline() and next_delivery().
  struct Upcoming {
    xcp::Timestamp deadline = xcp::Timestamp::max();
    xcp::Timestamp delivery = xcp::Timestamp::max();
  };
  // Runs every link's events due by `now` and returns what is due next, read
  // in the same pass over the links (a second pass only when a link's output
  // was offered to another link of this router meanwhile).
  Upcoming advance(xcp::Timestamp now);
  xcp::Timestamp next_deadline() const;
  // Smallest propagation delay of any of its links: every packet it emits
  // (forwarded or its own) leaves at least this long after it arrived.
  xcp::Duration min_link_delay() const;
  // Earliest next_delivery() of its links.
  xcp::Timestamp next_delivery() const;

  Link& egress(size_t port) { return *ports_[port]->egress; }
  Link* ingress(size_t port) { return ports_[port]->ingress.get(); }
  const Link& egress(size_t port) const { return *ports_[port]->egress; }
  const Link* ingress(size_t port) const { return ports_[port]->ingress.get(); }
  const PortCounters& counters(size_t port) const { return ports_[port]->counters; }
  void set_lateness_threshold(xcp::Duration d);
  // Null unless the router speaks XCP-i.
  XcpiNode* xcpi() { return xcpi_.get(); }
  const XcpiNode* xcpi() const { return xcpi_.get(); }

  // {"ports": {name: {...}}} as CONTROL.md's stats describes.
  // between_ports runs before each port's entry: the engine serves due packet
  // events there, so a large answer never stalls the links for milliseconds.
  nlohmann::json stats_json(const std::function<void()>& between_ports = {}) const;

 private:
  struct Port;
  // Ingress link exit -> forwarding stage.
  class ForwardStage final : public PacketSink {
   public:
    ForwardStage(Router& r, uint16_t port) : router_(r), port_(port) {}
    void deliver(PacketPtr p, xcp::Timestamp at) override { router_.forward(port_, std::move(p), at); }

   private:
    Router& router_;
    uint16_t port_;
  };
  // Egress link exit -> port transmit sink, counting.
  class TransmitStage final : public PacketSink {
   public:
    TransmitStage(PacketSink& tx, PortCounters& c) : tx_(tx), counters_(c) {}
    void deliver(PacketPtr p, xcp::Timestamp at) override {
      ++counters_.tx_packets;
      counters_.tx_bytes += p->frame_len;
      tx_.deliver(std::move(p), at);
    }

   private:
    PacketSink& tx_;
    PortCounters& counters_;
  };
  struct Port {
    PortConfig config;
    PortCounters counters;
    std::unique_ptr<ForwardStage> forward_stage;
    std::unique_ptr<TransmitStage> transmit_stage;
    std::unique_ptr<Link> ingress;  // may be null
    std::unique_ptr<Link> egress;
  };

  void forward(uint16_t in_port, PacketPtr p, xcp::Timestamp now);
  // Sends `p` out of the route for its destination (MACs rewritten).
  // Returns false (counted no_route on `in_port`) when there is none.
  bool route_out(uint16_t in_port, PacketPtr& p, xcp::Timestamp now);
  bool is_local_address(uint32_t addr) const;
  void answer_echo(uint16_t in_port, PacketPtr p, xcp::Timestamp now);
  // Turns the expired packet into an ICMP time-exceeded (RFC 792) to its
  // source, at most kIcmpErrorsPerSecond per router.
  void send_time_exceeded(uint16_t in_port, PacketPtr p, xcp::Timestamp now);
  // Originates an XCP-i control message (Format 3) from this router to `dst`.
  void send_control(uint32_t dst, const xcp::ControlMessage& m, size_t ip_payload_bytes, xcp::Timestamp now);
  // R's persistent queue for the XCP-i virtual routers: the largest of its
  // XCP output ports' (with one output port, exactly that port's Q).
  double xcp_persistent_queue() const;
  static constexpr uint32_t kIcmpErrorsPerSecond = 1000;
  int64_t icmp_window_second_ = -1;
  uint32_t icmp_window_count_ = 0;

  std::string name_;
  uint32_t xcp_address_;
  std::vector<std::unique_ptr<Port>> ports_;
  RouteTable routes_;
  std::unique_ptr<XcpiNode> xcpi_;
  // Stamped when the last stats answer was built (XCP-i estimate ages).
  xcp::Timestamp last_advance_{};
};

}  // namespace xcprouter
