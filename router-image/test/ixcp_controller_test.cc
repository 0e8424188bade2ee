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
//            split max(y0/y = 0.5, T/SA = 0.1) = 0.5: 10 000 B each way
//            matching:     xi_p_m  = 10 000/(0.1·SA_m = 0.5)  = 2e5, R_pos_m  = 1e5 B/s
//            non-matching: xi_p_nm = 10 000/(0.1·SA_nm = 0.5) = 2e5, R_pos_nm = 1e5 B/s
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
  EXPECT_NEAR(sh.nm_share, 0.5, 1e-12);
  EXPECT_NEAR(sh.xi_p_m, 2e5, 1e-6);
  EXPECT_NEAR(sh.xi_p_nm, 2e5, 1e-6);
  EXPECT_NEAR(sh.r_pos_m, 1e5, 1e-6);
  EXPECT_NEAR(sh.r_pos_nm, 1e5, 1e-6);
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
  //   non-matching: p = xi_p_nm·w = 2e5·2e-4 = 40, n = 0 → 40 B
  auto m = make_ixcp_packet(1000, 50000, 100000, INT32_MAX, kOurs, kOurs);
  auto o = make_ixcp_packet(1000, 50000, 100000, INT32_MAX, kOther, kOther);
  f.ctl.on_departure(*o);
  EXPECT_EQ(wire_feedback(*o), 40);
  // The non-matching packet drained its own spare pool, never the matching
  // one nor the shuffle pool.
  EXPECT_NEAR(f.ctl.spare_pools().pos_nm, 1e5 - 400, 1e-6);
  EXPECT_NEAR(f.ctl.spare_pools().pos_m, 1e5, 1e-6);
  EXPECT_NEAR(f.ctl.shuffle_pools().pos, 3e5, 1e-6);
  EXPECT_NEAR(f.ctl.shuffle_pools().neg, 3e5, 1e-6);
  f.ctl.on_departure(*m);
  EXPECT_EQ(wire_feedback(*m), 100);
  EXPECT_NEAR(f.ctl.spare_pools().pos_m, 1e5 - 400, 1e-6);
  EXPECT_NEAR(f.ctl.spare_pools().pos_nm, 1e5 - 400, 1e-6);
  EXPECT_NEAR(f.ctl.shuffle_pools().pos, 3e5 - 1200, 1e-6);
  EXPECT_NEAR(f.ctl.shuffle_pools().neg, 3e5 - 600, 1e-6);
  // What the link wrote into matching packets, by part (the non-matching
  // packet's 40 B are not in them).
  const IxcpCounters& c = f.ctl.ixcp_counters();
  EXPECT_NEAR(c.m_p_spare, 40, 1e-9);
  EXPECT_NEAR(c.m_p_shuffle, 120, 1e-9);
  EXPECT_NEAR(c.m_n_spare, 0, 1e-9);
  EXPECT_NEAR(c.m_n_shuffle, 60, 1e-9);
  EXPECT_EQ(c.m_not_lowered, 0u);
  // An upstream hop already gave less: nothing written, counted.
  auto q = make_ixcp_packet(1000, 50000, 100000, 10, kOurs, kOurs);
  f.ctl.on_departure(*q);
  EXPECT_EQ(wire_feedback(*q), 10);
  EXPECT_EQ(c.m_not_lowered, 1u);
  EXPECT_NEAR(c.m_p_spare, 40, 1e-9);
}

TEST(IxcpLaw, PositiveSpareSplitBetweenTheKinds) {
  // 10 flows in T = 0.1 s (SA = 1.0), 2 bottlenecked here (SA_m = 0.2), the 8
  // others carry y0/y = 0.6 of the bytes; phi = 30 000 B, d = 0.1 s.
  //   non-matching share max(0.6, T/SA = 0.1) = 0.6: 18 000 B over SA_nm = 0.8
  //     → xi_p_nm = 18 000/(0.1·0.8) = 225 000
  //   matching 12 000 B over SA_m = 0.2 → xi_p_m = 12 000/(0.1·0.2) = 6e5
  // (XCP's equal split, the old rule: xi_p = 30 000/(0.1·1.0) = 3e5 for all,
  // 0.8 of the spare to the flows bottlenecked elsewhere.)
  IntervalState port;
  port.y = 1e7;
  port.d_new = 0.1;
  port.phi = 30000;
  port.sa = 1.0;
  IntervalSums m;
  m.sa = 0.2;
  m.ss = 4e6 * 0.1;
  ShuffleState sh = compute_shuffle(port, 6e6, m, 0.1, 0.1);
  EXPECT_NEAR(sh.nm_share, 0.6, 1e-12);
  EXPECT_NEAR(sh.xi_p_nm, 225000, 1e-6);
  EXPECT_NEAR(sh.xi_p_m, 6e5, 1e-6);
  EXPECT_NEAR(sh.r_pos_nm, 180000, 1e-6);
  EXPECT_NEAR(sh.r_pos_m, 120000, 1e-6);
  // h = max(0, 0.1·(1e7 − 6e6)·0.1 − 30 000) = 10 000 B
  EXPECT_NEAR(sh.h, 10000, 1e-6);
  {
    // One packet each, s = 1000, r = 0.1, cwnd = 50 000 (w = 2e-4):
    // non-matching 225 000·2e-4 = 45 B (old rule 60), matching 6e5·2e-4 = 120 B.
    SparePools spare{sh.r_pos_m, sh.r_pos_nm, 0};
    Pools shuffle{0, 0};
    EXPECT_NEAR(compute_ixcp_departure(port, sh, spare, shuffle, false, 1000, 0.1, 50000, 1e9).fb, 45, 1e-9);
    EXPECT_NEAR(compute_ixcp_departure(port, sh, spare, shuffle, true, 1000, 0.1, 50000, 1e9).fb, 120, 1e-9);
    EXPECT_NEAR(spare.pos_nm, 180000 - 450, 1e-6);
    EXPECT_NEAR(spare.pos_m, 120000 - 1200, 1e-6);
  }
  // One slow flow bottlenecked elsewhere among 5 (SA = 0.5, SA_m = 0.4,
  // y0/y = 0.02): its share is one flow's, T/SA = 0.2, never less than
  // XCP's equal split gives it: xi_p_nm = 6 000/(0.1·0.1) = 6e5 = 30 000/(0.1·0.5).
  port.sa = 0.5;
  m.sa = 0.4;
  sh = compute_shuffle(port, 2e5, m, 0.1, 0.1);
  EXPECT_NEAR(sh.nm_share, 0.2, 1e-12);
  EXPECT_NEAR(sh.xi_p_nm, 6e5, 1e-6);
  EXPECT_NEAR(sh.xi_p_m, 24000 / (0.1 * 0.4), 1e-6);
  // No flow bottlenecked here: the whole positive spare is the others'.
  sh = compute_shuffle(port, 2e5, IntervalSums{}, 0.1, 0.1);
  EXPECT_NEAR(sh.nm_share, 1.0, 1e-12);
  EXPECT_NEAR(sh.xi_p_nm, 30000 / (0.1 * 0.5), 1e-6);
  EXPECT_NEAR(sh.r_pos_m, 0, 1e-12);
  // Negative phi: no positive spare either way.
  port.phi = -30000;
  sh = compute_shuffle(port, 2e5, m, 0.1, 0.1);
  EXPECT_NEAR(sh.xi_p_nm, 0, 1e-12);
  EXPECT_NEAR(sh.xi_p_m, 0, 1e-12);
}

TEST(IxcpLaw, ClaimProbability) {
  // s/(rtt·local_rate): 1000/(0.1·1e6) = 0.01; a flow whose packets per
  // round trip reach the local flows' rate is always claimed; no local flow: 1.
  EXPECT_NEAR(claim_probability(1000, 0.1, 1e6), 0.01, 1e-15);
  EXPECT_NEAR(claim_probability(1500, 0.05, 1e5), 0.3, 1e-12);
  EXPECT_EQ(claim_probability(1000, 0.1, 5000), 1.0);
  EXPECT_EQ(claim_probability(1000, 0.1, 0), 1.0);
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

TEST(IxcpController, CongestedLinkClaimsFlowsBottleneckedElsewhereByTheirRate) {
  // C = 9.5 MB/s: phi = 0.04·(9.5e6 − 1e7) = −20 000 B, h = 50 000 − 20 000 = 30 000 B;
  // spare xi_n = 20 000/(0.1·Ss = 1e5) = 0.2 → n = 0.2·0.1·1000 = 20 B per packet.
  Fixture f(9.5e6);
  EXPECT_NEAR(f.ctl.state().phi, -20000, 1e-6);
  EXPECT_NEAR(f.ctl.shuffle().h, 30000, 1e-6);
  // A flow bottlenecked elsewhere at half the local flows' rate (cwnd 50 000
  // over 0.1 s against Ss_m/SA_m = 1e6 B/s): each packet claims it with
  // probability 1000/(0.1·1e6) = 0.01, about 5 claims in 500 packets (the
  // old rule claimed with every one of them).
  int claimed = 0;
  for (int i = 0; i < 500; ++i) {
    auto o = make_ixcp_packet(1000, 50000, 100000, INT32_MAX, kOther, kOther);
    f.ctl.on_departure(*o);
    EXPECT_EQ(wire_feedback(*o), -20);
    claimed += wire_next_bottleneck_id(*o) == kOurs;
  }
  EXPECT_GE(claimed, 1);
  EXPECT_LE(claimed, 15);
  EXPECT_EQ(f.ctl.ixcp_counters().ids_written, static_cast<uint64_t>(claimed));
  EXPECT_EQ(f.ctl.ixcp_counters().claims_declined, static_cast<uint64_t>(500 - claimed));
  // matching: p = 6e5·2e-4 = 120, n = 20 + 0.6·0.1·1000 = 80 → 40 B, claimed
  // (strictly smaller than the request) whatever its rate.
  auto m = make_ixcp_packet(1000, 50000, 100000, INT32_MAX, kOurs, kOther);
  f.ctl.on_departure(*m);
  EXPECT_EQ(wire_feedback(*m), 40);
  EXPECT_EQ(wire_next_bottleneck_id(*m), kOurs);
}

TEST(IxcpController, LinkWithSpareReleasesTheFlowsNamedAfterIt) {
  // C = 100 MB/s, y = 1e7: S = 9e7 > y, the link runs under half its capacity
  // (an access link). A flow named after it (the sender's starting id) gets
  // positive feedback and is released to "no id" (0), which every link
  // treats as its own; a flow named elsewhere keeps its id.
  Fixture f(100e6);
  auto p = make_ixcp_packet(1000, 50000, 100000, INT32_MAX, kOurs, kOurs);
  f.ctl.on_departure(*p);
  EXPECT_GT(wire_feedback(*p), 0);
  EXPECT_EQ(wire_next_bottleneck_id(*p), 0u);
  EXPECT_EQ(f.ctl.ixcp_counters().ids_released, 1u);
  EXPECT_EQ(f.ctl.ixcp_counters().ids_written, 0u);
  auto o = make_ixcp_packet(1000, 50000, 100000, INT32_MAX, kOther, kOther);
  f.ctl.on_departure(*o);
  EXPECT_EQ(wire_next_bottleneck_id(*o), kOther);
  // A released flow (id 0) names no link: it matches here, but a link under
  // half its capacity names nobody, so it stays 0 until a congested hop
  // claims it.
  auto z = make_ixcp_packet(1000, 50000, 100000, INT32_MAX, 0, 0);
  f.ctl.on_departure(*z);
  EXPECT_GT(wire_feedback(*z), 0);
  EXPECT_EQ(wire_next_bottleneck_id(*z), 0u);
  EXPECT_EQ(f.ctl.ixcp_counters().ids_written, 0u);
}

TEST(IxcpController, IdlePortInItsFirstIntervalNamesNobody) {
  // Before its first control timeout a port has no allocation: feedback 0,
  // which is smaller than the positive feedback of the congested hops before
  // it. Fig. 6's idle egress rd->d0 named the long flow this way (id 0 →
  // its own), so the flow was non-matching at its three congested links and
  // stayed at one packet for 20 s. Now the id is left as it came.
  IxcpController ctl(XcpParams{}, std::make_unique<LinkSpareBandwidth>(62.5e6), 3, kOurs);
  auto z = make_ixcp_packet(1000, 1416, 130000, 500, 0, 0);
  ctl.on_departure(*z);
  EXPECT_EQ(wire_feedback(*z), 0);
  EXPECT_EQ(wire_next_bottleneck_id(*z), 0u);
  auto up = make_ixcp_packet(1000, 1416, 130000, 500, 0, kOther);  // a hop before claimed it
  ctl.on_departure(*up);
  EXPECT_EQ(wire_next_bottleneck_id(*up), kOther);
  auto mine = make_ixcp_packet(1000, 1416, 130000, 500, kOurs, kOurs);
  ctl.on_departure(*mine);
  EXPECT_EQ(wire_next_bottleneck_id(*mine), 0u);
  EXPECT_EQ(ctl.ixcp_counters().ids_written, 0u);
}

TEST(IxcpController, NamedFlowHeldUpstreamBelowTheLocalRateIsReleased) {
  // The fixture's interval: congested (y = 1e7 >= S = 5e5), local rate
  // Ss_m/SA_m = 1e6 B/s. A flow named here at cwnd 50 000 over 0.1 s (5e5 B/s,
  // under 0.8 of the local rate) would get p = 40 + 120, n = 60: +100 B, but
  // an upstream hop already wrote 10 B. This hop does not lower it and
  // releases it to 0 (Fig. 6: the 100 link kept naming the long flow that the
  // 150 link held, IXCP.md).
  Fixture f;
  auto slow = make_ixcp_packet(1000, 50000, 100000, 10, kOurs, kOurs);
  f.ctl.on_departure(*slow);
  EXPECT_EQ(wire_feedback(*slow), 10);
  EXPECT_EQ(wire_next_bottleneck_id(*slow), 0u);
  EXPECT_EQ(f.ctl.ixcp_counters().held_released, 1u);
  EXPECT_EQ(f.ctl.ixcp_counters().ids_released, 1u);
  // At the local rate (1e6 B/s): held upstream, but as fast as the flows
  // here: kept (Low's long flows at their 100 link).
  auto fast = make_ixcp_packet(1000, 100000, 100000, 10, kOurs, kOurs);
  f.ctl.on_departure(*fast);
  EXPECT_EQ(wire_next_bottleneck_id(*fast), kOurs);
  // Renamed by an upstream hop: left as it came.
  auto renamed = make_ixcp_packet(1000, 50000, 100000, 10, kOurs, kOther);
  f.ctl.on_departure(*renamed);
  EXPECT_EQ(wire_next_bottleneck_id(*renamed), kOther);
  // Lowered here (the request is larger): this link holds it and names it.
  auto lowered = make_ixcp_packet(1000, 50000, 100000, INT32_MAX, kOurs, kOurs);
  f.ctl.on_departure(*lowered);
  EXPECT_EQ(wire_next_bottleneck_id(*lowered), kOurs);
  EXPECT_EQ(f.ctl.ixcp_counters().held_released, 1u);
}

TEST(IxcpController, FlowNamedElsewhereClippedHereIsClaimed) {
  // The fixture's congested interval, local rate 1e6 B/s. A flow named
  // elsewhere at 5e5 B/s (under 0.8 of the local rate) gets spare-only
  // feedback here, 2e5·2e-4 = 40 B, below the 45 B the hops before gave:
  // this hop lowers it. As a flow of its own it would get 40 + 120 − 60 =
  // 100 B, more than it carries, so this link holds it only because it does
  // not count it as its own: claimed (Fig. 6, a flow named after the first
  // of several full links, IXCP.md).
  Fixture f;
  auto clipped = make_ixcp_packet(1000, 50000, 100000, 45, kOther, kOther);
  f.ctl.on_departure(*clipped);
  EXPECT_EQ(wire_feedback(*clipped), 40);
  EXPECT_EQ(wire_next_bottleneck_id(*clipped), kOurs);
  EXPECT_EQ(f.ctl.ixcp_counters().clipped_claims, 1u);
  // The hops before gave 200 B (an access link's large request, or a link
  // that gives more than we would as its bottleneck): lowered, not claimed.
  auto upstream_more = make_ixcp_packet(1000, 50000, 100000, 200, kOther, kOther);
  f.ctl.on_departure(*upstream_more);
  EXPECT_LT(wire_feedback(*upstream_more), 200);
  EXPECT_EQ(wire_next_bottleneck_id(*upstream_more), kOther);
  // Between 0.8 and 0.9 of the local rate (8.5e5 B/s): neither slow enough
  // for this test nor as fast as the flows here: not claimed.
  auto between = make_ixcp_packet(1000, 85000, 100000, 45, kOther, kOther);
  f.ctl.on_departure(*between);
  EXPECT_EQ(wire_next_bottleneck_id(*between), kOther);
  EXPECT_EQ(f.ctl.ixcp_counters().clipped_claims, 1u);
  EXPECT_EQ(f.ctl.ixcp_counters().fast_claims, 0u);
}

TEST(IxcpController, FlowNamedElsewhereAsFastAsTheFlowsHereIsClaimed) {
  // The fixture's congested interval (phi = +20 000 B), local rate 1e6 B/s.
  // A flow named elsewhere at the local rate (cwnd 100 000 over 0.1 s,
  // w = r²s/cwnd = 1e-4) gets spare-only 2e5·w = 20 B here, less than the
  // 45 B a congested hop before it gave: this hop holds it, and in a max-min
  // allocation the flows a link holds are its fastest: claimed (IXCP.md,
  // "Claim of a flow as fast as the flows here"; the law before left it
  // named elsewhere, and its packets kept that name: Fig. 4's group 2 sent
  // 36 % of its packets named after link 1, simulated).
  Fixture f;
  auto fast = make_ixcp_packet(1000, 100000, 100000, 45, kOther, kOther);
  f.ctl.on_departure(*fast);
  EXPECT_EQ(wire_feedback(*fast), 20);
  EXPECT_EQ(wire_next_bottleneck_id(*fast), kOurs);
  EXPECT_EQ(f.ctl.ixcp_counters().fast_claims, 1u);
  // At 0.9 of the local rate (cwnd 90 000): claimed.
  auto near = make_ixcp_packet(1000, 90000, 100000, 45, kOther, kOther);
  f.ctl.on_departure(*near);
  EXPECT_EQ(wire_next_bottleneck_id(*near), kOurs);
  EXPECT_EQ(f.ctl.ixcp_counters().fast_claims, 2u);
  // Positive feedback lowering the sender's unlimited request, or a request
  // above a packet per packet (an access port's spare): not claimed.
  auto unlimited = make_ixcp_packet(1000, 100000, 100000, INT32_MAX, kOther, kOther);
  f.ctl.on_departure(*unlimited);
  EXPECT_EQ(wire_feedback(*unlimited), 20);
  EXPECT_EQ(wire_next_bottleneck_id(*unlimited), kOther);
  auto access = make_ixcp_packet(1000, 100000, 100000, 1500, kOther, kOther);
  f.ctl.on_departure(*access);
  EXPECT_EQ(wire_next_bottleneck_id(*access), kOther);
  // A hop before gave less (10 < 20): this hop does not lower it, no claim.
  auto upstream_less = make_ixcp_packet(1000, 100000, 100000, 10, kOther, kOther);
  f.ctl.on_departure(*upstream_less);
  EXPECT_EQ(wire_next_bottleneck_id(*upstream_less), kOther);
  EXPECT_EQ(f.ctl.ixcp_counters().fast_claims, 2u);

  // Negative feedback (C = 9.5 MB/s, phi = −20 000 B, n = 20 B per packet):
  // the same flow is claimed with every packet, whatever its request (the
  // probability s/(rtt·local_rate) = 0.01 per packet is for slower flows:
  // it claimed about 1 of these 100).
  Fixture neg(9.5e6);
  for (int i = 0; i < 100; ++i) {
    auto o = make_ixcp_packet(1000, 100000, 100000, INT32_MAX, kOther, kOther);
    neg.ctl.on_departure(*o);
    EXPECT_EQ(wire_feedback(*o), -20);
    EXPECT_EQ(wire_next_bottleneck_id(*o), kOurs);
  }
  EXPECT_EQ(neg.ctl.ixcp_counters().fast_claims, 100u);
  EXPECT_EQ(neg.ctl.ixcp_counters().claims_declined, 0u);

  // A port under half its capacity (an access link) is nobody's bottleneck.
  Fixture spare(100e6);
  auto idle = make_ixcp_packet(1000, 100000, 100000, 45, kOther, kOther);
  spare.ctl.on_departure(*idle);
  EXPECT_EQ(wire_next_bottleneck_id(*idle), kOther);
  EXPECT_EQ(spare.ctl.ixcp_counters().fast_claims, 0u);
}

TEST(IxcpController, ClippedClaimCountsTheFlowAsMatching) {
  // Low's 155 link in small: one flow bottlenecked here (100 packets, cwnd
  // 1e5, rtt 0.1 s: 1e6 B/s, SA_m = 0.1 = T, Ss_m = 1e5) and ten slow flows
  // named elsewhere (100 packets, cwnd 1e4: 1e5 B/s each, SA_nm = 1.0,
  // 1e5 B); C = 2.1e6 B/s, one 0.1 s interval:
  //   y = 2e6, y0 = 1e6, d = 0.1, phi = 0.4·0.1·1e5 = 4 000 B
  //   h = 0.1·1e6·0.1 − 4 000 = 6 000 B; spare split max(0.5, 0.1/1.1) = 0.5
  // A slow flow's packet (w = r²s/cwnd = 1e-3) gets spare-only 2e4·w = 20 B.
  // Counted as matching as the interval was sized (not in SA_m) it would get
  //   p' = 6 000/(0.1·0.1)·w = 600, n' = 6 000/(0.1·1e5)·0.1·1000 = 60,
  //   spare 2 000/(0.1·0.1)·w = 200:  740 B  (the whole interval's shuffle),
  // counted in the sums (y0 9e5, SA_m 0.2, Ss_m 1.1e5; h = 7 000, split 0.45):
  //   p' = 7 000/(0.1·0.2)·w = 350, n' = 7 000/(0.1·1.1e5)·100 = 63.6,
  //   spare 2 200/(0.1·0.2)·w = 110:  396.4 B.
  // Its request, 500 B from an access port with spare (the engine's Low at
  // n = 64: 5.3 KB against 5.6 KB computed here, 3 392 claims in 60 s), is
  // between the two: not claimed (the law of 3a7d0da claimed it). 300 B, below
  // both: claimed, this link truly holds it.
  IxcpController ctl(XcpParams{}, std::make_unique<LinkSpareBandwidth>(2.1e6), 3, kOurs);
  for (int i = 0; i < 100; ++i) {
    ctl.on_arrival(*make_ixcp_packet(1000, 100000, 100000, INT32_MAX, kOurs, kOurs));
    ctl.on_arrival(*make_ixcp_packet(1000, 10000, 100000, INT32_MAX, kOther, kOther));
  }
  ctl.on_timeout(0.1, 0.0);
  ASSERT_NEAR(ctl.shuffle().h, 6000, 1e-6);
  ASSERT_NEAR(ctl.local_rate(), 1e6, 1e-6);
  auto access = make_ixcp_packet(1000, 10000, 100000, 500, kOther, kOther);
  ctl.on_departure(*access);
  EXPECT_EQ(wire_feedback(*access), 20);
  EXPECT_EQ(wire_next_bottleneck_id(*access), kOther);
  EXPECT_EQ(ctl.ixcp_counters().clip_tested, 1u);
  EXPECT_EQ(ctl.ixcp_counters().clipped_claims, 0u);
  auto held = make_ixcp_packet(1000, 10000, 100000, 300, kOther, kOther);
  ctl.on_departure(*held);
  EXPECT_EQ(wire_feedback(*held), 20);
  EXPECT_EQ(wire_next_bottleneck_id(*held), kOurs);
  EXPECT_EQ(ctl.ixcp_counters().clipped_claims, 1u);
  EXPECT_NEAR(ctl.ixcp_counters().clipped_as_matching_sum, 350 + 110 - 7000.0 / 1.1e4 * 100, 0.01);
  EXPECT_EQ(ctl.ixcp_counters().clipped_h_sum, 300);
  EXPECT_NEAR(ctl.ixcp_counters().clipped_rate_ratio_sum, 0.1, 1e-12);
  // A flow with a window of two packets (2e4 B/s, w = 5e-3) counted as
  // matching (y0 9.8e5, Ss_m 1.02e5; h = 6 200, split 0.49) would get
  //   p' = 6 200/(0.1·0.2)·w = 1 550, n' = 6 200/(0.1·1.02e5)·100 = 60.8,
  //   spare 2 040/(0.1·0.2)·w = 510:  1 999.2 B;
  // here spare-only 2e4·w = 100 B. A request of 1 500 B, more than a packet
  // per packet (the window more than doubling in a round trip: an access
  // port's spare, Low at n = 256), is not a congested hop's share: not
  // claimed (the law before claimed it). 900 B: claimed.
  auto doubling = make_ixcp_packet(1000, 2000, 100000, 1500, kOther, kOther);
  ctl.on_departure(*doubling);
  EXPECT_EQ(wire_feedback(*doubling), 100);
  EXPECT_EQ(wire_next_bottleneck_id(*doubling), kOther);
  EXPECT_EQ(ctl.ixcp_counters().clipped_claims, 1u);
  auto small = make_ixcp_packet(1000, 2000, 100000, 900, kOther, kOther);
  ctl.on_departure(*small);
  EXPECT_EQ(wire_next_bottleneck_id(*small), kOurs);
  EXPECT_EQ(ctl.ixcp_counters().clipped_claims, 2u);
  EXPECT_NEAR(ctl.ixcp_counters().clipped_as_matching_sum - (350 + 110 - 7000.0 / 1.1e4 * 100),
              1550 + 510 - 6200.0 / 1.02e4 * 100, 0.01);
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
    SparePools spare{0, 0, 1000};
    Pools shuffle{3e5, 3e5};  // spare neg cap 100 B: takes all 30
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
    SparePools spare{0, 0, 300};
    Pools shuffle{3e5, 700};
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
