// A congestion-avoidance loss at a full drop-tail buffer is repaired by fast
// retransmit, in every loss-recovery mode, without a retransmission timeout.
//
// With a standing queue of one BDP the RTT doubles and RTTVAR is near zero, so
// the RTO (SRTT + 4·RTTVAR) is barely above one RTT. A sender that holds its
// fast retransmit until pipe has drained below the halved window (half an RTT
// of duplicate ACKs), and does not restart the timer when it retransmits, sees
// the RTO fire before the repair's ACK can return: every loss then costs a
// timeout and a go-back-N. ns-2 (dupack_action) and Linux (PRR, and the timer
// restarted with the head's retransmission) retransmit at once; so do we.
// Reno is not among the cases: two losses in one window (a common overflow)
// cost it the RTO by design (LossRecovery.ThreeLossesInOneWindowCostReno...).
#include <gtest/gtest.h>

#include <iostream>
#include <string>

#include "sim_network.hh"
#include "stream_apps.hh"

namespace xcphost::test {
namespace {

struct Case {
  CcKind cc;
  LossRecovery mode;
};

class FastRetransmitAtFullBuffer : public ::testing::TestWithParam<Case> {};

TEST_P(FastRetransmitAtFullBuffer, RepairsCongestionLossesWithoutTimeout) {
  const Case& p = GetParam();
  // 10 Mb/s, RTT 100 ms, buffer one BDP (125 kB ≈ 83 packets of 1500 bytes).
  PathConfig fwd;
  fwd.rate = xcp::Rate::megabits_per_second(10);
  fwd.delay = xcp::Duration::milliseconds(50);
  fwd.queue_packets = 83;
  PathConfig rev = fwd;
  rev.queue_packets = 100'000;  // ACKs are never lost here
  SimNetwork net(fwd, rev, 1);

  ConnectionConfig cfg;
  cfg.cc = p.cc;
  cfg.loss_recovery = p.mode;
  cfg.send_buffer_bytes = 1024 * 1024;
  PatternReceiver rx;
  net.b().listen(5001, cfg, [&](Connection&) { return &rx; });
  PatternSender tx(uint64_t{1} << 40);  // never runs dry
  Connection& c = net.a().connect({SimNetwork::kAddrB, 40000, 5001}, cfg, &tx, net.now());

  // The slow-start overshoot (hundreds of losses at once) may cost a timeout;
  // the congestion-avoidance sawtooth after it must not.
  const auto never = [] { return false; };
  net.run_until(never, xcp::Duration::seconds(10));
  const ConnectionStats after_start = c.stats();
  const uint64_t drops_after_start = net.a_to_b().dropped_queue;
  net.run_until(never, xcp::Duration::seconds(50));
  const ConnectionStats end = c.stats();
  const uint64_t drops = net.a_to_b().dropped_queue - drops_after_start;
  const uint64_t recoveries = end.fast_recoveries - after_start.fast_recoveries;
  const uint64_t timeouts = end.timeouts - after_start.timeouts;
  std::cout << to_string(p.cc) << "/" << to_string(p.mode) << ": 10-60 s drops " << drops << " fast recoveries "
            << recoveries << " timeouts " << timeouts << " srtt " << c.rtt().srtt().us() << " us\n";

  // The buffer really overflowed, several times, in congestion avoidance.
  EXPECT_GE(drops, 2u);
  EXPECT_GE(recoveries, 2u);
  EXPECT_EQ(timeouts, 0u);
  EXPECT_FALSE(rx.mismatch);
}

INSTANTIATE_TEST_SUITE_P(
    ControllersAndModes, FastRetransmitAtFullBuffer,
    ::testing::Values(Case{CcKind::kNewReno, LossRecovery::kSack}, Case{CcKind::kNewReno, LossRecovery::kNewReno},
                      Case{CcKind::kHighSpeed, LossRecovery::kSack},
                      Case{CcKind::kHighSpeed, LossRecovery::kNewReno}),
    [](const auto& info) {
      return std::string(to_string(info.param.cc)) + "_" + std::string(to_string(info.param.mode));
    });

}  // namespace
}  // namespace xcphost::test
