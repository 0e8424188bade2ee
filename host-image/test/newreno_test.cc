#include "cc/newreno.hh"

#include <gtest/gtest.h>

namespace xcphost {
namespace {

using xcp::Timestamp;
constexpr uint64_t kMss = 1000;

CcConfig config() {
  CcConfig c;
  c.mss_bytes = kMss;
  c.packet_bytes = kMss + 52;
  return c;
}

AckEvent acked(uint64_t bytes, uint64_t flight = 0, bool in_recovery = false) {
  AckEvent a;
  a.newly_acked_bytes = bytes;
  a.duplicate = bytes == 0;
  a.bytes_in_flight = flight;
  a.in_recovery = in_recovery;
  return a;
}

// ACKs one full window in MSS-sized ACKs (one RTT of a window-limited flow).
void ack_one_window(NewReno& r) {
  const uint64_t w = r.cwnd_bytes();
  for (uint64_t done = 0; done < w; done += kMss) r.on_ack(acked(kMss, w));
}

TEST(NewReno, InitialWindowPerRfc5681) {
  EXPECT_EQ(NewReno(config()).cwnd_bytes(), 4000u);  // min(4·1000, max(2000, 4380))
  CcConfig c;
  c.mss_bytes = 1448;
  EXPECT_EQ(NewReno(c).cwnd_bytes(), 4380u);         // min(5792, 4380)
  c.initial_cwnd_bytes = 14'480;
  EXPECT_EQ(NewReno(c).cwnd_bytes(), 14'480u);
}

TEST(NewReno, SlowStartDoublesPerRttWithAbcLimit) {
  NewReno r(config());
  EXPECT_TRUE(r.in_slow_start());
  ack_one_window(r);
  EXPECT_EQ(r.cwnd_bytes(), 8000u);
  ack_one_window(r);
  EXPECT_EQ(r.cwnd_bytes(), 16'000u);
  r.on_ack(acked(10'000));  // a stretch ACK grows by at most 2 MSS (RFC 3465 L=2)
  EXPECT_EQ(r.cwnd_bytes(), 18'000u);
  r.on_ack(acked(0));       // a duplicate grows nothing
  EXPECT_EQ(r.cwnd_bytes(), 18'000u);
}

TEST(NewReno, FastRecoveryHoldsWindowThenCongestionAvoidance) {
  NewReno r(config());
  for (int i = 0; i < 3; ++i) ack_one_window(r);  // 32000
  r.on_loss(Timestamp::zero(), 20'000);
  EXPECT_EQ(r.ssthresh_bytes(), 10'000u);
  EXPECT_EQ(r.cwnd_bytes(), 10'000u);
  EXPECT_TRUE(r.in_loss_fallback());
  for (int i = 0; i < 20; ++i) r.on_ack(acked(i % 2 ? 0 : kMss, 10'000, true));
  EXPECT_EQ(r.cwnd_bytes(), 10'000u) << "no growth while recovering";
  r.on_ack(acked(kMss, 9000, true));
  r.on_recovery_exit(Timestamp::zero());
  EXPECT_FALSE(r.in_loss_fallback());
  // min(ssthresh, max(FlightSize, SMSS) + SMSS) = min(10000, 10000)
  EXPECT_EQ(r.cwnd_bytes(), 10'000u);
  EXPECT_FALSE(r.in_slow_start());
  ack_one_window(r);
  // +1 MSS per window, slightly less because cwnd grows within the window.
  EXPECT_GE(r.cwnd_bytes(), 10'900u);
  EXPECT_LE(r.cwnd_bytes(), 11'000u);
  for (int i = 0; i < 10; ++i) ack_one_window(r);
  EXPECT_GE(r.cwnd_bytes(), 20'500u);
  EXPECT_LE(r.cwnd_bytes(), 21'000u);
}

TEST(NewReno, RecoveryExitWithLittleInFlightAvoidsBurst) {
  NewReno r(config());
  for (int i = 0; i < 3; ++i) ack_one_window(r);
  r.on_loss(Timestamp::zero(), 30'000);
  r.on_ack(acked(kMss, 2000, true));
  r.on_recovery_exit(Timestamp::zero());
  EXPECT_EQ(r.cwnd_bytes(), 3000u);
  EXPECT_EQ(r.ssthresh_bytes(), 15'000u);
  EXPECT_TRUE(r.in_slow_start()) << "below ssthresh again: slow start back up";
}

TEST(NewReno, LossFloorIsTwoSegments) {
  NewReno r(config());
  r.on_loss(Timestamp::zero(), 1000);
  EXPECT_EQ(r.ssthresh_bytes(), 2000u);
  EXPECT_EQ(r.cwnd_bytes(), 2000u);
}

TEST(NewReno, TimeoutGoesToOneSegmentAndHalvesFlight) {
  NewReno r(config());
  for (int i = 0; i < 2; ++i) ack_one_window(r);  // 16000
  r.on_packet_sent(Timestamp::zero(), kMss, 16'000);
  r.on_timeout(Timestamp::zero());
  EXPECT_EQ(r.cwnd_bytes(), kMss);
  EXPECT_EQ(r.ssthresh_bytes(), 8000u);
  EXPECT_TRUE(r.in_slow_start());
  ack_one_window(r);
  ack_one_window(r);
  ack_one_window(r);
  EXPECT_EQ(r.cwnd_bytes(), 8000u);
  EXPECT_FALSE(r.in_slow_start());
}

TEST(NewReno, HeaderIsNeutral) {
  NewReno r(config());
  xcp::XcpHeader h;
  h.cwnd_bytes = 7;
  h.rtt_us = 7;
  h.feedback_bytes = 7;
  r.fill_header(h, xcp::Duration::milliseconds(30), false);
  EXPECT_EQ(h.cwnd_bytes, 0u);
  EXPECT_EQ(h.rtt_us, 0u);
  EXPECT_EQ(h.feedback_bytes, 0);
}

}  // namespace
}  // namespace xcphost

namespace xcphost {
namespace {

TEST(NewReno, SlowStartAfterTimeoutEvenIfTransportReportsRecovery) {
  // The transport may keep its recovery flag up while it repairs the flight
  // lost to an RTO; the window must still slow-start from one segment.
  NewReno r(config());
  r.on_packet_sent(Timestamp::zero(), kMss, 40'000);
  r.on_timeout(Timestamp::zero());
  r.on_ack(acked(kMss, 0, /*in_recovery=*/true));
  r.on_ack(acked(kMss, 0, /*in_recovery=*/true));
  EXPECT_EQ(r.cwnd_bytes(), 3 * kMss);
  r.on_recovery_exit(Timestamp::zero());  // no-op: not in fast recovery
  EXPECT_EQ(r.cwnd_bytes(), 3 * kMss);
}

}  // namespace
}  // namespace xcphost
