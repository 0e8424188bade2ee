#include "xcp/lateness_histogram.hh"

#include "xcp/event_loop.hh"

#include <gtest/gtest.h>

namespace xcp {
namespace {

TEST(LatenessHistogram, BucketsAreInclusiveUpperBounds) {
  LatenessHistogram h;
  h.record(Duration::zero());                  // on time: first bucket
  h.record(Duration::microseconds(-3));        // early counts as on time
  h.record(Duration::microseconds(10));        // exactly the bound: still the first
  h.record(Duration::nanoseconds(10'001));     // just over: the second
  h.record(Duration::microseconds(1000));      // "up to 1 ms"
  h.record(Duration::microseconds(1001));      // later than 1 ms
  h.record(Duration::milliseconds(70));        // beyond the last bound
  const auto& c = h.counts();
  EXPECT_EQ(c[0], 3u);
  EXPECT_EQ(c[1], 1u);
  EXPECT_EQ(c[6], 1u);
  EXPECT_EQ(c[7], 1u);
  EXPECT_EQ(c[LatenessHistogram::kBuckets - 1], 1u);
  EXPECT_EQ(h.total(), 7u);
  EXPECT_EQ(h.max(), Duration::milliseconds(70));
}

TEST(LatenessHistogram, LaterThanCountsStrictlyAboveTheBound) {
  LatenessHistogram h;
  for (int us : {5, 150, 900, 1000, 1500, 4000, 6000, 60000}) h.record(Duration::microseconds(us));
  EXPECT_EQ(h.later_than_us(1000), 4u);
  EXPECT_EQ(h.later_than_us(5000), 2u);
  EXPECT_EQ(h.later_than_us(100), 7u);
  EXPECT_EQ(h.later_than_us(50000), 1u);
}

TEST(LatenessHistogram, MergeAddsBucketsAndKeepsTheWorst) {
  LatenessHistogram a, b;
  a.record(Duration::microseconds(30));
  b.record(Duration::microseconds(30));
  b.record(Duration::milliseconds(3));
  a.merge(b);
  EXPECT_EQ(a.total(), 3u);
  EXPECT_EQ(a.counts()[2], 2u);
  EXPECT_EQ(a.later_than_us(2000), 1u);
  EXPECT_EQ(a.max(), Duration::milliseconds(3));
}

TEST(LatenessHistogram, EventLoopRecordsEveryFiredTimer) {
  // Not a timing test: the loop must record each timer it fires, late or not.
  MonotonicClock clock;
  EventLoop loop(clock);
  const Timestamp t0 = clock.now();
  loop.schedule(t0, [] {});
  loop.schedule(t0 + Duration::milliseconds(1), [&] { loop.stop(); });
  loop.run();
  EXPECT_EQ(loop.lateness().total(), 2u);
}

}  // namespace
}  // namespace xcp
