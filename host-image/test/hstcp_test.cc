#include "cc/hstcp.hh"

#include <gtest/gtest.h>

#include <vector>

namespace xcphost {
namespace {

using xcp::Timestamp;
constexpr uint64_t kMss = 1000;

// RFC 3649 §5 / docs/protocol.md §7 check values. The RFC's table rounds a(w) to an
// integer and b(w) to two decimals, and its p(w) endpoints are themselves
// rounded (Low_P = 10^-3 for w = 38), so the formula lands within 3 % of the
// integer a (largest gap: 30.6 vs 30 at w = 10661) and within 0.005 of b.
struct CheckValue {
  double w;
  double a;
  double b;
};

TEST(Hstcp, ResponseFunctionMatchesRfcCheckValues) {
  const std::vector<CheckValue> table = {
      {118, 2, 0.44}, {1058, 8, 0.33}, {10661, 30, 0.21}, {84035, 73, 0.10}};
  for (const auto& c : table) {
    EXPECT_NEAR(Hstcp::a(c.w), c.a, 0.03 * c.a) << "a(" << c.w << ")";
    EXPECT_NEAR(Hstcp::b(c.w), c.b, 0.005) << "b(" << c.w << ")";
  }
}

TEST(Hstcp, EndpointsAndMonotonicity) {
  EXPECT_DOUBLE_EQ(Hstcp::b(38), 0.5);
  EXPECT_DOUBLE_EQ(Hstcp::a(38), 1.0);
  EXPECT_NEAR(Hstcp::b(83000), 0.1, 1e-12);
  EXPECT_NEAR(Hstcp::p(83000), 1e-7, 1e-15);
  EXPECT_NEAR(Hstcp::p(38), 1e-3, 1e-12);
  double prev_a = 0, prev_b = 1;
  for (double w = 39; w < 100'000; w *= 1.3) {
    EXPECT_GE(Hstcp::a(w), prev_a);
    EXPECT_LT(Hstcp::b(w), prev_b);
    prev_a = Hstcp::a(w);
    prev_b = Hstcp::b(w);
  }
}

AckEvent acked(uint64_t bytes, uint64_t flight, bool in_recovery = false) {
  AckEvent a;
  a.newly_acked_bytes = bytes;
  a.bytes_in_flight = flight;
  a.in_recovery = in_recovery;
  return a;
}

// Puts a controller into congestion avoidance at about `segments` segments.
template <typename Cc>
void enter_avoidance(Cc& c, uint64_t window_bytes) {
  c.on_loss(Timestamp::zero(), window_bytes);
  c.on_ack(acked(kMss, window_bytes, true));
  c.on_recovery_exit(Timestamp::zero());
}

void ack_one_window(CongestionController& c) {
  const uint64_t w = c.cwnd_bytes();
  for (uint64_t done = 0; done < w; done += kMss) c.on_ack(acked(kMss, w));
}

CcConfig config(uint64_t initial_segments) {
  CcConfig c;
  c.mss_bytes = kMss;
  c.initial_cwnd_bytes = initial_segments * kMss;
  return c;
}

TEST(Hstcp, BelowLowWindowIdenticalToNewReno) {
  NewReno reno(config(4));
  Hstcp hs(config(4));
  for (int i = 0; i < 3; ++i) {
    ack_one_window(reno);
    ack_one_window(hs);
  }
  EXPECT_EQ(hs.cwnd_bytes(), reno.cwnd_bytes());  // 32 segments, slow start
  reno.on_loss(Timestamp::zero(), 30'000);
  hs.on_loss(Timestamp::zero(), 30'000);
  EXPECT_EQ(hs.ssthresh_bytes(), reno.ssthresh_bytes());
  for (int i = 0; i < 10; ++i) {
    reno.on_ack(acked(kMss, 15'000, true));
    hs.on_ack(acked(kMss, 15'000, true));
  }
  reno.on_recovery_exit(Timestamp::zero());
  hs.on_recovery_exit(Timestamp::zero());
  for (int i = 0; i < 15; ++i) {
    ack_one_window(reno);
    ack_one_window(hs);
    ASSERT_EQ(hs.cwnd_bytes(), reno.cwnd_bytes());
  }
  EXPECT_LT(hs.cwnd_bytes(), 38 * kMss);
}

TEST(Hstcp, LargeWindowGrowsByAofWPerRtt) {
  // At w ≈ 1058 segments a(w) ≈ 8: one RTT of ACKs adds about 8 segments.
  Hstcp hs(config(1600));
  enter_avoidance(hs, 1600 * kMss);
  const double w0 = static_cast<double>(hs.cwnd_bytes()) / kMss;
  ASSERT_NEAR(w0, 1600 * (1 - Hstcp::b(1600)), 1.0);
  ack_one_window(hs);
  const double w1 = static_cast<double>(hs.cwnd_bytes()) / kMss;
  EXPECT_NEAR(w1 - w0, Hstcp::a(w0), 0.2);
  EXPECT_GT(w1 - w0, 7.0);
  NewReno reno(config(1600));
  enter_avoidance(reno, 1600 * kMss);
  const double r0 = static_cast<double>(reno.cwnd_bytes()) / kMss;
  ack_one_window(reno);
  EXPECT_NEAR(static_cast<double>(reno.cwnd_bytes()) / kMss - r0, 1.0, 0.05);
}

TEST(Hstcp, LossDecreaseUsesBofW) {
  Hstcp hs(config(10'661));
  enter_avoidance(hs, 10'661 * kMss);
  // w ← (1 − b(w))·w with b(10661) ≈ 0.21: keeps ~79 %, NewReno would keep 50 %.
  const double w = static_cast<double>(hs.cwnd_bytes()) / kMss;
  EXPECT_NEAR(w, 10'661 * (1 - Hstcp::b(10'661)), 1.0);
  EXPECT_NEAR(w / 10'661, 0.79, 0.01);
  hs.on_loss(Timestamp::zero(), hs.cwnd_bytes());
  EXPECT_NEAR(static_cast<double>(hs.cwnd_bytes()) / kMss, w * (1 - Hstcp::b(w)), 1.0);
}

TEST(Hstcp, TimeoutFallsBackToOneSegment) {
  Hstcp hs(config(5000));
  hs.on_timeout(Timestamp::zero());
  EXPECT_EQ(hs.cwnd_bytes(), kMss);
  EXPECT_NEAR(static_cast<double>(hs.ssthresh_bytes()) / kMss, 5000 * (1 - Hstcp::b(5000)), 1.0);
}

}  // namespace
}  // namespace xcphost
