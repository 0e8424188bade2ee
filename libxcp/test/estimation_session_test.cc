#include "xcp/estimation_session.hh"

#include <gtest/gtest.h>

namespace xcp {
namespace {

using State = EstimationSession::State;

Timestamp at_ms(int64_t ms) { return Timestamp::zero() + Duration::milliseconds(ms); }

EstimationTiming config() {
  EstimationTiming c;
  c.request_timeout = Duration::milliseconds(200);
  c.request_attempts = 3;
  c.reestimate_period = Duration::seconds(1.0);
  c.broken_holdoff = Duration::seconds(1.0);
  return c;
}

TEST(EstimationSession, FirstPacketRequestsAndTheMatchingAckEstablishes) {
  const EstimationTiming c = config();
  EstimationSession s(c, 77);
  auto r = s.on_packet(at_ms(0));
  ASSERT_TRUE(r);
  EXPECT_EQ(r->session, 77u);
  EXPECT_EQ(s.state(), State::kRequesting);
  EXPECT_EQ(s.next_deadline(), at_ms(200));
  EXPECT_FALSE(s.on_packet(at_ms(10)));  // no second request while one is in flight
  s.on_ack(77, r->seq, at_ms(50));
  EXPECT_EQ(s.state(), State::kEstablished);
  EXPECT_TRUE(s.acknowledged());
  EXPECT_EQ(s.counters().acks, 1u);
  EXPECT_EQ(s.next_deadline(), at_ms(1050));
}

TEST(EstimationSession, AcksOfAnotherSessionOrAttemptAreStale) {
  const EstimationTiming c = config();
  EstimationSession s(c, 77);
  auto r = s.on_packet(at_ms(0));
  s.on_ack(78, r->seq, at_ms(10));
  s.on_ack(77, r->seq + 1, at_ms(10));
  EXPECT_EQ(s.state(), State::kRequesting);
  EXPECT_EQ(s.counters().stale_acks, 2u);
}

TEST(EstimationSession, ThreeUnansweredRequestsBreakThePathUntilAPacketAfterTheHoldoff) {
  const EstimationTiming c = config();
  EstimationSession s(c, 5);
  ASSERT_TRUE(s.on_packet(at_ms(0)));
  auto r2 = s.on_deadline(at_ms(200));
  ASSERT_TRUE(r2);
  EXPECT_EQ(r2->seq, 2u);
  auto r3 = s.on_deadline(at_ms(400));
  ASSERT_TRUE(r3);
  EXPECT_FALSE(s.on_deadline(at_ms(600)));
  EXPECT_EQ(s.state(), State::kBroken);
  EXPECT_EQ(s.counters().requests, 3u);
  EXPECT_EQ(s.counters().timeouts, 3u);
  EXPECT_EQ(s.counters().broken, 1u);
  EXPECT_EQ(s.next_deadline(), Timestamp::max());
  EXPECT_FALSE(s.on_packet(at_ms(900)));  // within the hold-off: stays broken
  auto again = s.on_packet(at_ms(1600));
  ASSERT_TRUE(again);
  EXPECT_EQ(s.state(), State::kRequesting);
  s.on_ack(5, again->seq, at_ms(1650));
  EXPECT_EQ(s.state(), State::kEstablished);
}

TEST(EstimationSession, ReestimatesWhileUpstreamIsActiveOnly) {
  const EstimationTiming c = config();
  EstimationSession s(c, 9);
  auto r = s.on_packet(at_ms(0));
  s.on_ack(9, r->seq, at_ms(40));
  s.on_packet(at_ms(900));
  auto again = s.on_deadline(at_ms(1040));
  ASSERT_TRUE(again);  // U sent within the last period
  s.on_ack(9, again->seq, at_ms(1080));
  // U falls silent: the next round sends nothing.
  EXPECT_FALSE(s.on_deadline(at_ms(2080)));
  EXPECT_EQ(s.state(), State::kEstablished);
  EXPECT_EQ(s.counters().requests, 2u);
}

}  // namespace
}  // namespace xcp
