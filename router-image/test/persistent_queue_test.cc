#include "xcp/persistent_queue.hh"

#include <gtest/gtest.h>

namespace xcprouter {
namespace {

using xcp::Duration;
using xcp::Timestamp;

TEST(PersistentQueue, WindowIsHalfOfDMinusDrainTimeWithFloor) {
  PersistentQueue pq(Duration::milliseconds(2));
  EXPECT_EQ(pq.window_for(0, 0.1, 1e6), Duration::milliseconds(50));
  EXPECT_EQ(pq.window_for(60000, 0.1, 1e6), Duration::milliseconds(20));  // (0.1 − 0.06)/2
  EXPECT_EQ(pq.window_for(500000, 0.1, 1e6), Duration::milliseconds(2));  // drain > d
  EXPECT_EQ(pq.window_for(0, 0.001, 1e6), Duration::milliseconds(2));
  EXPECT_EQ(pq.window_for(0, 0.1, 0), Duration::milliseconds(2));  // no capacity
}

TEST(PersistentQueue, MinimumOverWindowAtDepartures) {
  PersistentQueue pq(Duration::milliseconds(2));
  pq.start(Timestamp::zero(), 0, 0.1, 1e6);
  EXPECT_EQ(pq.deadline(), Timestamp::zero() + Duration::milliseconds(50));
  pq.on_departure(5000);
  pq.on_departure(3000);
  pq.on_departure(4000);
  EXPECT_DOUBLE_EQ(pq.value(), 0);  // not before the window ends
  pq.on_deadline(pq.deadline(), 4000, 0.1, 1e6);
  EXPECT_DOUBLE_EQ(pq.value(), 3000);
  // Minimum restarted: the next window sees only larger queues.
  EXPECT_EQ(pq.window(), Duration::milliseconds(48));  // (0.1 − 0.004)/2
  pq.on_departure(9000);
  pq.on_departure(7000);
  pq.on_deadline(pq.deadline(), 7000, 0.1, 1e6);
  EXPECT_DOUBLE_EQ(pq.value(), 7000);
}

TEST(PersistentQueue, WindowWithoutDeparturesTakesCurrentQueue) {
  PersistentQueue pq(Duration::milliseconds(2));
  pq.start(Timestamp::zero(), 0, 0.1, 1e6);
  pq.on_deadline(pq.deadline(), 0, 0.1, 1e6);
  EXPECT_DOUBLE_EQ(pq.value(), 0);  // idle
  pq.on_deadline(pq.deadline(), 12000, 0.1, 1e6);
  EXPECT_DOUBLE_EQ(pq.value(), 12000);  // stalled link: everything persists
}

}  // namespace
}  // namespace xcprouter
