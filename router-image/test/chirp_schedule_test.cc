#include "xcp/chirp_schedule.hh"

#include <cmath>
#include <stdexcept>

#include <gtest/gtest.h>

namespace xcprouter {
namespace {

using xcp::Duration;
using xcp::Rate;

ChirpConfig ten_mbps() { return ChirpConfig::for_path(Rate::from_megabits_per_s(10)); }

double rate_of_gap(const std::vector<Duration>& o, size_t k, uint32_t bytes) {
  return bytes / (o[k + 1] - o[k]).seconds_f();
}

TEST(ChirpSchedule, GapsProbeGeometricRatesFromLowToHigh) {
  ChirpConfig c = ten_mbps();
  c.dither = false;
  const ChirpSchedule s(c);
  // ln(20)/ln(1.2) = 16.4 -> 17 steps, 18 gaps, 19 packets.
  ASSERT_EQ(s.packets(), 19u);
  ASSERT_EQ(s.offsets().size(), 19u);
  EXPECT_EQ(s.offsets()[0], Duration::zero());
  for (uint32_t k = 0; k + 1 < s.packets(); ++k) {
    const double want = c.low_rate.bytes_per_s() * std::pow(1.2, k);
    EXPECT_NEAR(rate_of_gap(s.offsets(), k, c.packet_bytes) / want, 1.0, 1e-5) << k;
    EXPECT_NEAR(s.gap_rate(k).bytes_per_s() / want, 1.0, 1e-12) << k;
  }
  EXPECT_GE(s.gap_rate(s.packets() - 2).bytes_per_s(), c.high_rate.bytes_per_s());
  EXPECT_LT(s.gap_rate(s.packets() - 3).bytes_per_s(), c.high_rate.bytes_per_s());
}

TEST(ChirpSchedule, ExactRatioNeedsNoExtraGap) {
  ChirpConfig c;
  c.dither = false;
  c.spread_factor = 2.0;
  c.low_rate = Rate::from_megabits_per_s(1);
  c.high_rate = Rate::from_megabits_per_s(8);  // 1, 2, 4, 8
  EXPECT_EQ(ChirpSchedule(c).packets(), 5u);
}

TEST(ChirpSchedule, DurationIsTheSumOfTheGaps) {
  ChirpConfig c = ten_mbps();
  c.dither = false;
  const ChirpSchedule s(c);
  double sum = 0;
  for (uint32_t k = 0; k + 1 < s.packets(); ++k) sum += c.packet_bytes / s.gap_rate(k).bytes_per_s();
  EXPECT_NEAR(s.duration().seconds_f(), sum, 1e-9);
  // P/L·(1 − γ^−18)/(1 − 1/γ) = 16 ms · 5.77 (the limit γ/(γ−1) is 6).
  EXPECT_NEAR(s.duration().seconds_f(), 0.016 * (1 - std::pow(1.2, -18)) / (1 - 1 / 1.2), 1e-6);
}

TEST(ChirpSchedule, DitherLowersEveryRateByTheSameFactorAndStillReachesHigh) {
  const ChirpConfig c = ten_mbps();
  const ChirpSchedule s(c);
  EXPECT_EQ(s.dithered_offsets(0.0), s.offsets());
  const auto o = s.dithered_offsets(0.5);
  ASSERT_EQ(o.size(), s.packets());
  const double scale = std::pow(1.2, -0.5);
  for (uint32_t k = 0; k + 1 < s.packets(); ++k)
    EXPECT_NEAR(rate_of_gap(o, k, c.packet_bytes) / (s.gap_rate(k).bytes_per_s() * scale), 1.0, 1e-5);
  // The extra gap keeps the top at or above H for any u < 1.
  const auto o_max = s.dithered_offsets(0.999);
  EXPECT_GE(rate_of_gap(o_max, s.packets() - 2, c.packet_bytes), c.high_rate.bytes_per_s());
}

TEST(ChirpSchedule, ForPathSetsRatesAndTheOverheadFraction) {
  const Rate cap = Rate::from_megabits_per_s(10);
  const ChirpConfig c = ChirpConfig::for_path(cap, 0.02);
  EXPECT_DOUBLE_EQ(c.low_rate.bytes_per_s(), cap.bytes_per_s() / 20);
  EXPECT_DOUBLE_EQ(c.high_rate.bytes_per_s(), cap.bytes_per_s());
  EXPECT_EQ(c.packets_per_chirp(), 20u);  // 19 undithered + 1 for the dither
  // 20 kB per 0.8 s = 25 kB/s = 2 % of 1.25 MB/s.
  EXPECT_NEAR(c.chirp_period.seconds_f(), 0.8, 1e-6);
  const ChirpSchedule s(c);
  EXPECT_NEAR(s.overhead().bytes_per_s() / cap.bytes_per_s(), 0.02, 1e-6);
  // Noise floor at most a quarter of one probe's service time (800 µs).
  EXPECT_LE(c.delay_floor, Duration::microseconds(200));
}

TEST(ChirpSchedule, OverheadIsBackToBackWhenThePeriodIsShorterThanAChirp) {
  ChirpConfig c = ten_mbps();
  c.chirp_period = Duration::milliseconds(1);
  const ChirpSchedule s(c);
  EXPECT_NEAR(s.overhead().bytes_per_s(),
              c.packets_per_chirp() * c.packet_bytes / s.duration().seconds_f(), 1e-6);
}

TEST(ChirpSchedule, RejectsConfigsTheAlgorithmCannotRun) {
  auto bad = [](auto mutate) {
    ChirpConfig c;
    mutate(c);
    return c;
  };
  EXPECT_THROW(ChirpSchedule(bad([](ChirpConfig& c) { c.spread_factor = 1.0; })), std::invalid_argument);
  EXPECT_THROW(ChirpSchedule(bad([](ChirpConfig& c) { c.low_rate = Rate::zero(); })), std::invalid_argument);
  EXPECT_THROW(ChirpSchedule(bad([](ChirpConfig& c) { c.high_rate = c.low_rate * 0.5; })),
               std::invalid_argument);
  EXPECT_THROW(ChirpSchedule(bad([](ChirpConfig& c) { c.packet_bytes = 0; })), std::invalid_argument);
  EXPECT_THROW(ChirpSchedule(bad([](ChirpConfig& c) { c.spread_factor = 1.001; })),
               std::invalid_argument);  // > 1000 packets
  EXPECT_THROW(ChirpSchedule(bad([](ChirpConfig& c) { c.min_chirps = 20; })), std::invalid_argument);
  EXPECT_THROW(ChirpSchedule(bad([](ChirpConfig& c) { c.decrease_factor = 1.0; })), std::invalid_argument);
}

}  // namespace
}  // namespace xcprouter
