// RED: the drop-probability curve against the average queue (classic and
// gentle), count-based spacing of drops, the EWMA and its idle decay, and
// thresholds in bytes.
#include "qdisc/red.hh"

#include <cmath>

#include <gtest/gtest.h>

#include "qdisc_test_util.hh"

namespace xcprouter {
namespace {

using testutil::make_packet;
using xcp::Duration;
using xcp::Timestamp;

RedParams curve_params(bool gentle) {
  RedParams k;
  k.min_th = 10;
  k.max_th = 30;
  k.max_p = 0.1;
  k.gentle = gentle;
  return k;
}

TEST(Red, BaseProbabilityCurveClassic) {
  const RedParams k = curve_params(false);
  EXPECT_DOUBLE_EQ(Red::base_probability(0, k), 0);
  EXPECT_DOUBLE_EQ(Red::base_probability(9.99, k), 0);
  EXPECT_DOUBLE_EQ(Red::base_probability(10, k), 0);
  EXPECT_DOUBLE_EQ(Red::base_probability(20, k), 0.05);
  EXPECT_NEAR(Red::base_probability(29.999, k), 0.1, 1e-4);
  EXPECT_DOUBLE_EQ(Red::base_probability(30, k), 1.0);  // classic: forced above max_th
  EXPECT_DOUBLE_EQ(Red::base_probability(45, k), 1.0);
}

TEST(Red, BaseProbabilityCurveGentle) {
  const RedParams k = curve_params(true);
  EXPECT_DOUBLE_EQ(Red::base_probability(20, k), 0.05);
  EXPECT_DOUBLE_EQ(Red::base_probability(30, k), 0.1);
  EXPECT_DOUBLE_EQ(Red::base_probability(45, k), 0.1 + 0.9 * 0.5);
  EXPECT_DOUBLE_EQ(Red::base_probability(60, k), 1.0);
  // Monotone non-decreasing everywhere.
  double prev = 0;
  for (double a = 0; a < 70; a += 0.25) {
    const double p = Red::base_probability(a, k);
    EXPECT_GE(p, prev) << a;
    prev = p;
  }
}

// Holds the instantaneous queue at `n` packets (w_q = 1 makes avg = q) and
// counts drops over `trials` arrivals; returns the drop fraction and the
// longest run of accepted arrivals between drops.
struct Measured {
  double drop_fraction;
  int longest_gap;
};
Measured hold_queue(RedParams k, int n, int trials, uint64_t seed) {
  k.w_q = 1.0;
  Red q({.packets = 0, .bytes = 0}, k, seed);
  q.set_capacity(xcp::Rate::from_bytes_per_s(1e6));
  Timestamp t = Timestamp::zero();
  while (q.packets() < static_cast<uint64_t>(n)) q.enqueue(make_packet(1000), t);  // early drops allowed
  int drops = 0, gap = 0, longest = 0;
  for (int i = 0; i < trials; ++i) {
    t += Duration::microseconds(10);
    if (q.enqueue(make_packet(1000), t)) {
      q.dequeue(t);
      longest = std::max(longest, ++gap);
    } else {
      ++drops;
      gap = 0;
    }
  }
  return {static_cast<double>(drops) / trials, longest};
}

TEST(Red, MeasuredDropRateFollowsTheCurveWithUniformSpacing) {
  // With count spacing the gap between drops is uniform on {1..1/p_b}, so the
  // drop fraction is 2·p_b/(1 + p_b) rather than p_b (Floyd & Jacobson §7).
  for (int n : {12, 16, 20, 25, 28}) {
    const RedParams k = curve_params(true);
    const double pb = Red::base_probability(n, k);
    const Measured m = hold_queue(k, n, 100000, 7 + n);
    const double expect = 2 * pb / (1 + pb);
    EXPECT_NEAR(m.drop_fraction, expect, 0.1 * expect + 0.002) << "q=" << n;
    EXPECT_LE(m.longest_gap, static_cast<int>(std::ceil(1 / pb))) << "q=" << n;
  }
}

TEST(Red, GentleRegionDropsProportionallyNotAll) {
  const RedParams k = curve_params(true);
  const Measured m = hold_queue(k, 40, 50000, 3);  // p_b = 0.1 + 0.9·(10/30) = 0.4
  EXPECT_GT(m.drop_fraction, 0.4);
  EXPECT_LT(m.drop_fraction, 0.75);
  const Measured classic = hold_queue(curve_params(false), 30, 1000, 3);  // classic: at max_th, all
  EXPECT_DOUBLE_EQ(classic.drop_fraction, 1.0);
}

TEST(Red, NoDropsBelowMinThreshold) {
  const Measured m = hold_queue(curve_params(true), 9, 20000, 1);
  EXPECT_EQ(m.drop_fraction, 0.0);
}

TEST(Red, AverageIsEwmaOfQueueAtArrivals) {
  RedParams k = curve_params(true);
  k.w_q = 0.5;
  Red q({}, k, 1);
  q.set_capacity(xcp::Rate::from_bytes_per_s(1e6));
  q.enqueue(make_packet(1000), Timestamp::zero());  // idle start: avg stays 0
  EXPECT_DOUBLE_EQ(q.avg(), 0);
  q.enqueue(make_packet(1000), Timestamp::zero());  // q = 1
  EXPECT_DOUBLE_EQ(q.avg(), 0.5);
  q.enqueue(make_packet(1000), Timestamp::zero());  // q = 2
  EXPECT_DOUBLE_EQ(q.avg(), 1.25);
}

TEST(Red, IdleTimeDecaysAverage) {
  RedParams k = curve_params(true);
  k.w_q = 0.1;
  Red q({}, k, 1);
  q.set_capacity(xcp::Rate::from_bytes_per_s(1e6));  // 1000 B packet = 1 ms
  for (int i = 0; i < 50; ++i) q.enqueue(make_packet(1000), Timestamp::zero());
  const double before = q.avg();
  ASSERT_GT(before, 10);
  while (q.dequeue(Timestamp::zero())) {
  }
  // Idle 20 ms = 20 typical packet times: avg ← (1 − 0.1)^20·avg.
  q.enqueue(make_packet(1000), Timestamp::zero() + Duration::milliseconds(20));
  EXPECT_NEAR(q.avg(), before * std::pow(0.9, 20), 1e-9);
}

TEST(Red, ThresholdsInBytes) {
  RedParams k;
  k.bytes = true;
  k.min_th = 10000;
  k.max_th = 30000;
  k.w_q = 1.0;
  k.gentle = false;
  Red q({}, k, 1);
  q.set_capacity(xcp::Rate::from_bytes_per_s(1e6));
  // 9 × 1000 B queued: below min_th in bytes, never dropped.
  for (int i = 0; i < 10; ++i) ASSERT_TRUE(q.enqueue(make_packet(1000), Timestamp::zero()));
  // Queue 10 000 B now; a 40 kB jump of big packets crosses max_th → forced.
  for (int i = 0; i < 14; ++i) q.enqueue(make_packet(1500), Timestamp::zero());
  EXPECT_GT(q.counters().drops_early, 0u);
  EXPECT_LE(q.bytes(), 30000u + 1500u);
}

TEST(Red, ParamsValidated) {
  EXPECT_THROW(parse_red_params({{"min_th", 20}, {"max_th", 10}}, RedParams{}), std::invalid_argument);
  EXPECT_THROW(parse_red_params({{"max_p", 1.5}}, RedParams{}), std::invalid_argument);
  EXPECT_THROW(parse_red_params({{"thresh_unit", "bytes"}}, RedParams{}), std::invalid_argument);
  EXPECT_THROW(parse_red_params({{"thresh_unit", "kb"}, {"min_th", 1}, {"max_th", 2}}, RedParams{}),
               std::invalid_argument);
  const RedParams k = parse_red_params({{"thresh_unit", "bytes"}, {"min_th", 5000}, {"max_th", 15000}}, RedParams{});
  EXPECT_TRUE(k.bytes);
  EXPECT_DOUBLE_EQ(k.max_th, 15000);
}

}  // namespace
}  // namespace xcprouter
