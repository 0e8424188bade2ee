// DropController (seed 004 §4.3–4.4): p_drop dynamics per TCP packet and per
// interval, activation (both classes, input > 97 % of C) and reset.
#include "fairness/drop_controller.hh"

#include <cmath>

#include <gtest/gtest.h>

namespace xcprouter {
namespace {

constexpr double kC = 125e6;  // 1 Gb/s in bytes/s

IntervalLoad busy(double xcp_rate) {
  return {.input_rate = 0.99 * kC, .capacity = kC, .xcp_rate = xcp_rate, .saw_xcp = true, .saw_tcp = true};
}

TEST(DropController, IdleUntilAnIntervalQualifies) {
  DropController d(FairnessParams{});
  EXPECT_FALSE(d.active());
  EXPECT_DOUBLE_EQ(d.p_drop(), 0.001);
  d.on_tcp_packet(kC);  // idle: nothing moves
  EXPECT_DOUBLE_EQ(d.p_drop(), 0.001);
  EXPECT_FALSE(d.drop(0.0));  // idle: never drops
  d.on_interval(busy(0.5 * kC), 0.77 * kC);
  EXPECT_TRUE(d.active());
  EXPECT_TRUE(d.drop(0.0009));
  EXPECT_FALSE(d.drop(0.0011));
  EXPECT_EQ(d.counters().activations, 1u);
}

TEST(DropController, NeedsBothClassesAndTheThreshold) {
  DropController d(FairnessParams{});
  IntervalLoad l = busy(0.5 * kC);
  l.saw_tcp = false;
  d.on_interval(l, 0.77 * kC);
  EXPECT_FALSE(d.active());
  l = busy(0.5 * kC);
  l.saw_xcp = false;
  d.on_interval(l, 0.77 * kC);
  EXPECT_FALSE(d.active());
  l = busy(0.5 * kC);
  l.input_rate = 0.969 * kC;  // just below γ = 97 %
  d.on_interval(l, 0.77 * kC);
  EXPECT_FALSE(d.active());
  l.input_rate = 0.971 * kC;
  d.on_interval(l, 0.77 * kC);
  EXPECT_TRUE(d.active());
}

TEST(DropController, PerTcpPacketMovesTenfoldIn23000Packets) {
  DropController d(FairnessParams{});
  d.on_interval(busy(0.5 * kC), 0.77 * kC);  // XCP below its share: p rises
  // ln 10 / ln 1.0001 = 23027 updates for a factor 10.
  for (int i = 0; i < 23027; ++i) d.on_tcp_packet(0.77 * kC);
  EXPECT_NEAR(d.p_drop(), 0.01, 0.0001);
  EXPECT_EQ(d.counters().increases, 23027u);
  // XCP above its share: p falls by D_drop per packet.
  d.on_interval(busy(0.9 * kC), 0.77 * kC);
  for (int i = 0; i < 23025; ++i) d.on_tcp_packet(0.77 * kC);
  EXPECT_NEAR(d.p_drop(), 0.001, 0.00002);
  // Equal: p keeps its value.
  d.on_interval(busy(0.77 * kC), 0.77 * kC);
  const double p = d.p_drop();
  d.on_tcp_packet(0.77 * kC);
  EXPECT_DOUBLE_EQ(d.p_drop(), p);
}

TEST(DropController, ResetBelowThresholdRestartsAtPStart) {
  DropController d(FairnessParams{});
  d.on_interval(busy(0.5 * kC), 0.77 * kC);
  for (int i = 0; i < 5000; ++i) d.on_tcp_packet(0.77 * kC);
  EXPECT_GT(d.p_drop(), 0.0016);
  IntervalLoad quiet = busy(0.5 * kC);
  quiet.input_rate = 0.5 * kC;
  d.on_interval(quiet, 0.77 * kC);
  EXPECT_FALSE(d.active());
  EXPECT_DOUBLE_EQ(d.p_drop(), 0.001);
  EXPECT_EQ(d.counters().resets, 1u);
}

TEST(DropController, PerIntervalCadenceTakes460SecondsForTenfold) {
  FairnessParams k;
  k.update = FairnessUpdate::kInterval;
  DropController d(k);
  // Injected clock: one control interval every 20 ms (d = RTT), TCP packets
  // in between do not move p.
  const double interval_s = 0.020;
  double t = 0;
  int intervals = 0;
  while (d.p_drop() < 0.01) {
    d.on_interval(busy(0.5 * kC), 0.77 * kC);
    for (int i = 0; i < 10; ++i) d.on_tcp_packet(0.77 * kC);
    t += interval_s;
    ++intervals;
    ASSERT_LT(intervals, 100'000);
  }
  // Every interval steps (the first one activates and steps): ln 10 / ln 1.0001.
  EXPECT_NEAR(intervals, 23027, 2);
  EXPECT_NEAR(t, 460.0, 1.0);
}

TEST(DropController, ClampedToMinAndOne) {
  FairnessParams k;
  k.d_drop = 0.5;
  k.i_drop = 2.0;
  DropController d(k);
  d.on_interval(busy(0.9 * kC), 0.5 * kC);
  for (int i = 0; i < 200; ++i) d.on_tcp_packet(0.5 * kC);
  EXPECT_DOUBLE_EQ(d.p_drop(), DropController::kMinPDrop);
  d.on_interval(busy(0.1 * kC), 0.5 * kC);
  for (int i = 0; i < 200; ++i) d.on_tcp_packet(0.5 * kC);
  EXPECT_DOUBLE_EQ(d.p_drop(), 1.0);
}

}  // namespace
}  // namespace xcprouter
