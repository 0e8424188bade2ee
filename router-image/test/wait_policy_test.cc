#include "core/wait_policy.hh"

#include <gtest/gtest.h>

#include <stdexcept>

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


TEST(WaitPolicy, WithoutACapNoCpuSampleIsTaken) {
  WaitPolicy p(Duration::microseconds(20));
  EXPECT_EQ(p.cpu_cap(), 1.0);
  EXPECT_FALSE(p.cpu_sample_due(t0 + Duration::seconds(10)));
}

TEST(WaitPolicy, TheCapIsBounded) {
  EXPECT_THROW(WaitPolicy(Duration::microseconds(20), 0.4), std::invalid_argument);
  EXPECT_THROW(WaitPolicy(Duration::microseconds(20), 1.01), std::invalid_argument);
  EXPECT_NO_THROW(WaitPolicy(Duration::microseconds(20), WaitPolicy::kMinCpuCap));
}

// The bucket (kBudgetBurst deep, filling at the cap) empties only when the
// engine uses more than the cap for long enough; empty, it stops the spin (the
// kernel would stop the engine for the rest of its real-time period instead).
TEST(WaitPolicy, OverTheCpuCapItSleepsInsteadOfSpinning) {
  WaitPolicy p(Duration::microseconds(20), 0.9);
  const Duration w = WaitPolicy::kBudgetWindow;
  Timestamp now = t0;
  Duration cpu = Duration::milliseconds(3);
  ASSERT_TRUE(p.cpu_sample_due(now));
  p.note_cpu(now, cpu);  // opens the first window, judges nothing
  EXPECT_FALSE(p.cpu_sample_due(now + w - Duration::microseconds(1)));
  ASSERT_TRUE(p.cpu_sample_due(now + w));
  auto window = [&](double used) {
    now = now + w;
    cpu = cpu + w * used;
    p.note_cpu(now, cpu);
  };
  // Bursts of a whole core in single windows, under the cap on average: never over.
  for (int i = 0; i < 100; ++i) {
    window(i % 2 == 0 ? 1.0 : 0.6);
    ASSERT_FALSE(p.over_budget()) << "window " << i;
  }
  EXPECT_TRUE(p.plan(now, now + Duration::microseconds(10)).spin);
  // A whole core drains 1 ms of the 40 ms bucket per 10 ms window (0.1 over
  // the cap): the 40th such window empties it.
  for (int i = 0; i < 39; ++i) {
    window(1.0);
    ASSERT_FALSE(p.over_budget()) << "window " << i;
  }
  window(1.0);
  EXPECT_TRUE(p.over_budget());
  EXPECT_EQ(p.windows_over_budget(), 1U);
  // Empty: an event 10 us ahead is slept to, at least kBudgetMinSleep.
  WaitPlan plan = p.plan(now, now + Duration::microseconds(10));
  EXPECT_FALSE(plan.spin);
  EXPECT_EQ(plan.wake_at, now + WaitPolicy::kBudgetMinSleep);
  // A farther event: slept to exactly, without the spin lead.
  p.record_wake(now, now + Duration::microseconds(15));
  plan = p.plan(now, now + Duration::microseconds(300));
  EXPECT_FALSE(plan.spin);
  EXPECT_EQ(plan.wake_at, now + Duration::microseconds(300));
  EXPECT_FALSE(p.plan(now, now - Duration::microseconds(5)).spin);  // overdue: no spin either
  // Under the cap again, the bucket refills: spinning in the next window.
  window(0.7);
  EXPECT_FALSE(p.over_budget());
  EXPECT_TRUE(p.plan(now, now + Duration::microseconds(10)).spin);
  // A stall of seconds at a whole core leaves the bucket at most one burst in debt.
  window(1.0);
  now = now + Duration::seconds(5.0);
  cpu = cpu + Duration::seconds(5.0);
  p.note_cpu(now, cpu);
  EXPECT_TRUE(p.over_budget());
  int windows = 0;
  while (p.over_budget() && windows < 1000) {
    window(0.5);
    ++windows;
  }
  // In debt by one burst (40 ms, not the 4.5 s of the stall), refilled by 4 ms
  // per window at half a core: positive again after the 11th.
  EXPECT_EQ(windows, 11);
}

}  // namespace
}  // namespace xcprouter
