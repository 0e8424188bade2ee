// XcpController on real packets: the docs/protocol.md §2 test vector end to end
// (headers rewritten in the frame bytes), ACK / non-XCP / no-RTT handling,
// stochastic rounding and pool discarding.
#include "xcp/xcp_controller.hh"

#include <climits>
#include <cmath>
#include <vector>

#include <gtest/gtest.h>

#include "qdisc_test_util.hh"

namespace xcprouter {
namespace {

using testutil::make_packet;
using testutil::make_xcp_packet;
using testutil::wire_feedback;

struct Fixture {
  explicit Fixture(double c_bytes_per_s, uint64_t seed = 7)
      : ctl(XcpParams{}, std::make_unique<LinkSpareBandwidth>(c_bytes_per_s), seed) {}
  XcpController ctl;
};

TEST(XcpController, ProtocolTestVectorOnPackets) {
  Fixture f(12.5e6);
  std::vector<PacketPtr> pkts;
  for (int flow = 0; flow < 10; ++flow) {
    for (int i = 0; i < 100; ++i) pkts.push_back(make_xcp_packet(1000, 100000, 100000, INT32_MAX));
  }
  for (auto& p : pkts) f.ctl.on_arrival(*p);
  const IntervalState& st = f.ctl.on_timeout(0.1, 0.0);
  EXPECT_NEAR(st.sa, 1.0, 1e-9);
  EXPECT_NEAR(st.y, 10e6, 1e-3);
  EXPECT_NEAR(st.phi, 100000, 1e-6);
  EXPECT_NEAR(st.h, 0, 1e-6);
  EXPECT_NEAR(st.xi_p, 1e6, 1e-3);
  EXPECT_NEAR(st.d, 0.1, 1e-12);

  // The same 1000 packets depart during the next interval.
  for (size_t i = 0; i < pkts.size(); ++i) {
    f.ctl.on_departure(*pkts[i]);
    ASSERT_EQ(wire_feedback(*pkts[i]), 100) << "packet " << i;
    ASSERT_EQ(pkts[i]->xcp.feedback_bytes, 100);
  }
  EXPECT_NEAR(f.ctl.pools().pos, 0.0, 1e-6);
  auto extra = make_xcp_packet(1000, 100000, 100000, INT32_MAX);
  f.ctl.on_departure(*extra);
  EXPECT_EQ(wire_feedback(*extra), 0);
  EXPECT_EQ(f.ctl.counters().feedback_lowered, 1001u);
}

TEST(XcpController, FeedbackOnlyLowersHeader) {
  Fixture f(12.5e6);
  for (int i = 0; i < 1000; ++i) f.ctl.on_arrival(*make_xcp_packet(1000, 100000, 100000, INT32_MAX));
  f.ctl.on_timeout(0.1, 0.0);
  // A downstream hop already asked for 40 B (< 100 B this hop would give).
  auto p = make_xcp_packet(1000, 100000, 100000, 40);
  f.ctl.on_departure(*p);
  EXPECT_EQ(wire_feedback(*p), 40);
  EXPECT_EQ(f.ctl.counters().feedback_lowered, 0u);
  // The pool was charged p = H + n = 40 (no negative pool here): 400 B/s.
  EXPECT_NEAR(f.ctl.pools().pos, 1e6 - 400.0, 1e-6);
  auto q = make_xcp_packet(1000, 100000, 100000, -300);
  f.ctl.on_departure(*q);
  EXPECT_EQ(wire_feedback(*q), -300);
}

TEST(XcpController, MinimalAndNonXcpCountedInYButUntouched) {
  Fixture f(1e6);
  auto ack = make_xcp_packet(40, 50000, 100000, 1234, xcp::Format::kMinimal);
  auto plain = make_packet(1500);
  for (int i = 0; i < 10; ++i) {
    f.ctl.on_arrival(*ack);
    f.ctl.on_arrival(*plain);
  }
  EXPECT_DOUBLE_EQ(f.ctl.sums().y_bytes, 10 * (40 + 1500));
  EXPECT_DOUBLE_EQ(f.ctl.sums().sa, 0.0);
  EXPECT_DOUBLE_EQ(f.ctl.sums().ss, 0.0);
  const IntervalState& st = f.ctl.on_timeout(0.1, 0);
  EXPECT_NEAR(st.y, 15400 / 0.1, 1e-6);
  EXPECT_DOUBLE_EQ(st.d_new, 0.05);  // no Standard samples
  f.ctl.on_departure(*ack);
  EXPECT_EQ(wire_feedback(*ack), 1234);
  EXPECT_EQ(f.ctl.counters().minimal, 10u);
  EXPECT_EQ(f.ctl.counters().non_xcp, 10u);
}

TEST(XcpController, NoRttOrNoCwndGetsAtMostZero) {
  Fixture f(1e6);
  f.ctl.on_arrival(*make_xcp_packet(1000, 0, 100000, 500));
  f.ctl.on_arrival(*make_xcp_packet(1000, 50000, 0, 500));
  EXPECT_DOUBLE_EQ(f.ctl.sums().sa, 0.0);  // not in the sums
  EXPECT_DOUBLE_EQ(f.ctl.sums().y_bytes, 2000);
  f.ctl.on_timeout(0.1, 0);
  auto a = make_xcp_packet(1000, 50000, 0, INT32_MAX);
  auto b = make_xcp_packet(1000, 0, 100000, -20);
  f.ctl.on_departure(*a);
  f.ctl.on_departure(*b);
  EXPECT_EQ(wire_feedback(*a), 0);
  EXPECT_EQ(wire_feedback(*b), -20);
  EXPECT_EQ(f.ctl.counters().no_rtt, 2u);
}

TEST(XcpController, RttCappedAtOneSecondInSums) {
  Fixture f(1e6);
  f.ctl.on_arrival(*make_xcp_packet(1000, 100000, 5'000'000, 0));  // 5 s RTT
  EXPECT_NEAR(f.ctl.sums().sa, 1.0 * 1000 / 100000, 1e-12);
  EXPECT_NEAR(f.ctl.sums().sb, 1.0 * 1000 / 100000, 1e-12);
}

TEST(XcpController, StochasticRoundingIsUnbiased) {
  // Sub-byte per-packet feedback must average its real value, not round to 0.
  // 20000 × 1000 B over 40 s: y = 0.5 MB/s against C = 0.6 MB/s.
  Fixture f(6e5, 42);
  for (int i = 0; i < 20000; ++i) f.ctl.on_arrival(*make_xcp_packet(1000, 100000, 100000, INT32_MAX));
  const IntervalState st = f.ctl.on_timeout(40.0, 0);
  const double expect_fb = st.xi_p * 0.01 * 1000 / 100000 - st.xi_n * 0.1 * 1000;
  ASSERT_GT(expect_fb, 0.05);
  ASSERT_LT(expect_fb, 0.95);
  const int n = 10000;  // half the interval's packets: the pools never run dry
  double sum = 0;
  for (int i = 0; i < n; ++i) {
    auto p = make_xcp_packet(1000, 100000, 100000, INT32_MAX);
    f.ctl.on_departure(*p);
    const int32_t v = wire_feedback(*p);
    ASSERT_TRUE(v == 0 || v == 1) << v;
    sum += v;
  }
  ASSERT_GT(f.ctl.pools().pos, 0.0);
  // Bernoulli(expect_fb) mean within 5 standard errors.
  const double se = std::sqrt(expect_fb * (1 - expect_fb) / n);
  EXPECT_NEAR(sum / n, expect_fb, 5 * se);
  EXPECT_GT(sum, 0);
}

TEST(XcpController, PoolsDiscardedAtTimeout) {
  Fixture f(12.5e6);
  for (int i = 0; i < 1000; ++i) f.ctl.on_arrival(*make_xcp_packet(1000, 100000, 100000, INT32_MAX));
  f.ctl.on_timeout(0.1, 0);
  ASSERT_NEAR(f.ctl.pools().pos, 1e6, 1e-3);
  // Nothing departs; the next interval sees no traffic at all: pools are the
  // new interval's, not 1e6 carried over plus the new allocation.
  const IntervalState& st = f.ctl.on_timeout(0.1, 0);
  EXPECT_DOUBLE_EQ(st.y, 0);
  EXPECT_NEAR(st.r_pos, 0.4 * 12.5e6, 1e-3);  // phi/d_new = α·C with d_new = 0.05 s fallback
  EXPECT_DOUBLE_EQ(f.ctl.pools().pos, st.r_pos);
  EXPECT_DOUBLE_EQ(f.ctl.pools().neg, 0.0);
  // And sums were reset.
  EXPECT_DOUBLE_EQ(f.ctl.sums().y_bytes, 0.0);
  EXPECT_EQ(f.ctl.counters().intervals, 2u);
}

TEST(XcpController, HostileHeadersNeverRaiseFeedbackOrBreakState) {
  // Seeded random headers over the whole field ranges, random sizes, random
  // interval lengths and queues: H_feedback never rises, pools never go
  // negative, the state stays finite and d stays within its bounds.
  Fixture f(1.25e6, 3);
  UniformRng rng(99);
  auto u32 = [&] { return static_cast<uint32_t>(rng.next_u64()); };
  for (int round = 0; round < 200; ++round) {
    std::vector<PacketPtr> pkts;
    for (int i = 0; i < 50; ++i) {
      const auto fmt = static_cast<xcp::Format>(1 + rng.next_u64() % 3);
      const uint32_t size = 40 + static_cast<uint32_t>(rng.next_u64() % 1461);
      const uint32_t cwnd = rng.next() < 0.1 ? 0 : (rng.next() < 0.5 ? 1 + u32() % 4096 : u32());
      const uint32_t rtt = rng.next() < 0.1 ? 0 : (rng.next() < 0.5 ? 1 + u32() % 1000 : u32());
      const auto fb = static_cast<int32_t>(u32());
      pkts.push_back(rng.next() < 0.1 ? make_packet(size) : make_xcp_packet(size, cwnd, rtt, fb, fmt));
      f.ctl.on_arrival(*pkts.back());
    }
    const IntervalState& st = f.ctl.on_timeout(rng.next() * 0.2, rng.next() * 1e6);
    for (double v : {st.phi, st.h, st.xi_p, st.xi_n, st.r_pos, st.r_neg, st.d, st.y}) ASSERT_TRUE(std::isfinite(v));
    ASSERT_GE(st.d, 0.001);
    ASSERT_LE(st.d, 1.0);
    for (auto& p : pkts) {
      const int32_t before = p->has_xcp() ? wire_feedback(*p) : 0;
      f.ctl.on_departure(*p);
      if (p->has_xcp()) {
        ASSERT_LE(wire_feedback(*p), before);
        if (p->xcp.format != xcp::Format::kStandard) {
          ASSERT_EQ(wire_feedback(*p), before);
        }
      }
      ASSERT_GE(f.ctl.pools().pos, 0.0);
      ASSERT_GE(f.ctl.pools().neg, 0.0);
    }
  }
}

TEST(XcpController, ReportNamesFields) {
  Fixture f(1e6);
  f.ctl.on_timeout(0.05, 0);
  nlohmann::json j;
  f.ctl.report(j);
  for (const char* k : {"d", "phi", "h", "y", "Q", "xi_p", "xi_n", "R_pos", "R_neg", "SA",
                        "feedback_packets"}) {
    EXPECT_TRUE(j.contains(k)) << k;
  }
}

}  // namespace
}  // namespace xcprouter
