// libFuzzer target: arbitrary bytes as a received Ethernet frame, through the
// parser and a whole router (ingress link, routing, TTL, ICMP echo, egress
// link with a fake clock), and through an XCP-i router (cloud detection,
// virtual routers, control messages: requests, acks, chirp probes). Must
// never crash, hang or read out of bounds.
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "core/frame_parser.hh"
#include "core/packet_pool.hh"
#include "core/router.hh"
#include "qdisc/qdisc_factory.hh"
#include "xcp/clock.hh"

namespace {

using namespace xcprouter;

class NullSink final : public PacketSink {
 public:
  void deliver(PacketPtr p, xcp::Timestamp) override { bytes += p->frame_len; }
  uint64_t bytes = 0;
};

LinkConfig link_config(uint64_t delay_us, const char* kind = "droptail") {
  LinkConfig l;
  l.capacity_bps = 100'000'000;
  l.delay = xcp::Duration::microseconds(static_cast<int64_t>(delay_us));
  l.queue = read_queue_config({{"kind", kind}, {"limit_packets", 64}});
  return l;
}

RouterConfig config(const char* kind) {
  RouterConfig c;
  c.name = "fuzz";
  PortConfig p0;
  p0.name = "p0";
  p0.ifname = "eth0";
  p0.mac = MacAddress::parse("02:00:00:00:00:02");
  p0.ipv4 = *Ipv4Prefix::parse("10.0.0.2/24", true);
  p0.egress = link_config(10, kind);
  p0.ingress = link_config(5, kind);
  PortConfig p1 = p0;
  p1.name = "p1";
  p1.ifname = "eth1";
  p1.ipv4 = *Ipv4Prefix::parse("10.0.1.1/24", true);
  p1.ingress.reset();
  c.ports = {p0, p1};
  c.xcp_address = p0.ipv4.addr;
  c.routes = {{*Ipv4Prefix::parse("10.0.1.0/24", false), 1, *MacAddress::parse("02:00:00:00:01:02")},
              {*Ipv4Prefix::parse("0.0.0.0/0", false), 0, *MacAddress::parse("02:00:00:00:00:01")}};
  return c;
}

Router& router(NullSink& a, NullSink& b) {
  static Router* r = new Router(config("droptail"), 1, 0, {&a, &b});
  return *r;
}

Router& xcpi_router(NullSink& a, NullSink& b) {
  static Router* r = [&] {
    RouterConfig c = config("xcpi");
    XcpiConfig x;
    x.estimator = EstimatorKind::kChirp;
    x.max_upstreams = 8;
    c.xcpi = x;
    return new Router(c, 2, 0, {&a, &b});
  }();
  return *r;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static NullSink a, b;
  static xcp::FakeClock clock;
  if (size > Packet::kCapacity) return 0;
  PacketPtr p = PacketPool::acquire();
  std::memcpy(p->data(), data, size);
  p->frame_len = static_cast<uint32_t>(size);
  // The parser alone, then the same bytes through the router.
  PacketPtr copy = PacketPool::acquire();
  std::memcpy(copy->data(), data, size);
  copy->frame_len = static_cast<uint32_t>(size);
  (void)parse_frame(*copy);
  PacketPtr third = PacketPool::acquire();
  std::memcpy(third->data(), data, size);
  third->frame_len = static_cast<uint32_t>(size);
  Router& r = router(a, b);
  r.receive(0, std::move(p), clock.now());
  Router& x = xcpi_router(a, b);
  x.receive(0, std::move(third), clock.now());
  clock.advance(xcp::Duration::microseconds(50));
  r.advance(clock.now());
  x.advance(clock.now());
  return 0;
}
