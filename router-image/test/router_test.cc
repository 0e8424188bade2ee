#include "core/router.hh"

#include <gtest/gtest.h>

#include "engine_test_util.hh"
#include "xcp/clock.hh"

namespace xcprouter {
namespace {

using enginetest::CollectingSink;
using enginetest::FrameSpec;
using enginetest::get16;
using enginetest::make_frame;
using xcp::Duration;
using xcp::Timestamp;

LinkConfig fast_link(uint64_t delay_us = 0) {
  LinkConfig l;
  l.capacity_bps = 1'000'000'000;
  l.delay = Duration::microseconds(static_cast<int64_t>(delay_us));
  l.queue = read_queue_config({{"kind", "droptail"}, {"limit_packets", 100}});
  return l;
}

// r1: port 0 "left" 10.0.0.2/24, port 1 "right" 10.0.1.1/24.
RouterConfig two_port_router(std::optional<LinkConfig> ingress = std::nullopt) {
  RouterConfig c;
  c.name = "r1";
  PortConfig left;
  left.name = "r1:left";
  left.ifname = "eth0";
  left.mac = MacAddress::parse("02:00:00:00:00:02");
  left.ipv4 = *Ipv4Prefix::parse("10.0.0.2/24", true);
  left.egress = fast_link();
  left.ingress = ingress;
  PortConfig right = left;
  right.name = "r1:right";
  right.ifname = "eth1";
  right.mac = MacAddress::parse("02:00:00:00:01:01");
  right.ipv4 = *Ipv4Prefix::parse("10.0.1.1/24", true);
  right.ingress.reset();
  c.ports = {left, right};
  c.xcp_address = left.ipv4.addr;
  c.routes = {{*Ipv4Prefix::parse("10.0.0.0/24", false), 0, *MacAddress::parse("02:00:00:00:00:01")},
              {*Ipv4Prefix::parse("10.0.1.0/24", false), 1, *MacAddress::parse("02:00:00:00:01:02")}};
  return c;
}

struct Fixture {
  explicit Fixture(RouterConfig cfg = two_port_router()) : router(cfg, 7, 0, {&tx[0], &tx[1]}) {}
  void send(PacketPtr p, uint16_t port = 0) {
    router.receive(port, std::move(p), clock.now());
    clock.advance(Duration::milliseconds(50));
    router.advance(clock.now());
  }
  xcp::FakeClock clock;
  CollectingSink tx[2];
  Router router;
};

TEST(Router, ForwardsWithTtlMinusOneValidChecksumAndRewrittenMacs) {
  Fixture f;
  f.send(make_frame(FrameSpec{}));
  ASSERT_EQ(f.tx[1].got.size(), 1u);
  Packet& out = *f.tx[1].got[0].packet;
  const uint8_t* ip = out.data() + 14;
  EXPECT_EQ(ip[8], 63);
  // Incrementally updated checksum equals a full recomputation (header sums to 0).
  EXPECT_EQ(internet_checksum(ip, 20), 0);
  EXPECT_EQ(MacAddress::parse("02:00:00:00:01:02")->bytes[5], out.data()[5]);
  EXPECT_EQ(0, std::memcmp(out.data(), MacAddress::parse("02:00:00:00:01:02")->bytes.data(), 6));
  EXPECT_EQ(0, std::memcmp(out.data() + 6, MacAddress::parse("02:00:00:00:01:01")->bytes.data(), 6));
  EXPECT_EQ(f.router.counters(1).tx_packets, 1u);
  EXPECT_EQ(f.router.counters(0).rx_packets, 1u);
}

TEST(Router, ChecksumStaysValidForEveryTtl) {
  Fixture f;
  for (int ttl = 2; ttl <= 255; ++ttl) {
    FrameSpec s;
    s.ttl = static_cast<uint8_t>(ttl);
    s.src = 0x0A000001u + static_cast<uint32_t>(ttl) * 7919u;
    f.send(make_frame(s));
    Packet& out = *f.tx[1].got.back().packet;
    ASSERT_EQ(out.data()[14 + 8], ttl - 1);
    ASSERT_EQ(internet_checksum(out.data() + 14, 20), 0) << "ttl " << ttl;
  }
}

TEST(Router, DropsAndCountsByCause) {
  Fixture f;
  FrameSpec ttl1;
  ttl1.ttl = 1;
  f.send(make_frame(ttl1));
  FrameSpec no_route;
  no_route.dst = 0x0B000001;
  f.send(make_frame(no_route));
  FrameSpec arp;
  arp.ethertype = 0x0806;
  f.send(make_frame(arp));
  auto bad = make_frame(FrameSpec{});
  bad->data()[14 + 10] ^= 0xFF;
  f.send(std::move(bad));
  f.router.receive(0, make_frame(FrameSpec{}), f.clock.now(), /*for_us=*/false);
  const PortCounters& c = f.router.counters(0);
  EXPECT_EQ(c.drops_ttl, 1u);
  EXPECT_EQ(c.drops_no_route, 1u);
  EXPECT_EQ(c.drops_non_ipv4, 1u);
  EXPECT_EQ(c.drops_malformed, 1u);
  EXPECT_EQ(c.drops_not_for_us, 1u);
  EXPECT_EQ(c.rx_packets, 5u);
  ASSERT_EQ(f.tx[0].got.size(), 1u);  // only the ICMP time exceeded for the TTL drop
  EXPECT_EQ(f.tx[0].got[0].packet->data()[14 + 20], 11);
  EXPECT_TRUE(f.tx[1].got.empty());
}

TEST(Router, AnswersIcmpEchoToItsPortAddress) {
  Fixture f;
  FrameSpec s;
  s.proto = 1;
  s.dst = 0x0A000002;  // r1:left
  s.ip_total_len = 84;
  auto p = make_frame(s);
  uint8_t* icmp = p->data() + 34;
  icmp[0] = 8;  // echo request, code 0, id/seq from the port fields
  icmp[2] = icmp[3] = 0;
  const uint16_t c = internet_checksum(icmp, 64);
  icmp[2] = static_cast<uint8_t>(c >> 8);
  icmp[3] = static_cast<uint8_t>(c);
  f.send(std::move(p));
  ASSERT_EQ(f.tx[0].got.size(), 1u);
  const uint8_t* ip = f.tx[0].got[0].packet->data() + 14;
  EXPECT_EQ(get16(ip + 12), 0x0A00);  // src = router
  EXPECT_EQ(ip[15], 2);
  EXPECT_EQ(ip[19], 1);                // dst = the pinging host
  EXPECT_EQ(ip[20], 0);                // echo reply
  EXPECT_EQ(internet_checksum(ip, 20), 0);
  EXPECT_EQ(internet_checksum(ip + 20, 64), 0);
  EXPECT_EQ(f.router.counters(0).icmp_echo_replies, 1u);
}

TEST(Router, TtlExpiryAnswersTimeExceededQuotingTheHeader) {
  Fixture f;
  FrameSpec s;
  s.ttl = 1;
  f.send(make_frame(s));
  EXPECT_EQ(f.router.counters(0).drops_ttl, 1u);
  ASSERT_EQ(f.tx[0].got.size(), 1u);
  const Packet& out = *f.tx[0].got[0].packet;
  const uint8_t* ip = out.data() + 14;
  EXPECT_EQ(ip[9], 1);                           // ICMP
  EXPECT_EQ(get16(ip + 2), 20 + 8 + 20 + 8);     // quotes IP header + 8 bytes
  EXPECT_EQ(ip[15], 2);                          // from r1:left (10.0.0.2)
  EXPECT_EQ(ip[19], 1);                          // to the source (10.0.0.1)
  EXPECT_EQ(internet_checksum(ip, 20), 0);
  EXPECT_EQ(ip[20], 11);                         // time exceeded
  EXPECT_EQ(internet_checksum(ip + 20, 36), 0);
  EXPECT_EQ(ip[28 + 8], 1);                      // quoted TTL
  EXPECT_EQ(get16(ip + 28 + 20 + 2), 5678);      // quoted destination port
  EXPECT_EQ(out.frame_len, 14u + 56u);
  EXPECT_EQ(f.router.counters(0).icmp_time_exceeded, 1u);
}

TEST(Router, NoIcmpErrorAboutAnIcmpError) {
  Fixture f;
  FrameSpec s;
  s.ttl = 1;
  s.proto = 1;
  auto p = make_frame(s);
  p->data()[34] = 3;  // destination unreachable
  f.send(std::move(p));
  EXPECT_EQ(f.router.counters(0).drops_ttl, 1u);
  EXPECT_TRUE(f.tx[0].got.empty());
}

TEST(Router, IngressLinkDelaysBeforeRouting) {
  Fixture f(two_port_router(fast_link(5000)));
  f.router.receive(0, make_frame(FrameSpec{}), f.clock.now());
  f.router.advance(Timestamp::zero() + Duration::microseconds(4999));
  EXPECT_TRUE(f.tx[1].got.empty());
  f.router.advance(Timestamp::zero() + Duration::milliseconds(6));
  ASSERT_EQ(f.tx[1].got.size(), 1u);
  // 100 B at 1 Gb/s = 800 ns on each of ingress and egress, plus 5 ms.
  EXPECT_EQ(f.tx[1].got[0].at.ns(), 5'000'000 + 800 + 800);
}

// advance() returns what is due next, read in the same pass over the links
// as the events; a link whose output reached a link read earlier in that pass
// (right's ingress -> forward -> left's egress) makes it read them again.
TEST(Router, AdvanceReturnsWhatIsDueNextEvenAfterADeliveryIntoALinkReadBefore) {
  RouterConfig cfg = two_port_router();
  cfg.ports[0].egress = fast_link(1000);   // left egress: 800 ns + 1 ms
  cfg.ports[1].ingress = fast_link(5000);  // right ingress: 800 ns + 5 ms
  Fixture f(cfg);
  FrameSpec s;
  s.src = 0x0A000102;  // 10.0.1.2 -> 10.0.0.1: in on the right, out on the left
  s.dst = 0x0A000001;
  f.router.receive(1, make_frame(s), Timestamp::zero());
  const int64_t steps[] = {0, 800, 5'000'800, 5'001'600, 6'001'600};
  const int64_t due[] = {800, 5'000'800, 5'001'600, 6'001'600, Timestamp::max().ns()};
  const int64_t delivery[] = {Timestamp::max().ns(), 5'000'800, Timestamp::max().ns(), 6'001'600,
                              Timestamp::max().ns()};
  for (size_t i = 0; i < 5; ++i) {
    const Router::Upcoming u = f.router.advance(Timestamp::from_ns(steps[i]));
    EXPECT_EQ(u.deadline.ns(), due[i]) << "after advance(" << steps[i] << " ns)";
    EXPECT_EQ(u.deadline, f.router.next_deadline()) << steps[i];
    EXPECT_EQ(u.delivery.ns(), delivery[i]) << steps[i];
    EXPECT_EQ(u.delivery, f.router.next_delivery()) << steps[i];
  }
  ASSERT_EQ(f.tx[0].got.size(), 1u);
  EXPECT_EQ(f.tx[0].got[0].at.ns(), 6'001'600);
}

TEST(Router, StatsJsonHasPortsAndLinks) {
  Fixture f;
  f.send(make_frame(FrameSpec{}));
  const auto j = f.router.stats_json();
  const auto& right = j["ports"]["r1:right"];
  EXPECT_EQ(right["tx_packets"], 1u);
  EXPECT_EQ(right["egress"]["out_packets"], 1u);
  EXPECT_TRUE(right["ingress"].is_null());
  EXPECT_EQ(j["ports"]["r1:left"]["rx_packets"], 1u);
}

}  // namespace
}  // namespace xcprouter
