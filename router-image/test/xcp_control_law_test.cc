// docs/protocol.md §2 control law as pure functions, including the test vector.
#include "xcp/xcp_control_law.hh"

#include <gtest/gtest.h>

namespace xcprouter {
namespace {

// The docs/protocol.md §2 test vector: C = 12.5 MB/s, d = 0.1 s, y = 10 MB/s,
// Q = 0, 10 flows with cwnd = 100 000 B, rtt = 0.1 s, s = 1000 B.
constexpr double kC = 12.5e6, kY = 10e6, kD = 0.1, kCwnd = 100000, kRtt = 0.1, kS = 1000;
constexpr int kPackets = static_cast<int>(kY * kD / kS);  // 1000 packets per interval

IntervalState vector_state(IntervalSums& sums) {
  for (int i = 0; i < kPackets; ++i) {
    sums.y_bytes += kS;
    sums.add_standard(kS, kRtt, kCwnd);
  }
  TimeoutInput in;
  in.elapsed_s = kD;
  in.queue_bytes = 0;
  const double y = sums.y_bytes / in.elapsed_s;
  in.spare_bytes_per_s = kC - y;
  return compute_interval(sums, y, in, XcpParams{});
}

TEST(XcpControlLaw, ProtocolTestVectorInterval) {
  IntervalSums sums;
  const IntervalState st = vector_state(sums);
  EXPECT_NEAR(st.y, 10e6, 1e-3);
  EXPECT_NEAR(st.sa, 1.0, 1e-9);
  EXPECT_NEAR(st.d_new, 0.1, 1e-12);
  EXPECT_NEAR(st.phi, 100000.0, 1e-6);
  EXPECT_NEAR(st.h, 0.0, 1e-6);
  EXPECT_NEAR(st.xi_p, 1e6, 1e-3);
  EXPECT_NEAR(st.xi_n, 0.0, 1e-9);
  EXPECT_NEAR(st.r_pos, 1e6, 1e-3);
  EXPECT_NEAR(st.r_neg, 0.0, 1e-6);
  EXPECT_DOUBLE_EQ(st.d, st.d_new);
}

TEST(XcpControlLaw, ProtocolTestVectorPoolExhaustedAtLastPacket) {
  IntervalSums sums;
  const IntervalState st = vector_state(sums);
  Pools pools{st.r_pos, st.r_neg};
  for (int i = 0; i < kPackets; ++i) {
    const DepartureFeedback f = compute_departure(st, pools, kS, kRtt, kCwnd, 2147483647.0);
    ASSERT_NEAR(f.p, 100.0, 1e-6) << "packet " << i;
    ASSERT_NEAR(f.n, 0.0, 1e-9);
    ASSERT_TRUE(f.lowers);
    if (i < kPackets - 1) {
      ASSERT_GT(pools.pos, 999.0) << "pool ran dry early at packet " << i;
    }
  }
  EXPECT_NEAR(pools.pos, 0.0, 1e-6);
  // One more packet finds the pool empty.
  const DepartureFeedback extra = compute_departure(st, pools, kS, kRtt, kCwnd, 2147483647.0);
  EXPECT_NEAR(extra.p, 0.0, 1e-6);
}

TEST(XcpControlLaw, NoSamplesFallsBackTo50msAndNoFeedbackScale) {
  IntervalSums sums;
  sums.y_bytes = 5000;
  TimeoutInput in{.elapsed_s = 0.05, .queue_bytes = 0, .spare_bytes_per_s = 1e6 - 1e5};
  const IntervalState st = compute_interval(sums, 1e5, in, XcpParams{});
  EXPECT_DOUBLE_EQ(st.d_new, 0.05);
  EXPECT_DOUBLE_EQ(st.xi_p, 0.0);
  EXPECT_DOUBLE_EQ(st.xi_n, 0.0);
  EXPECT_NEAR(st.phi, 0.4 * 0.05 * 9e5, 1e-6);
}

TEST(XcpControlLaw, QueueMakesPhiNegativeAndFillsNegativePool) {
  IntervalSums sums;
  for (int i = 0; i < 100; ++i) sums.add_standard(1000, 0.1, 50000);
  TimeoutInput in{.elapsed_s = 0.1, .queue_bytes = 50000, .spare_bytes_per_s = 0};
  const IntervalState st = compute_interval(sums, 1e6, in, XcpParams{});
  EXPECT_NEAR(st.phi, -0.226 * 50000, 1e-6);
  EXPECT_NEAR(st.h, std::max(0.0, 0.1 * 1e6 * 0.1 - 0.226 * 50000), 1e-6);
  EXPECT_NEAR(st.r_neg, (st.h + 0.226 * 50000) / 0.1, 1e-6);
  EXPECT_NEAR(st.xi_n, (st.h + 0.226 * 50000) / (0.1 * 100000), 1e-9);
}

TEST(XcpControlLaw, IntervalClampedButPhiUsesUnclampedDnew) {
  IntervalSums sums;
  sums.add_standard(1000, 0.0002, 10000);  // 200 us RTT
  TimeoutInput in{.elapsed_s = 0.001, .queue_bytes = 0, .spare_bytes_per_s = 1e6};
  const IntervalState st = compute_interval(sums, 0, in, XcpParams{});
  EXPECT_NEAR(st.d_new, 0.0002, 1e-12);
  EXPECT_DOUBLE_EQ(st.d, 0.001);
  EXPECT_NEAR(st.phi, 0.4 * 0.0002 * 1e6, 1e-9);
}

TEST(XcpControlLaw, FeedbackOnlyLowersAndBooksDifferenceAsNegative) {
  IntervalState st;
  st.xi_p = 1e6;
  st.xi_n = 1.0;
  Pools pools{1e6, 1e6};
  // p = 1e6·0.01·1000/100000 = 100, n = 1·0.1·1000 = 100, fb = 0 > H = -50.
  const DepartureFeedback f = compute_departure(st, pools, 1000, 0.1, 100000, -50);
  EXPECT_FALSE(f.lowers);
  EXPECT_NEAR(f.n, 150.0, 1e-9);      // n + fb − H = 100 + 0 + 50
  EXPECT_NEAR(f.p, -50.0 + 150.0, 1e-9);  // p = H + n
  EXPECT_NEAR(pools.pos, 1e6 - 100.0 / 0.1, 1e-6);
  EXPECT_NEAR(pools.neg, 1e6 - 150.0 / 0.1, 1e-6);
}

TEST(XcpControlLaw, ElseBranchLimitedByNegativePool) {
  IntervalState st;
  st.xi_p = 1e6;
  st.xi_n = 0;
  Pools pools{1e6, 200};  // R_neg·rtt = 20 bytes
  const DepartureFeedback f = compute_departure(st, pools, 1000, 0.1, 100000, 30);
  EXPECT_FALSE(f.lowers);
  EXPECT_NEAR(f.n, 20.0, 1e-9);
  EXPECT_NEAR(f.p, 50.0, 1e-9);
  EXPECT_NEAR(pools.neg, 0.0, 1e-9);
}

TEST(XcpControlLaw, PositiveFeedbackEqualisesRateIncreaseAcrossRtts) {
  // Per interval a flow sends cwnd/s·d/rtt packets; each gets
  // xi_p·rtt²·s/cwnd, so its window grows by xi_p·rtt·d and its rate by
  // xi_p·d, independent of rtt and cwnd (SIGCOMM'02 §3.4).
  IntervalState st;
  st.xi_p = 1e5;
  const double d = 0.1;
  for (double rtt : {0.02, 0.1, 0.3}) {
    for (double cwnd : {10000.0, 200000.0}) {
      Pools pools{1e12, 0};
      const double pkts = cwnd / 1000 * d / rtt;
      const double dcwnd = pkts * compute_departure(st, pools, 1000, rtt, cwnd, 1e9).p;
      EXPECT_NEAR(dcwnd / rtt, st.xi_p * d, 1e-6 * st.xi_p * d) << rtt << " " << cwnd;
    }
  }
}

}  // namespace
}  // namespace xcprouter
