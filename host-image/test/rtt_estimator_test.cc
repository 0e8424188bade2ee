#include "transport/rtt_estimator.hh"

#include <gtest/gtest.h>

namespace xcphost {
namespace {

using xcp::Duration;
constexpr auto ms = [](int64_t v) { return Duration::milliseconds(v); };
constexpr auto us = [](int64_t v) { return Duration::microseconds(v); };

TEST(RttEstimator, BeforeFirstSampleUsesInitialRto) {
  RttEstimator e;
  EXPECT_FALSE(e.has_sample());
  EXPECT_EQ(e.srtt(), Duration::zero());
  EXPECT_EQ(e.rto(), Duration::seconds(1));
  e.on_timeout();
  EXPECT_EQ(e.rto(), Duration::seconds(2));
}

TEST(RttEstimator, FirstAndSecondSampleFollowRfc6298) {
  RttEstimator e;
  e.on_sample(ms(100));
  EXPECT_EQ(e.srtt(), ms(100));
  EXPECT_EQ(e.rttvar(), ms(50));
  EXPECT_EQ(e.rto(), ms(300));  // 100 + 4·50
  e.on_sample(ms(200));
  // RTTVAR = 3/4·50 + 1/4·|100−200| = 62.5; SRTT = 7/8·100 + 1/8·200 = 112.5
  EXPECT_EQ(e.rttvar(), us(62'500));
  EXPECT_EQ(e.srtt(), us(112'500));
  EXPECT_EQ(e.rto(), us(362'500));
  EXPECT_EQ(e.latest_rtt(), ms(200));
  EXPECT_EQ(e.min_rtt(), ms(100));
}

TEST(RttEstimator, ConstantSamplesConvergeAndMinRtoApplies) {
  RttEstimator e;
  for (int i = 0; i < 200; ++i) e.on_sample(ms(50));
  EXPECT_EQ(e.srtt(), ms(50));
  EXPECT_LT(e.rttvar(), us(10));
  EXPECT_EQ(e.rto(), ms(200));  // 50 ms + tiny var is below the 200 ms floor
}

TEST(RttEstimator, SettledRttKeepsTheTimerGranularityAsMargin) {
  // A standing queue: RTTVAR decays to nothing, the timer stays G = 10 ms
  // (ns-2's tick) above SRTT rather than a few µs.
  RttEstimator e;
  for (int i = 0; i < 200; ++i) e.on_sample(ms(400));
  EXPECT_LT(e.rttvar(), us(10));
  EXPECT_EQ(e.rto(), ms(410));
  // Above the margin, 4·RTTVAR rules again.
  e.on_sample(ms(440));  // RTTVAR ≈ 10 ms → 4·RTTVAR ≈ 40 ms
  EXPECT_GT(e.rto(), e.srtt() + ms(39));
}

TEST(RttEstimator, ConfigurableMinRtoAndGranularity) {
  RttConfig cfg;
  cfg.min_rto = ms(5);
  cfg.timer_granularity = us(1);
  RttEstimator e(cfg);
  for (int i = 0; i < 200; ++i) e.on_sample(ms(1));
  EXPECT_EQ(e.rto(), ms(5));
  cfg.timer_granularity = ms(10);
  RttEstimator g(cfg);
  for (int i = 0; i < 200; ++i) g.on_sample(ms(1));
  EXPECT_EQ(g.rto(), ms(11));
}

TEST(RttEstimator, ExponentialBackoffCappedAtMax) {
  RttEstimator e;
  e.on_sample(ms(100));  // RTO 300 ms
  Duration expected = ms(300);
  for (int i = 0; i < 7; ++i) {
    e.on_timeout();
    expected = expected + expected;
    EXPECT_EQ(e.rto(), expected) << "after " << (i + 1) << " timeouts";
  }
  EXPECT_EQ(e.rto(), Duration::seconds(38.4));
  e.on_timeout();  // 76.8 s would exceed the cap
  EXPECT_EQ(e.rto(), Duration::seconds(60));
  EXPECT_EQ(e.backoff_count(), 8u);
  for (int i = 0; i < 100; ++i) e.on_timeout();  // must not overflow
  EXPECT_EQ(e.rto(), Duration::seconds(60));
}

TEST(RttEstimator, NewSampleResetsBackoff) {
  RttEstimator e;
  e.on_sample(ms(100));
  e.on_timeout();
  e.on_timeout();
  EXPECT_EQ(e.rto(), ms(1200));
  e.on_sample(ms(100));
  EXPECT_EQ(e.backoff_count(), 0u);
  // SRTT 100, RTTVAR 3/4·50 = 37.5 → 250 ms
  EXPECT_EQ(e.rto(), ms(250));
}

TEST(RttEstimator, KeptBackoffSurvivesSamplesUntilEnded) {
  // ns-2's rule (keep_backoff_until_new_data): samples still move SRTT and RTTVAR,
  // the doubled RTO stays until the transport sees new data ACKed.
  RttConfig cfg;
  cfg.keep_backoff_until_new_data = true;
  RttEstimator e(cfg);
  e.on_sample(ms(100));
  e.on_timeout();
  e.on_timeout();
  e.on_sample(ms(100));
  EXPECT_EQ(e.backoff_count(), 2u);
  EXPECT_EQ(e.rto(), ms(1000));  // 250 ms from the estimator, doubled twice
  e.end_backoff();
  EXPECT_EQ(e.backoff_count(), 0u);
  EXPECT_EQ(e.rto(), ms(250));
}

TEST(RttEstimator, NonPositiveSampleClampedToGranularity) {
  RttEstimator e;
  e.on_sample(Duration::zero());
  EXPECT_TRUE(e.has_sample());
  EXPECT_EQ(e.srtt(), us(1));
  EXPECT_EQ(e.rto(), ms(200));
}

}  // namespace
}  // namespace xcphost
