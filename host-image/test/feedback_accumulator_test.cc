#include "transport/feedback_accumulator.hh"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <random>

namespace xcphost {
namespace {

TEST(FeedbackAccumulator, TwoSegmentsPerAckCarryTheWholeSum) {
  FeedbackAccumulator acc;
  acc.add(120);
  acc.add(-30);
  EXPECT_EQ(acc.packets_since_take(), 2u);
  EXPECT_EQ(acc.take(), 90);
  EXPECT_EQ(acc.take(), 0);  // reset: nothing is sent twice
  EXPECT_EQ(acc.packets_since_take(), 0u);
}

TEST(FeedbackAccumulator, DelayedAcksLoseNoFeedback) {
  std::mt19937 rng(42);
  std::uniform_int_distribution<int32_t> fb(-2000, 3000);
  std::uniform_int_distribution<int> per_ack(1, 3);
  FeedbackAccumulator acc;
  int64_t sent = 0;
  int64_t echoed = 0;
  int pending = per_ack(rng);
  for (int i = 0; i < 10'000; ++i) {
    const int32_t f = fb(rng);
    sent += f;
    xcp::XcpHeader h;
    h.feedback_bytes = f;
    acc.on_data(h);
    if (--pending == 0) {
      xcp::XcpHeader ack;
      acc.fill_ack(ack);
      echoed += ack.reverse_feedback_bytes;
      pending = per_ack(rng);
    }
  }
  echoed += acc.take();
  EXPECT_EQ(echoed, sent);
}

TEST(FeedbackAccumulator, SaturatesAtInt32) {
  constexpr int32_t kMax = std::numeric_limits<int32_t>::max();
  constexpr int32_t kMin = std::numeric_limits<int32_t>::min();
  FeedbackAccumulator acc;
  acc.add(kMax);
  acc.add(kMax);
  EXPECT_EQ(acc.pending(), kMax);
  EXPECT_EQ(acc.take(), kMax);
  acc.add(kMin);
  acc.add(-1);
  EXPECT_EQ(acc.take(), kMin);
  // The exact sum is kept: a later negative brings a big sum back in range.
  acc.add(kMax);
  acc.add(10);
  acc.add(-20);
  EXPECT_EQ(acc.take(), kMax - 10);
}

TEST(FeedbackAccumulator, EchoesIxcpNextBottleneckId) {
  FeedbackAccumulator acc;
  xcp::XcpHeader plain;
  plain.feedback_bytes = 5;
  acc.on_data(plain);
  xcp::XcpHeader ack1;
  acc.fill_ack(ack1);
  EXPECT_FALSE(ack1.has_ixcp());
  EXPECT_EQ(ack1.reverse_feedback_bytes, 5);

  xcp::XcpHeader d;
  d.flags = xcp::flags::kIxcp;
  d.bottleneck_id = 1;
  d.next_bottleneck_id = 0xabcdef01;
  d.feedback_bytes = -7;
  acc.on_data(d);
  xcp::XcpHeader ack2;
  acc.fill_ack(ack2);
  EXPECT_TRUE(ack2.has_ixcp());
  EXPECT_EQ(ack2.next_bottleneck_id, 0xabcdef01u);
  EXPECT_EQ(ack2.reverse_feedback_bytes, -7);
  EXPECT_EQ(acc.last_next_bottleneck_id(), 0xabcdef01u);
}

}  // namespace
}  // namespace xcphost
