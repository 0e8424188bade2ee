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

#include <algorithm>
#include <iostream>
#include <vector>
#include <optional>
#include <string>

#include "sim_network.hh"
#include "stream_apps.hh"
#include "wire_parse.hh"

namespace xcphost::test {
namespace {

// The retransmission leaves with the ACK that completes the duplicate
// threshold, although the halved window is still full (pipe > cwnd): it used
// to wait until half a window of duplicate ACKs had drained pipe.
TEST(FastRetransmit, LeavesWithTheThirdDuplicateAckWhateverPipeSays) {
  for (LossRecovery mode : {LossRecovery::kSack, LossRecovery::kNewReno, LossRecovery::kReno}) {
    PathConfig path;  // 10 Mb/s, 10 ms one way
    path.queue_packets = 100'000;  // slow start cannot overflow it: the filter's drop is the only loss
    SimNetwork net(path, path, 1);
    constexpr uint64_t kDropAt = 200'000;  // slow start has opened the window to dozens of segments
    std::optional<uint64_t> hole;
    std::optional<xcp::Timestamp> retransmitted_at;
    std::vector<xcp::Timestamp> acks_of_hole;  // the receiver's ACKs naming the hole, as sent
    net.a_to_b().filter = [&](std::vector<uint8_t>& b) {
      auto p = parse(b);
      if (!p || p->payload == 0) return true;
      if (!hole && p->seg.seq >= kDropAt) {
        hole = p->seg.seq;
        return false;
      }
      if (hole && p->seg.seq == *hole && !retransmitted_at) retransmitted_at = net.now();
      return true;
    };
    net.b_to_a().filter = [&](std::vector<uint8_t>& b) {
      auto p = parse(b);
      if (p && hole && p->seg.ack == *hole) acks_of_hole.push_back(net.now());
      return true;
    };
    ConnectionConfig cfg;
    cfg.cc = CcKind::kNewReno;
    cfg.loss_recovery = mode;
    cfg.send_buffer_bytes = 1024 * 1024;
    PatternReceiver rx;
    net.b().listen(5001, cfg, [&](Connection&) { return &rx; });
    PatternSender tx(600'000);
    Connection& c = net.a().connect({SimNetwork::kAddrB, 40000, 5001}, cfg, &tx, net.now());
    net.run_until([&] { return tx.closed && rx.closed; }, xcp::Duration::seconds(30));
    ASSERT_TRUE(retransmitted_at) << to_string(mode);
    // ACKs need 10 ms (plus µs of serialisation) to reach the sender. Those
    // that had arrived when the repair left: the first names the hole as new
    // cumulative ACK, the others are duplicates; at most three were needed.
    const xcp::Timestamp seen_by = *retransmitted_at - xcp::Duration::milliseconds(10);
    const auto arrived = std::count_if(acks_of_hole.begin(), acks_of_hole.end(),
                                       [&](xcp::Timestamp t) { return t <= seen_by; });
    EXPECT_GE(arrived, 3) << to_string(mode);  // no earlier than the duplicate threshold allows
    EXPECT_LE(arrived, 4) << to_string(mode);
    EXPECT_GT(acks_of_hole.size(), 20u) << to_string(mode);  // many more were to come: pipe was full
    EXPECT_EQ(c.stats().timeouts, 0u) << to_string(mode);
    EXPECT_EQ(net.a_to_b().dropped_queue, 0u);
    EXPECT_EQ(rx.received, 600'000u);
  }
}

struct Case {
  CcKind cc;
  LossRecovery mode;
};

class FastRetransmitAtFullBuffer : public ::testing::TestWithParam<Case> {};

TEST_P(FastRetransmitAtFullBuffer, RepairsCongestionLossesWithoutTimeout) {
  const Case& p = GetParam();
  // 10 Mb/s, RTT 100 ms, buffer one BDP (125 kB ≈ 83 packets of 1500 bytes).
  PathConfig fwd;
  fwd.rate = xcp::Rate::from_megabits_per_s(10);
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
