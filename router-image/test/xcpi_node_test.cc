#include "xcpi/xcpi_node.hh"

#include <climits>
#include <vector>

#include <gtest/gtest.h>

#include "qdisc_test_util.hh"
#include "xcp/spare_bandwidth.hh"

namespace xcprouter {
namespace {

using testutil::make_xcp_packet;
using testutil::wire_feedback;
using xcp::Duration;
using xcp::Timestamp;

constexpr uint32_t kSelf = 0x0A000302;  // 10.0.3.2 (R)
constexpr uint32_t kU = 0x0A000101;     // 10.0.1.1 (U)

Timestamp at_ms(double ms) { return Timestamp::zero() + Duration::seconds(ms / 1000.0); }

// A data packet as R's forward() hands it over: received with IP TTL
// `ttl_in`, already decremented, carrying the I block of its last XCP-i hop.
PacketPtr xcpi_packet(uint8_t ttl_in, uint8_t xcp_ttl, uint32_t last, int32_t feedback = INT32_MAX,
                      uint32_t cwnd = 100000, uint32_t rtt_us = 100000) {
  auto p = make_xcp_packet(1000, cwnd, rtt_us, feedback);
  xcp::XcpHeader h = p->xcp;
  h.flags = xcp::flags::kXcpi;
  h.xcp_ttl = xcp_ttl;
  h.last_xcp_router = last;
  p->xcp_offset = 14 + 20;
  p->frame_len = 14 + 1000;
  xcp::write_header(h, p->xcp_shim());
  p->xcp = h;
  p->ip_ttl_in = ttl_in;
  p->data()[p->ip_offset + 8] = static_cast<uint8_t>(ttl_in - 1);
  return p;
}

struct Sent {
  uint32_t dst;
  xcp::ControlMessage m;
};

struct Fixture {
  explicit Fixture(XcpiConfig c = {}, double queue = 0)
      : node(c, kSelf, XcpParams{}, 1,
             [this](uint32_t dst, const xcp::ControlMessage& m, size_t, Timestamp) { sent.push_back({dst, m}); },
             [queue] { return queue; }) {}
  std::vector<Sent> sent;
  XcpiNode node;
};

TEST(XcpiNode, NoCloudMeansNoEntryButTheIBlockIsRewritten) {
  Fixture f;
  auto p = xcpi_packet(/*ttl_in=*/60, /*xcp_ttl=*/60, kU);
  f.node.on_data(*p, at_ms(0));
  EXPECT_EQ(f.node.entries(), 0u);
  EXPECT_TRUE(f.sent.empty());
  const auto wire = xcp::parse_header(p->xcp_shim()).header;
  EXPECT_EQ(wire.xcp_ttl, 59);  // the outgoing IP TTL
  EXPECT_EQ(wire.last_xcp_router, kSelf);
  EXPECT_EQ(wire.feedback_bytes, INT32_MAX);
}

TEST(XcpiNode, CloudDetectedCreatesOneEntryPerUpstreamAndRequestsAnEstimate) {
  Fixture f;
  auto p = xcpi_packet(58, 60, kU);  // two non-XCP hops since U
  f.node.on_data(*p, at_ms(0));
  ASSERT_EQ(f.node.entries(), 1u);
  ASSERT_EQ(f.sent.size(), 1u);
  EXPECT_EQ(f.sent[0].dst, kU);
  EXPECT_EQ(f.sent[0].m.type, xcp::ControlType::kRequest);
  EXPECT_EQ(f.sent[0].m.aux, 0u);  // oracle: acknowledge only
  // Without an estimate V does not touch the feedback.
  EXPECT_EQ(wire_feedback(*p), INT32_MAX);
  EXPECT_EQ(f.node.entry(kU)->counters.no_estimate, 1u);
  auto q = xcpi_packet(58, 60, kU);
  f.node.on_data(*q, at_ms(1));
  EXPECT_EQ(f.node.entries(), 1u);
  EXPECT_EQ(f.sent.size(), 1u);
}

TEST(XcpiNode, AnsweredRequestEstablishesAndThreeSilentOnesBreak) {
  XcpiConfig c;
  Fixture f(c);
  auto p = xcpi_packet(58, 60, kU);
  f.node.on_data(*p, at_ms(0));
  ASSERT_EQ(f.sent.size(), 1u);
  // Nobody answers: two retries, then broken.
  for (double t : {200.0, 400.0, 600.0}) f.node.advance(at_ms(t));
  EXPECT_EQ(f.sent.size(), 3u);
  EXPECT_EQ(f.node.entry(kU)->session.state(), EstimationSession::State::kBroken);
  // An injected estimate is not used while the path is broken.
  ASSERT_TRUE(f.node.inject_estimate(kU, 1e6, -1, at_ms(610)));
  auto q = xcpi_packet(58, 60, kU);
  f.node.on_data(*q, at_ms(620));
  EXPECT_EQ(wire_feedback(*q), INT32_MAX);
}

TEST(XcpiNode, AsUpstreamItAcknowledgesARequestToItsSender) {
  Fixture f;
  auto req = testutil::make_packet(20 + xcp::kControlMessageLen);
  req->xcp_offset = 14 + 20;
  req->frame_len = 14 + 20 + xcp::kControlMessageLen;
  xcp::write_control({xcp::ControlType::kRequest, 0xABCD, 2, 0, 0}, req->xcp_shim());
  req->xcp = xcp::parse_header(req->xcp_shim()).header;
  req->flow.src = 0x0A000902;
  f.node.on_control(*req, at_ms(0));
  ASSERT_EQ(f.sent.size(), 1u);
  EXPECT_EQ(f.sent[0].dst, 0x0A000902u);
  EXPECT_EQ(f.sent[0].m.type, xcp::ControlType::kAck);
  EXPECT_EQ(f.sent[0].m.session, 0xABCDu);
  EXPECT_EQ(f.sent[0].m.seq, 2u);
  EXPECT_EQ(f.node.counters().requests_answered, 1u);
}

TEST(XcpiNode, TableIsBoundedAndIdleEntriesExpire) {
  XcpiConfig c;
  c.max_upstreams = 2;
  c.idle_timeout = Duration::seconds(2.0);
  Fixture f(c);
  for (uint32_t u = 1; u <= 3; ++u) {
    auto p = xcpi_packet(58, 60, kU + u);
    f.node.on_data(*p, at_ms(0));
  }
  EXPECT_EQ(f.node.entries(), 2u);
  EXPECT_EQ(f.node.counters().table_full, 1u);
  for (double t = 100; t <= 4000; t += 100) f.node.advance(at_ms(t));
  EXPECT_EQ(f.node.entries(), 0u);
  EXPECT_EQ(f.node.counters().expired, 2u);
}

// Seed 000 eq. (1) on the docs/protocol.md §2 vector: BW_U = 2.5 MB/s (20 Mb/s),
// d = 0.1 s, Q = 0, ten flows of cwnd 100 kB and RTT 0.1 s with 1000-byte
// packets -> phi_V = 0.4 x 0.1 x 2.5e6 = 100 000 B, h = 0 (gamma·y·d equals
// |phi|), xi_p = 1e6, so each packet is allowed 100 B. The input rate plays
// no part: V's S is the estimate.
TEST(XcpiVirtualRouter, EfficiencyUsesTheEstimateInsteadOfSpareBandwidth) {
  auto spare = std::make_unique<EstimatedSpareBandwidth>();
  spare->set_estimate(2.5e6);
  XcpController v(XcpParams{}, std::move(spare), 3);
  for (int i = 0; i < 1000; ++i) v.on_arrival(*make_xcp_packet(1000, 100000, 100000, INT32_MAX));
  const IntervalState& st = v.on_timeout(0.1, 0.0);
  EXPECT_NEAR(st.d_new, 0.1, 1e-12);
  EXPECT_NEAR(st.phi, 100000.0, 1e-6);
  EXPECT_NEAR(st.h, 0.0, 1e-6);
  auto p = make_xcp_packet(1000, 100000, 100000, INT32_MAX);
  v.on_departure(*p);
  EXPECT_NEAR(wire_feedback(*p), 100, 1);
  // With a persistent queue of 10 kB at R: phi_V = 100 000 - 0.226 x 10 000.
  for (int i = 0; i < 1000; ++i) v.on_arrival(*make_xcp_packet(1000, 100000, 100000, INT32_MAX));
  EXPECT_NEAR(v.on_timeout(0.1, 10000.0).phi, 100000.0 - 2260.0, 1e-6);
}

TEST(XcpiNode, FeedbackIsTheMinimumOfVirtualRouterAndDownstreamValue) {
  Fixture f;
  // Interval 1 (fallback 50 ms): 500 packets from U, the estimate arrives.
  f.node.on_data(*xcpi_packet(58, 60, kU), at_ms(0));
  f.node.on_control(*[&] {
    auto ack = testutil::make_packet(20 + xcp::kControlMessageLen);
    ack->xcp_offset = 14 + 20;
    ack->frame_len = 14 + 20 + xcp::kControlMessageLen;
    xcp::write_control({xcp::ControlType::kAck, f.sent[0].m.session, f.sent[0].m.seq, 0, 0}, ack->xcp_shim());
    ack->xcp = xcp::parse_header(ack->xcp_shim()).header;
    return ack;
  }(), at_ms(1));
  ASSERT_TRUE(f.node.inject_estimate(kU, 20e6, 20e6, at_ms(1)));
  for (int i = 1; i < 500; ++i) f.node.on_data(*xcpi_packet(58, 60, kU), at_ms(i * 0.1));
  f.node.advance(at_ms(50));  // V's first control interval ends
  const double phi = f.node.entry(kU)->v.state().phi;
  EXPECT_GT(phi, 0);
  // A packet asking for more than V allows is lowered to V's value (> 0) ...
  auto big = xcpi_packet(58, 60, kU, INT32_MAX);
  f.node.on_data(*big, at_ms(51));
  const int32_t v_value = wire_feedback(*big);
  EXPECT_GT(v_value, 0);
  EXPECT_LT(v_value, 1000);
  // ... one that a downstream router already lowered further keeps its value.
  auto small = xcpi_packet(58, 60, kU, -50);
  f.node.on_data(*small, at_ms(52));
  EXPECT_EQ(wire_feedback(*small), -50);
  EXPECT_GE(f.node.entry(kU)->counters.lowered, 1u);
}

}  // namespace
}  // namespace xcprouter

namespace xcprouter {
namespace {

// U and R wired back to back over an idle 10 Mb/s path with 1 ms delay: R asks
// for chirps, U acknowledges and sends them at their scheduled instants, R's
// chirp estimator reads an idle path as its full rate (clamped to H = 10 Mb/s).
TEST(XcpiNodeChirp, UpstreamSendsTheChirpsAndDownstreamEstimatesAnIdlePath) {
  XcpiConfig c;
  c.estimator = EstimatorKind::kChirp;
  c.chirp = ChirpConfig::for_path(xcp::Rate::from_megabits_per_s(10), 0.1);
  c.chirps_per_request = 6;
  c.reestimate_period = Duration::seconds(100.0);
  struct InFlight {
    Timestamp at;
    uint32_t dst;
    xcp::ControlMessage m;
    size_t len;
  };
  std::vector<InFlight> wire;
  const xcp::Rate link = xcp::Rate::from_megabits_per_s(10);
  Timestamp wire_free = Timestamp::zero();
  auto sender = [&](uint32_t from) {
    return [&, from](uint32_t dst, const xcp::ControlMessage& m, size_t len, Timestamp at) {
      (void)from;
      // FIFO at 10 Mb/s plus 1 ms: probes queue behind each other as on a link.
      const Timestamp start = std::max(at, wire_free);
      wire_free = start + link.transfer_time(20 + len);
      wire.push_back({wire_free + Duration::milliseconds(1), dst, m, len});
    };
  };
  XcpiNode r(c, kSelf, XcpParams{}, 1, sender(kSelf), [] { return 0.0; });
  XcpiNode u(c, kU, XcpParams{}, 2, sender(kU), [] { return 0.0; });
  r.on_data(*xcpi_packet(58, 60, kU), Timestamp::zero());
  for (int step = 0; step < 20000; ++step) {
    const Timestamp now = Timestamp::zero() + Duration::microseconds(step * 500);
    u.advance(now);
    r.advance(now);
    // Take what is due first: delivering makes the nodes send more.
    std::vector<InFlight> due;
    for (auto it = wire.begin(); it != wire.end();) {
      if (it->at <= now) {
        due.push_back(*it);
        it = wire.erase(it);
      } else {
        ++it;
      }
    }
    for (auto dit = due.begin(); dit != due.end(); ++dit) {
      auto* it = &*dit;
      auto pkt = testutil::make_packet(static_cast<uint32_t>(20 + std::max(it->len, xcp::kControlMessageLen)));
      pkt->xcp_offset = 14 + 20;
      xcp::write_control(it->m, pkt->xcp_shim());
      pkt->xcp = xcp::parse_header(pkt->xcp_shim()).header;
      pkt->flow.src = it->dst == kU ? kSelf : kU;
      pkt->arrival = it->at;
      (it->dst == kU ? u : r).on_control(*pkt, it->at);
    }
    if (step % 2000 == 0) r.on_data(*xcpi_packet(58, 60, kU), now);  // U stays active
  }
  EXPECT_EQ(u.counters().requests_answered, 1u);
  EXPECT_EQ(u.chirp_sender().counters().probes_sent, 6u * c.chirp.packets_per_chirp());
  EXPECT_EQ(r.counters().probes_received, u.chirp_sender().counters().probes_sent);
  const UpstreamEntry* e = r.entry(kU);
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(e->source, EstimateSource::kChirp);
  EXPECT_NEAR(e->estimate_bps, 10e6, 1.5e6);
}

}  // namespace
}  // namespace xcprouter
