#include "core/wait_policy.hh"

#include <gtest/gtest.h>

namespace xcprouter {
namespace {

using xcp::Duration;
using xcp::Timestamp;

const Timestamp t0 = Timestamp::zero() + Duration::milliseconds(1);

TEST(WaitPolicy, SleepsForeverWithoutADeadline) {
  WaitPolicy p(Duration::microseconds(20));
  const WaitPlan w = p.plan(t0, Timestamp::max());
  EXPECT_FALSE(w.spin);
  EXPECT_EQ(w.wake_at, Timestamp::max());
}

TEST(WaitPolicy, WithoutMeasuredLatencySleepsExactlyToTheDeadline) {
  WaitPolicy p(Duration::microseconds(20));
  const WaitPlan w = p.plan(t0, t0 + Duration::microseconds(100));
  EXPECT_FALSE(w.spin);
  EXPECT_EQ(w.wake_at, t0 + Duration::microseconds(100));
  EXPECT_TRUE(p.plan(t0, t0).spin);  // due now
  EXPECT_TRUE(p.plan(t0, t0 - Duration::microseconds(5)).spin);  // overdue
  // A sleep shorter than the spin bound costs more than spinning through it.
  EXPECT_TRUE(p.plan(t0, t0 + Duration::microseconds(20)).spin);
  EXPECT_FALSE(p.plan(t0, t0 + Duration::microseconds(21)).spin);
  WaitPolicy never(Duration::zero());  // spin_us 0: sleeps even 1 us
  EXPECT_FALSE(never.plan(t0, t0 + Duration::microseconds(1)).spin);
}

TEST(WaitPolicy, WakesEarlyByTheMeasuredLatencyAndSpinsTheRest) {
  WaitPolicy p(Duration::microseconds(20));
  p.record_wake(t0, t0 + Duration::microseconds(12));  // the kernel woke us 12 us late
  EXPECT_EQ(p.wake_latency(), Duration::microseconds(12));
  const Timestamp deadline = t0 + Duration::microseconds(100);
  const WaitPlan w = p.plan(t0, deadline);
  EXPECT_FALSE(w.spin);
  EXPECT_EQ(w.wake_at, deadline - Duration::microseconds(12));
  // Closer than the latency (plus the shortest sleep worth a wake-up): spin.
  EXPECT_TRUE(p.plan(deadline - Duration::microseconds(32), deadline).spin);
  EXPECT_FALSE(p.plan(deadline - Duration::microseconds(33), deadline).spin);
}

TEST(WaitPolicy, TheSpinNeverExceedsItsBound) {
  WaitPolicy p(Duration::microseconds(20));
  p.record_wake(t0, t0 + Duration::milliseconds(3));  // a stall, not the kernel's latency
  EXPECT_EQ(p.wake_latency(), Duration::microseconds(20));
  const Timestamp deadline = t0 + Duration::microseconds(500);
  EXPECT_EQ(p.plan(t0, deadline).wake_at, deadline - Duration::microseconds(20));
  WaitPolicy never(Duration::zero());  // spin_us 0: always sleep to the deadline
  never.record_wake(t0, t0 + Duration::microseconds(50));
  EXPECT_EQ(never.plan(t0, deadline).wake_at, deadline);
}

TEST(WaitPolicy, LatencyRisesAtOnceAndDecaysSlowly) {
  WaitPolicy p(Duration::microseconds(100));
  p.record_wake(t0, t0 + Duration::microseconds(40));
  EXPECT_EQ(p.wake_latency(), Duration::microseconds(40));
  p.record_wake(t0, t0);  // one punctual wake-up: 1/8 of the gap
  EXPECT_EQ(p.wake_latency(), Duration::microseconds(35));
  for (int i = 0; i < 100; ++i) p.record_wake(t0, t0 + Duration::microseconds(8));
  EXPECT_LE(p.wake_latency(), Duration::microseconds(9));
  EXPECT_GE(p.wake_latency(), Duration::microseconds(8));
  p.record_wake(t0, t0 + Duration::microseconds(30));
  EXPECT_EQ(p.wake_latency(), Duration::microseconds(30));
  p.record_wake(t0 + Duration::microseconds(5), t0);  // early (a spurious wake-up): 0 late
  EXPECT_LT(p.wake_latency(), Duration::microseconds(30));
}

TEST(WaitPolicy, ArrivalsWaitUnreadOnlyWhileEveryOutputIsFarEnoughAhead) {
  WaitPolicy p(Duration::microseconds(20));
  // No link with delay: every arrival may leave at once; wake on each.
  EXPECT_EQ(p.rx_defer(Duration::zero()), Duration::zero());
  EXPECT_EQ(p.rx_defer(Duration::microseconds(90)), Duration::zero());  // 45 us < 50 us floor
  EXPECT_EQ(p.rx_defer(Duration::microseconds(200)), Duration::microseconds(100));
  // Long delays: bounded by the ring's fill.
  EXPECT_EQ(p.rx_defer(Duration::milliseconds(10)), WaitPolicy::kMaxRxDefer);
  EXPECT_EQ(p.rx_defer(Duration::infinite()), WaitPolicy::kMaxRxDefer);
  // The read itself comes late by the wake-up latency.
  p.record_wake(t0, t0 + Duration::microseconds(20));
  EXPECT_EQ(p.rx_defer(Duration::microseconds(200)), Duration::microseconds(80));
}

}  // namespace
}  // namespace xcprouter
