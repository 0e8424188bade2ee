// The iXCP law (docs/protocol.md §5) against hand-computed numbers: y0 and the
// shuffle among matching packets only, spare-only feedback for the others,
// separate shuffle pools, the else branch over both pool sets, and the
// next_bottleneck_id a lowering hop writes.
#include "ixcp/ixcp_controller.hh"

#include <climits>
#include <vector>

#include <gtest/gtest.h>

#include "ixcp/ixcp_queue.hh"
#include "qdisc/qdisc_factory.hh"
#include "qdisc_test_util.hh"

namespace xcprouter {
namespace {

using testutil::make_ixcp_packet;
using testutil::make_packet;
using testutil::make_xcp_packet;
using testutil::wire_feedback;
using testutil::wire_next_bottleneck_id;

constexpr uint32_t kOurs = 7;
constexpr uint32_t kOther = 9;

// C = 10.5 MB/s, one 0.1 s interval: 500 packets bottlenecked here (id 7)
// and 500 elsewhere (id 9), all s = 1000 B, cwnd = 100 000 B, rtt = 0.1 s.
//   y = 1e7 B/s, y0 = 5e6 B/s, SA = 1.0, SB = 0.1, d = 0.1 s
//   phi = 0.4·0.1·(10.5e6 − 1e7) = 20 000 B
//   h   = 0.1·(1e7 − 5e6)·0.1 − 20 000 = 30 000 B   (XCP's: 80 000 B)
//   spare:   xi_p = 20 000/(0.1·1.0) = 2e5, xi_n = 0, R_pos = 2e5 B/s
//   shuffle: SA_m = 0.5, Ss_m = 5e5 → xi_p' = 6e5, xi_n' = 0.6, R' = 3e5 B/s
struct Fixture {
  explicit Fixture(double c_bytes_per_s = 10.5e6)
      : ctl(XcpParams{}, std::make_unique<LinkSpareBandwidth>(c_bytes_per_s), 3, kOurs) {
    for (int i = 0; i < 1000; ++i) {
      ctl.on_arrival(*make_ixcp_packet(1000, 100000, 100000, INT32_MAX, i % 2 ? kOther : kOurs, 0));
    }
    ctl.on_timeout(0.1, 0.0);
  }
  IxcpController ctl;
};

TEST(IxcpController, IntervalShufflesOnlyTheMatchingTraffic) {
  Fixture f;
  const IntervalState& st = f.ctl.state();
  EXPECT_NEAR(st.y, 1e7, 1e-3);
  EXPECT_NEAR(st.phi, 20000, 1e-6);
  EXPECT_NEAR(st.h, 30000, 1e-6);
  EXPECT_NEAR(st.xi_p, 2e5, 1e-6);
  EXPECT_NEAR(st.xi_n, 0, 1e-12);
  EXPECT_NEAR(st.r_pos, 2e5, 1e-6);
  const ShuffleState& sh = f.ctl.shuffle();
  EXPECT_NEAR(sh.y0, 5e6, 1e-3);
  EXPECT_NEAR(sh.h, 30000, 1e-6);
  EXPECT_NEAR(sh.sa, 0.5, 1e-12);
  EXPECT_NEAR(sh.ss, 5e5, 1e-6);
  EXPECT_NEAR(sh.xi_p, 6e5, 1e-6);
  EXPECT_NEAR(sh.xi_n, 0.6, 1e-12);
  // The flows bottlenecked here: Ss_m/SA_m = 5e5/0.5 = 1e6 B/s = cwnd/rtt.
  EXPECT_NEAR(f.ctl.local_rate(), 1e6, 1e-6);
  EXPECT_NEAR(f.ctl.shuffle_pools().pos, 3e5, 1e-6);
  EXPECT_NEAR(f.ctl.shuffle_pools().neg, 3e5, 1e-6);
  EXPECT_EQ(f.ctl.ixcp_counters().matching_packets, 500u);
  EXPECT_EQ(f.ctl.ixcp_counters().non_matching_bytes, 500000u);
}

TEST(IxcpController, MatchingGetsSparePlusShuffleOthersSpareOnly) {
  Fixture f;
  // cwnd = 50 000 B: w = r²·s/cwnd = 2e-4 s
  //   matching:     p = 2e5·2e-4 + 6e5·2e-4 = 40 + 120, n = 0.6·0.1·1000 = 60 → 100 B
  //   non-matching: p = 40, n = 0 → 40 B
  auto m = make_ixcp_packet(1000, 50000, 100000, INT32_MAX, kOurs, kOurs);
  auto o = make_ixcp_packet(1000, 50000, 100000, INT32_MAX, kOther, kOther);
  f.ctl.on_departure(*o);
  EXPECT_EQ(wire_feedback(*o), 40);
  // The non-matching packet drained the spare pool, never the shuffle pool.
  EXPECT_NEAR(f.ctl.pools().pos, 2e5 - 400, 1e-6);
  EXPECT_NEAR(f.ctl.shuffle_pools().pos, 3e5, 1e-6);
  EXPECT_NEAR(f.ctl.shuffle_pools().neg, 3e5, 1e-6);
  f.ctl.on_departure(*m);
  EXPECT_EQ(wire_feedback(*m), 100);
  EXPECT_NEAR(f.ctl.pools().pos, 2e5 - 800, 1e-6);
  EXPECT_NEAR(f.ctl.shuffle_pools().pos, 3e5 - 1200, 1e-6);
  EXPECT_NEAR(f.ctl.shuffle_pools().neg, 3e5 - 600, 1e-6);
}

TEST(IxcpController, PacketsWithoutTheBlockAreTreatedAsMatching) {
  Fixture f;
  EXPECT_TRUE(f.ctl.matches(make_xcp_packet(1000, 50000, 100000, INT32_MAX)->xcp));
  EXPECT_TRUE(f.ctl.matches(make_ixcp_packet(1000, 50000, 100000, INT32_MAX, 0, 0)->xcp));
  EXPECT_FALSE(f.ctl.matches(make_ixcp_packet(1000, 50000, 100000, INT32_MAX, 12345, 0)->xcp));
  auto plain = make_xcp_packet(1000, 50000, 100000, INT32_MAX);
  f.ctl.on_departure(*plain);
  EXPECT_EQ(wire_feedback(*plain), 100);  // plain XCP sender: XCP's law
}

TEST(IxcpController, LoweringHopWritesItsLinkId) {
  Fixture f;
  // A packet bottlenecked here whose id an earlier hop overwrote: this hop
  // lowers the sender's unlimited request and takes the flow back.
  auto p = make_ixcp_packet(1000, 50000, 100000, INT32_MAX, kOurs, kOther);
  f.ctl.on_departure(*p);
  EXPECT_EQ(wire_feedback(*p), 100);
  EXPECT_EQ(wire_next_bottleneck_id(*p), kOurs);
  EXPECT_EQ(p->xcp.next_bottleneck_id, kOurs);
  // An upstream hop already gave less (10 < 100): header and id untouched.
  auto q = make_ixcp_packet(1000, 50000, 100000, 10, kOurs, kOther);
  f.ctl.on_departure(*q);
  EXPECT_EQ(wire_feedback(*q), 10);
  EXPECT_EQ(wire_next_bottleneck_id(*q), kOther);
  // Bottlenecked elsewhere, and this link has spare bandwidth (phi > 0): its
  // positive feedback lowers H but does not claim the flow (IXCP.md).
  auto o = make_ixcp_packet(1000, 50000, 100000, INT32_MAX, kOther, kOther);
  f.ctl.on_departure(*o);
  EXPECT_EQ(wire_feedback(*o), 40);
  EXPECT_EQ(wire_next_bottleneck_id(*o), kOther);
  EXPECT_EQ(f.ctl.ixcp_counters().ids_written, 1u);
  // Minimal (ACK) packets are never touched.
  auto ack = make_xcp_packet(1000, 50000, 100000, INT32_MAX, xcp::Format::kMinimal);
  f.ctl.on_departure(*ack);
  EXPECT_EQ(wire_feedback(*ack), INT32_MAX);
}

TEST(IxcpController, CongestedLinkClaimsFlowsBottleneckedElsewhere) {
  // C = 9.5 MB/s: phi = 0.04·(9.5e6 − 1e7) = −20 000 B, h = 50 000 − 20 000 = 30 000 B;
  // spare xi_n = 20 000/(0.1·Ss = 1e5) = 0.2 → n = 0.2·0.1·1000 = 20 B per packet.
  Fixture f(9.5e6);
  EXPECT_NEAR(f.ctl.state().phi, -20000, 1e-6);
  EXPECT_NEAR(f.ctl.shuffle().h, 30000, 1e-6);
  auto o = make_ixcp_packet(1000, 50000, 100000, INT32_MAX, kOther, kOther);
  f.ctl.on_departure(*o);
  EXPECT_EQ(wire_feedback(*o), -20);
  EXPECT_EQ(wire_next_bottleneck_id(*o), kOurs);
  // matching: p = 6e5·2e-4 = 120, n = 20 + 0.6·0.1·1000 = 80 → 40 B
  auto m = make_ixcp_packet(1000, 50000, 100000, INT32_MAX, kOurs, kOurs);
  f.ctl.on_departure(*m);
  EXPECT_EQ(wire_feedback(*m), 40);
}

TEST(IxcpLaw, ElseBranchBooksTheDifferenceOverBothPoolSets) {
  IntervalState port;
  port.xi_p = 0;
  port.xi_n = 0.2;  // n_spare = 0.2·0.1·1000 = 20
  ShuffleState sh;
  sh.xi_p = 6e5;  // p' = 6e5·2e-4 = 120
  sh.xi_n = 0.6;  // n' = 60
  // fb = 120 − 80 = 40 > H = 10: 30 B more negative feedback to book.
  {
    Pools spare{0, 1000}, shuffle{3e5, 3e5};  // spare neg cap 100 B: takes all 30
    const IxcpFeedback f = compute_ixcp_departure(port, sh, spare, shuffle, true, 1000, 0.1, 50000, 10);
    EXPECT_FALSE(f.lowers);
    EXPECT_NEAR(f.n_spare, 50, 1e-9);
    EXPECT_NEAR(f.n_shuffle, 60, 1e-9);
    EXPECT_NEAR(f.p_shuffle, 120, 1e-9);
    EXPECT_NEAR(f.p() - f.n(), 10, 1e-9);
    EXPECT_NEAR(spare.neg, 500, 1e-9);
  }
  {
    // Spare neg cap 30 B (+10), shuffle neg cap 70 B (+10): n = 100, so the
    // positive part shrinks to H + n = 110, off the shuffled share.
    Pools spare{0, 300}, shuffle{3e5, 700};
    const IxcpFeedback f = compute_ixcp_departure(port, sh, spare, shuffle, true, 1000, 0.1, 50000, 10);
    EXPECT_NEAR(f.n_spare, 30, 1e-9);
    EXPECT_NEAR(f.n_shuffle, 70, 1e-9);
    EXPECT_NEAR(f.p_shuffle, 110, 1e-9);
    EXPECT_NEAR(f.p_spare, 0, 1e-9);
    EXPECT_NEAR(spare.neg, 0, 1e-9);
    EXPECT_NEAR(shuffle.neg, 0, 1e-9);
    EXPECT_NEAR(shuffle.pos, 3e5 - 1100, 1e-9);
  }
}

TEST(IxcpQueue, FactoryNeedsALinkId) {
  try {
    make_qdisc({{"kind", "ixcp"}}, 1);
    FAIL() << "no link id accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("queue.params.link_id"), std::string::npos) << e.what();
  }
  EXPECT_THROW(make_qdisc({{"kind", "ixcp"}, {"params", {{"link_id", 0}}}}, 1), std::invalid_argument);
  EXPECT_THROW(make_qdisc({{"kind", "ixcp"}, {"params", {{"link_id", 4294967296ULL}}}}, 1), std::invalid_argument);
  auto q = make_qdisc({{"kind", "ixcp"}, {"params", {{"link_id", 42}, {"gamma", 0.2}, {"tcp_fairness", true}}}}, 1);
  EXPECT_EQ(q->kind(), "ixcp");
  nlohmann::json out;
  q->report(out);
  EXPECT_EQ(out["xcp"]["ixcp"]["link_id"], 42);
  EXPECT_DOUBLE_EQ(out["xcp"]["gamma"].get<double>(), 0.2);
  EXPECT_TRUE(out["xcp"].contains("tcp_fairness"));
}

}  // namespace
}  // namespace xcprouter
