#include "xcp/chirp_estimator.hh"

#include <gtest/gtest.h>

namespace xcprouter {
namespace {

using xcp::Duration;
using xcp::Rate;
using xcp::Timestamp;

ChirpResult chirp(uint32_t id, std::optional<double> mbps, double at_s) {
  ChirpResult r;
  r.chirp_id = id;
  if (mbps) r.estimate = Rate::from_megabits_per_s(*mbps);
  r.received = 20;
  r.completed_at = Timestamp::from_ns(static_cast<int64_t>(at_s * 1e9));
  return r;
}

ChirpConfig small_window(ChirpSmoothing smoothing) {
  ChirpConfig c;
  c.chirps_per_estimate = 4;
  c.min_chirps = 2;
  c.smoothing = smoothing;
  return c;
}

TEST(ChirpEstimator, NoEstimateBeforeMinChirpsThenTheMeanOfTheWindow) {
  ChirpEstimator e(small_window(ChirpSmoothing::kMean));
  e.add(chirp(0, 4, 1.0));
  EXPECT_FALSE(e.estimate());
  EXPECT_FALSE(e.first_estimate_at());
  e.add(chirp(1, std::nullopt, 1.5));  // unusable: ignored
  EXPECT_FALSE(e.estimate());
  e.add(chirp(2, 6, 2.0));
  ASSERT_TRUE(e.estimate());
  EXPECT_NEAR(e.estimate()->megabits_per_s(), 5.0, 1e-9);
  EXPECT_EQ(e.first_estimate_at(), Timestamp::from_ns(2'000'000'000));
  EXPECT_EQ(e.chirps_used(), 2u);
  EXPECT_EQ(e.chirps_seen(), 3u);
  EXPECT_EQ(e.chirps_unusable(), 1u);
}

TEST(ChirpEstimator, WindowKeepsTheNewestChirps) {
  ChirpEstimator e(small_window(ChirpSmoothing::kMean));
  for (uint32_t i = 0; i < 6; ++i) e.add(chirp(i, 1.0 + i, 1.0 + i));
  // Window 4: chirps of 3, 4, 5, 6 Mb/s.
  EXPECT_EQ(e.chirps_used(), 4u);
  EXPECT_NEAR(e.estimate()->megabits_per_s(), 4.5, 1e-9);
  EXPECT_EQ(e.first_estimate_at(), Timestamp::from_ns(2'000'000'000));
  EXPECT_EQ(e.last_chirp_at(), Timestamp::from_ns(6'000'000'000));
}

TEST(ChirpEstimator, MedianIgnoresOneOutlier) {
  ChirpEstimator e(small_window(ChirpSmoothing::kMedian));
  e.add(chirp(0, 4, 1));
  e.add(chirp(1, 5, 2));
  e.add(chirp(2, 100, 3));
  EXPECT_NEAR(e.estimate()->megabits_per_s(), 5.0, 1e-9);
  e.add(chirp(3, 6, 4));  // even count: mean of the middle two
  EXPECT_NEAR(e.estimate()->megabits_per_s(), 5.5, 1e-9);
}

TEST(ChirpEstimator, ResetForgetsEverything) {
  ChirpEstimator e(small_window(ChirpSmoothing::kMean));
  e.add(chirp(0, 4, 1));
  e.add(chirp(1, 4, 2));
  ASSERT_TRUE(e.estimate());
  e.reset();
  EXPECT_FALSE(e.estimate());
  EXPECT_FALSE(e.first_estimate_at());
  EXPECT_EQ(e.chirps_seen(), 0u);
}

TEST(ChirpEstimator, ProbesGoThroughItsAnalyzer) {
  ChirpConfig c = ChirpConfig::for_path(Rate::from_megabits_per_s(10));
  c.min_chirps = 1;
  ChirpEstimator e(c);
  // A flat chirp (idle path) of 1 ms gaps (8 Mb/s) closed by its timeout:
  // no excursion, so every gap reads the top gap rate.
  const Timestamp t0 = Timestamp::from_ns(1'000'000'000);
  for (uint32_t k = 0; k + 1 < c.packets_per_chirp(); ++k)
    e.on_probe({5, k, Duration::milliseconds(k), t0 + Duration::milliseconds(k + 10), c.packet_bytes});
  ASSERT_TRUE(e.next_deadline());
  e.on_deadline(*e.next_deadline());
  ASSERT_TRUE(e.estimate());
  EXPECT_NEAR(e.estimate()->megabits_per_s(), 8.0, 1e-9);
  EXPECT_EQ(e.analyzer_counters().timed_out, 1u);
}

}  // namespace
}  // namespace xcprouter
