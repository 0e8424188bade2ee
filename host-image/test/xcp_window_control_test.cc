#include "cc/xcp_window_control.hh"

#include <gtest/gtest.h>

#include <limits>
#include <random>

namespace xcphost {
namespace {

using xcp::Duration;
using xcp::Timestamp;

constexpr int32_t kI32Max = std::numeric_limits<int32_t>::max();

CcConfig config(uint32_t mss = 1000, uint32_t s = 1000) {
  CcConfig c;
  c.mss_bytes = mss;
  c.packet_bytes = s;
  return c;
}

AckEvent ack_with(int32_t feedback, bool duplicate = false, bool in_recovery = false) {
  AckEvent a;
  a.reverse_feedback_bytes = feedback;
  a.duplicate = duplicate;
  a.newly_acked_bytes = duplicate ? 0 : 1000;
  a.in_recovery = in_recovery;
  return a;
}

TEST(XcpWindowControl, StartsAtOnePacket) {
  XcpWindowControl x(config(1448, 1500));
  EXPECT_EQ(x.wire_cwnd_bytes(), 1500u);
  EXPECT_EQ(x.cwnd_bytes(), 1448u);
  EXPECT_EQ(x.ssthresh_bytes(), 0u);
}

TEST(XcpWindowControl, ConfiguredInitialWindowIsPayloadBytes) {
  CcConfig c = config(1448, 1500);
  c.initial_cwnd_bytes = 10 * 1448;
  XcpWindowControl x(c);
  EXPECT_EQ(x.wire_cwnd_bytes(), 15'000u);
  EXPECT_EQ(x.cwnd_bytes(), 14'480u);
}

TEST(XcpWindowControl, FeedbackAppliedExactlyOncePerAckIncludingDuplicates) {
  XcpWindowControl x(config());
  x.on_ack(ack_with(500));
  EXPECT_EQ(x.wire_cwnd_bytes(), 1500u);
  x.on_ack(ack_with(500, /*duplicate=*/true));
  EXPECT_EQ(x.wire_cwnd_bytes(), 2000u);
  x.on_ack(ack_with(0));
  EXPECT_EQ(x.wire_cwnd_bytes(), 2000u) << "no additive increase, no slow start";
  x.on_ack(ack_with(-300, true));
  EXPECT_EQ(x.wire_cwnd_bytes(), 1700u);
  EXPECT_EQ(x.feedback_applied_bytes(), 700);
}

TEST(XcpWindowControl, FeedbackFromNewAcksOnlyDropsTheDuplicatesFeedback) {
  // ns-2.35's XcpAgent applies H_reverse_feedback in recv_newack_helper only.
  CcConfig c = config();
  c.feedback_on_new_acks_only = true;
  XcpWindowControl x(c);
  x.on_ack(ack_with(500));
  x.on_ack(ack_with(500, /*duplicate=*/true));
  x.on_ack(ack_with(-300, /*duplicate=*/true));
  EXPECT_EQ(x.wire_cwnd_bytes(), 1500u);  // one packet + the new ACK's 500
  EXPECT_EQ(x.feedback_applied_bytes(), 500);
}

TEST(XcpWindowControl, WindowIsInitialPlusSumOfFeedback) {
  std::mt19937 rng(3);
  std::uniform_int_distribution<int32_t> fb(-200, 400);
  XcpWindowControl x(config(1448, 1500));
  int64_t expected = 1500;
  for (int i = 0; i < 5000; ++i) {
    const int32_t f = fb(rng);
    expected = std::max<int64_t>(expected + f, 1500);
    x.on_ack(ack_with(f, i % 7 == 0));
    ASSERT_EQ(static_cast<int64_t>(x.wire_cwnd_bytes()), expected);
  }
  EXPECT_EQ(x.cwnd_bytes(), static_cast<uint64_t>(expected * 1448 / 1500));
}

TEST(XcpWindowControl, NegativeFeedbackFloorsAtOnePacket) {
  XcpWindowControl x(config(1000, 1040));
  x.on_ack(ack_with(10'000));
  x.on_ack(ack_with(-1'000'000));
  EXPECT_EQ(x.wire_cwnd_bytes(), 1040u);
  EXPECT_EQ(x.cwnd_bytes(), 1000u);
}

TEST(XcpWindowControl, ThreeDupacksHalveAndFeedbackKeepsApplying) {
  XcpWindowControl x(config());
  x.on_ack(ack_with(9000));  // 10000
  x.on_loss(Timestamp::zero(), 10'000);
  EXPECT_EQ(x.wire_cwnd_bytes(), 5000u);
  EXPECT_TRUE(x.in_loss_fallback());
  x.on_ack(ack_with(250, true, /*in_recovery=*/true));
  EXPECT_EQ(x.wire_cwnd_bytes(), 5250u);
  xcp::XcpHeader h;
  x.fill_header(h, Duration::milliseconds(50), false);
  EXPECT_TRUE(h.flags & xcp::flags::kLossFallback);
  x.on_recovery_exit(Timestamp::zero());
  EXPECT_FALSE(x.in_loss_fallback());
  x.fill_header(h, Duration::milliseconds(50), false);
  EXPECT_FALSE(h.flags & xcp::flags::kLossFallback);
}

TEST(XcpWindowControl, HalvingFloorsAtOnePacket) {
  XcpWindowControl x(config(1000, 1500));
  x.on_ack(ack_with(1000));  // 2500
  x.on_loss(Timestamp::zero(), 2500);
  EXPECT_EQ(x.wire_cwnd_bytes(), 1500u);
}

TEST(XcpWindowControl, TimeoutResetsToOnePacketUntilNewDataAcked) {
  XcpWindowControl x(config());
  x.on_ack(ack_with(99'000));
  x.on_timeout(Timestamp::zero());
  EXPECT_EQ(x.wire_cwnd_bytes(), 1000u);
  EXPECT_TRUE(x.in_loss_fallback());
  x.on_ack(ack_with(700, /*duplicate=*/true));
  EXPECT_TRUE(x.in_loss_fallback());
  EXPECT_EQ(x.wire_cwnd_bytes(), 1700u) << "feedback regrows the window";
  x.on_ack(ack_with(0));
  EXPECT_FALSE(x.in_loss_fallback());
}

TEST(XcpWindowControl, HeaderUnlimited) {
  XcpWindowControl x(config());
  x.on_ack(ack_with(4000));
  xcp::XcpHeader h;
  x.fill_header(h, Duration::microseconds(80'123), false);
  EXPECT_EQ(h.cwnd_bytes, 5000u);
  EXPECT_EQ(h.rtt_us, 80'123u);
  EXPECT_EQ(h.feedback_bytes, kI32Max);
  EXPECT_FALSE(h.flags & xcp::flags::kAppLimited);
  EXPECT_FALSE(h.has_ixcp());
  EXPECT_FALSE(h.has_xcpi());
}

TEST(XcpWindowControl, HeaderBeforeFirstRttSample) {
  CcConfig c = config();
  XcpWindowControl unlimited(c);
  xcp::XcpHeader h;
  unlimited.fill_header(h, Duration::zero(), false);
  EXPECT_EQ(h.rtt_us, 0u);
  EXPECT_EQ(h.cwnd_bytes, 1000u);
  EXPECT_EQ(h.feedback_bytes, kI32Max);
  c.desired_rate = xcp::Rate::from_megabits_per_s(10);
  XcpWindowControl limited(c);
  limited.fill_header(h, Duration::zero(), false);
  EXPECT_EQ(h.feedback_bytes, 0);
}

TEST(XcpWindowControl, HeaderDesiredRate) {
  CcConfig c = config();
  c.desired_rate = xcp::Rate::from_bytes_per_s(10e6);
  XcpWindowControl x(c);
  xcp::XcpHeader h;
  // r·srtt = 1e6 bytes, cwnd 1000: s·(1e6 − 1000)/1000 = 999000
  x.fill_header(h, Duration::milliseconds(100), false);
  EXPECT_EQ(h.feedback_bytes, 999'000);
  // Above the desired window the request is negative.
  x.on_ack(ack_with(1'999'000));  // cwnd 2e6 = twice r·srtt
  x.fill_header(h, Duration::milliseconds(100), false);
  EXPECT_EQ(h.feedback_bytes, -500);
  EXPECT_EQ(XcpWindowControl::feedback_request(1500, 1e12, Duration::seconds(1), 1500), kI32Max);
}

TEST(XcpWindowControl, HeaderAppLimited) {
  XcpWindowControl x(config());
  xcp::XcpHeader h;
  x.fill_header(h, Duration::milliseconds(20), true);
  EXPECT_EQ(h.feedback_bytes, 0);
  EXPECT_TRUE(h.flags & xcp::flags::kAppLimited);
  x.fill_header(h, Duration::milliseconds(20), false);
  EXPECT_FALSE(h.flags & xcp::flags::kAppLimited) << "flag cleared when no longer limited";
}

TEST(XcpWindowControl, HeaderSubMicrosecondRttIsNotZero) {
  XcpWindowControl x(config());
  xcp::XcpHeader h;
  x.fill_header(h, Duration::nanoseconds(300), false);
  EXPECT_EQ(h.rtt_us, 1u);
}

TEST(XcpWindowControl, IxcpBottleneckEcho) {
  CcConfig c = config();
  c.ixcp_access_link_id = 0x1111;
  XcpWindowControl x(c);
  xcp::XcpHeader h;
  x.fill_header(h, Duration::milliseconds(10), false);
  EXPECT_TRUE(h.has_ixcp());
  EXPECT_EQ(h.bottleneck_id, 0x1111u);
  EXPECT_EQ(h.next_bottleneck_id, 0x1111u);
  AckEvent a = ack_with(0);
  a.echoed_next_bottleneck_id = 0x2222;
  x.on_ack(a);
  x.fill_header(h, Duration::milliseconds(10), false);
  EXPECT_EQ(h.bottleneck_id, 0x2222u);
  x.on_ack(ack_with(0));  // an ACK without the block keeps the id
  EXPECT_EQ(x.bottleneck_id(), 0x2222u);
}

TEST(XcpWindowControl, IxcpEchoIgnoredWhenNotConfigured) {
  XcpWindowControl x(config());
  AckEvent a = ack_with(0);
  a.echoed_next_bottleneck_id = 0x2222;
  x.on_ack(a);
  xcp::XcpHeader h;
  x.fill_header(h, Duration::milliseconds(10), false);
  EXPECT_FALSE(h.has_ixcp());
}

TEST(XcpWindowControl, XcpiBlockWhenConfigured) {
  CcConfig c = config();
  c.xcpi_ip_ttl = 64;
  c.xcpi_sender_ipv4 = 0x0a000001;
  XcpWindowControl x(c);
  xcp::XcpHeader h;
  x.fill_header(h, Duration::milliseconds(10), false);
  EXPECT_TRUE(h.has_xcpi());
  EXPECT_EQ(h.xcp_ttl, 64);
  EXPECT_EQ(h.last_xcp_router, 0x0a000001u);
  EXPECT_EQ(h.length(), 28u);
}

TEST(XcpWindowControl, HugeWindowSaturatesHeader) {
  XcpWindowControl x(config());
  for (int i = 0; i < 3; ++i) x.on_ack(ack_with(kI32Max));
  xcp::XcpHeader h;
  x.fill_header(h, Duration::milliseconds(10), false);
  EXPECT_EQ(h.cwnd_bytes, std::numeric_limits<uint32_t>::max());
  EXPECT_GT(x.wire_cwnd_bytes(), 6'000'000'000u);
}

}  // namespace
}  // namespace xcphost
