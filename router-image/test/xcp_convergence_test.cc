// Simulated-time XCP scenarios (SIGCOMM'02 dumbbell, docs/protocol.md §2–3): N
// flows with different RTTs converge to C/N with no drops and a small queue;
// a wrong capacity estimate shows the seeds' effects (too high: standing
// queue and drops; too low: under-use).
//
// Why the 20-interval check uses RTTs 40–100 ms: with γ = 0.1 shuffling
// removes ~10 % of the unfairness per interval, so what must be reached in
// 20 intervals is set by the start-up transient, where the first flows with
// an RTT sample take whole pools (p = ξp·r²·s/cwnd is huge for cwnd = s).
// Wider RTT spreads converge too, just later (LongRunEqualShares...).
#include <algorithm>
#include <cmath>

#include <gtest/gtest.h>

#include "sim/xcp_dumbbell.hh"

namespace xcprouter::sim {
namespace {

using xcp::Duration;
using xcp::Timestamp;

constexpr double kPacket = 1000;

FlowPath path_ms(double rtt_ms) {
  // 10 % of the propagation before the bottleneck, 40 % after, 50 % back.
  return {Duration::seconds(rtt_ms * 1e-4), Duration::seconds(rtt_ms * 4e-4),
          Duration::seconds(rtt_ms * 5e-4)};
}

DumbbellConfig dumbbell(std::initializer_list<double> rtts_ms, uint64_t buffer_packets,
                        double xcp_capacity_bps = 0, uint64_t seed = 1) {
  DumbbellConfig cfg;
  cfg.link = xcp::Rate::from_megabits_per_s(10);
  cfg.xcp_capacity_bps = xcp_capacity_bps;
  cfg.buffer_packets = buffer_packets;
  cfg.seed = seed;
  for (double rtt : rtts_ms) cfg.flows.push_back(path_ms(rtt));
  return cfg;
}

// Largest |rate_i / (C/N) − 1| over [a, b).
double worst_fairness_error(const XcpDumbbell& sim, double c, Timestamp a, Timestamp b) {
  const double fair = c / static_cast<double>(sim.flow_count());
  double worst = 0;
  for (uint16_t f = 0; f < sim.flow_count(); ++f) worst = std::max(worst, std::abs(sim.throughput(f, a, b) / fair - 1));
  return worst;
}

class XcpConvergence : public ::testing::TestWithParam<uint64_t> {};

TEST_P(XcpConvergence, FourFlowsDifferentRttsReachFairShareWithin20Intervals) {
  const double c = 1.25e6;  // 10 Mb/s
  // Buffer = BDP at the longest RTT (100 ms).
  XcpDumbbell sim(dumbbell({40, 60, 80, 100}, 125, 0, GetParam()));
  sim.run_until(at_s(4.0));
  ASSERT_GE(sim.timeouts(), 30u);
  // Throughput over control intervals 20..30 (≈ 1 s, > 300 packets a flow).
  const Timestamp a = sim.timeout(20), b = sim.timeout(30);
  EXPECT_LE(worst_fairness_error(sim, c, a, b), 0.05);
  EXPECT_GE(sim.total_throughput(a, b), 0.97 * c);
  EXPECT_EQ(sim.qdisc().counters().drops_total(), 0u);
  EXPECT_LE(sim.mean_queue(a, b), 5 * kPacket);
  EXPECT_LE(sim.max_queue(a, b), 20 * kPacket);
  // Whole run, start-up included: the buffer never filled.
  EXPECT_LT(sim.qdisc().counters().max_packets, 125u);
}

INSTANTIATE_TEST_SUITE_P(Seeds, XcpConvergence, ::testing::Values(1, 2, 3));

TEST(XcpConvergenceLong, LongRunEqualSharesRegardlessOfRtt) {
  // SIGCOMM'02: equal shares for RTTs 40..330 ms.
  const double c = 1.25e6;
  XcpDumbbell sim(dumbbell({40, 330}, 420));
  sim.run_until(at_s(30.0));
  EXPECT_LE(worst_fairness_error(sim, c, at_s(15), at_s(30)), 0.05);
  EXPECT_GE(sim.total_throughput(at_s(15), at_s(30)), 0.98 * c);
  EXPECT_EQ(sim.qdisc().counters().drops_total(), 0u);
  EXPECT_LE(sim.mean_queue(at_s(15), at_s(30)), 3 * kPacket);
}

TEST(XcpWrongCapacity, TwentyPercentTooHighGivesStandingQueue) {
  // XCP aims at 1.2·C it cannot drain: in equilibrium phi = 0 with y = C, so
  // Q = α·d·0.2·C/β ≈ 0.4·0.1·250 kB/s / 0.226 ≈ 44 kB stands in the queue.
  const double c = 1.25e6;
  XcpDumbbell sim(dumbbell({40, 60, 80, 100}, 125, 1.2 * c * 8));
  sim.run_until(at_s(6.0));
  EXPECT_GE(sim.mean_queue(at_s(3), at_s(6)), 25 * kPacket);
  EXPECT_GE(sim.qdisc().persistent_queue(), 20 * kPacket);
  EXPECT_GE(sim.total_throughput(at_s(3), at_s(6)), 0.99 * c);
}

TEST(XcpWrongCapacity, TwentyPercentTooHighWithSmallBufferDrops) {
  const double c = 1.25e6;
  XcpDumbbell sim(dumbbell({40, 60, 80, 100}, 30, 1.2 * c * 8));
  sim.run_until(at_s(6.0));
  EXPECT_GT(sim.qdisc().counters().drops_overflow, 0u);
}

TEST(XcpWrongCapacity, TwentyPercentTooLowUnderUsesTheLink) {
  const double c = 1.25e6;
  XcpDumbbell sim(dumbbell({40, 60, 80, 100}, 125, 0.8 * c * 8));
  sim.run_until(at_s(4.0));
  const double util = sim.total_throughput(at_s(2), at_s(4)) / c;
  EXPECT_NEAR(util, 0.8, 0.03);
  EXPECT_EQ(sim.qdisc().counters().drops_total(), 0u);
  EXPECT_LE(sim.mean_queue(at_s(2), at_s(4)), 2 * kPacket);
}

}  // namespace
}  // namespace xcprouter::sim
