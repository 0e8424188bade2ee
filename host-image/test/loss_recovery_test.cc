// --loss-recovery modes in simulated time: several losses in one window are
// repaired without a timeout by SACK and by NewReno partial ACKs, but cost
// Reno (ns-2's XcpAgent sender) a retransmission timeout; without SACK no
// SACK block crosses the wire; every mode delivers every byte; XCP overdriving
// a DropTail bottleneck collapses with Reno only (seed 000 Fig. 1(c)).
#include <gtest/gtest.h>

#include <algorithm>
#include <iostream>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "sim_network.hh"
#include "stream_apps.hh"
#include "wire_parse.hh"

namespace xcphost::test {
namespace {

constexpr FlowKey kKey{SimNetwork::kAddrB, 40000, 5001};
constexpr uint64_t kBytes = 600'000;
// Losses start here: by then slow start has opened the window to dozens of
// segments, so the dropped segments (every 3rd new one) share one window.
constexpr uint64_t kDropFrom = 200'000;

std::string name(LossRecovery m) { return std::string(to_string(m)); }

struct Outcome {
  ConnectionStats stats;
  uint64_t received = 0;
  bool mismatch = false;
  bool closed = false;
  uint64_t dropped = 0;
  uint64_t acks_with_sack = 0;  // receiver → sender segments carrying SACK blocks
  bool client_syn_permits_sack = false;
  bool server_synack_permits_sack = false;
  double max_send_gap_s = 0;  // longest silence between two data packets of the sender
};

struct Scenario {
  LossRecovery client = LossRecovery::kSack;  // the data sender
  LossRecovery server = LossRecovery::kSack;  // the receiver
  CcKind cc = CcKind::kNewReno;
  int drops = 3;  // first transmissions dropped, every 3rd new segment from kDropFrom
  // Rewrite the client's SYN to permit SACK whatever its mode, so the server
  // sends blocks anyway: a non-SACK sender must ignore them.
  bool force_peer_sack = false;
};

Outcome run(const Scenario& sc) {
  // 10 Mb/s, 10 ms each way; a queue slow start cannot overflow, so the
  // filter's drops are the only losses.
  PathConfig path;
  path.queue_packets = 100'000;
  SimNetwork net(path, path, 1);
  Outcome out;
  std::set<uint64_t> seen;
  int new_after = 0;
  std::optional<xcp::Timestamp> last_data_at;
  net.a_to_b().filter = [&](std::vector<uint8_t>& b) {
    auto p = parse(b);
    if (!p) return true;
    if (p->seg.has(seg_flags::kSyn)) {
      out.client_syn_permits_sack = p->seg.sack_permitted;
      if (sc.force_peer_sack) b[p->segment_offset + 23] |= seg_options::kSackPermitted;
      return true;
    }
    if (p->payload > 0) {
      if (last_data_at) out.max_send_gap_s = std::max(out.max_send_gap_s, (net.now() - *last_data_at).seconds_f());
      last_data_at = net.now();
    }
    if (p->payload == 0 || p->seg.seq < kDropFrom || !seen.insert(p->seg.seq).second) return true;
    const int k = new_after++;
    if (k % 3 == 0 && k / 3 < sc.drops) {
      ++out.dropped;
      return false;
    }
    return true;
  };
  net.b_to_a().filter = [&](std::vector<uint8_t>& b) {
    auto p = parse(b);
    if (p && p->seg.has(seg_flags::kSyn)) out.server_synack_permits_sack = p->seg.sack_permitted;
    if (p && p->seg.sack_count > 0) ++out.acks_with_sack;
    return true;
  };
  ConnectionConfig server_cfg;
  server_cfg.cc = sc.cc;
  server_cfg.loss_recovery = sc.server;
  ConnectionConfig client_cfg = server_cfg;
  client_cfg.loss_recovery = sc.client;
  client_cfg.send_buffer_bytes = 256 * 1024;
  client_cfg.desired_rate = xcp::Rate::from_megabits_per_s(8);  // XCP: no router, ask for 8 of 10 Mb/s

  PatternReceiver rx;
  net.b().listen(5001, server_cfg, [&](Connection&) { return &rx; });
  PatternSender tx(kBytes);
  Connection& c = net.a().connect(kKey, client_cfg, &tx, net.now());
  net.run_until([&] { return tx.closed && rx.closed; }, xcp::Duration::seconds(60));
  out.stats = c.stats();
  out.received = rx.received;
  out.mismatch = rx.mismatch;
  out.closed = tx.closed && rx.closed && c.state() == ConnState::kClosed;
  EXPECT_EQ(net.a_to_b().dropped_queue, 0u);
  std::cout << "client " << name(sc.client) << " server " << name(sc.server) << " cc " << to_string(sc.cc)
            << ": dropped " << out.dropped << " retransmits " << out.stats.retransmits << " fast_recoveries "
            << out.stats.fast_recoveries << " timeouts " << out.stats.timeouts << " tail_probes "
            << out.stats.tail_probes << " acks_with_sack " << out.acks_with_sack << " max_send_gap_s "
            << out.max_send_gap_s << "\n";
  return out;
}

void expect_intact(const Outcome& o) {
  EXPECT_TRUE(o.closed);
  EXPECT_EQ(o.received, kBytes);
  EXPECT_FALSE(o.mismatch);
  EXPECT_EQ(o.stats.bytes_acked, kBytes);
}

TEST(LossRecovery, ThreeLossesInOneWindowCostRenoATimeoutButNotSack) {
  for (CcKind cc : {CcKind::kNewReno, CcKind::kXcp}) {
    SCOPED_TRACE(std::string(to_string(cc)));
    const Outcome sack = run({LossRecovery::kSack, LossRecovery::kSack, cc});
    const Outcome reno = run({LossRecovery::kReno, LossRecovery::kReno, cc});
    ASSERT_EQ(sack.dropped, 3u);
    ASSERT_EQ(reno.dropped, 3u);
    EXPECT_EQ(sack.stats.timeouts, 0u);
    EXPECT_EQ(sack.stats.fast_recoveries, 1u);
    EXPECT_EQ(sack.stats.retransmits, 3u);  // exactly the three holes
    // Reno: the first hole by fast retransmit, whose partial ACK ends
    // recovery; the next hole waits for the RTO, then go-back-N (whose
    // needless resends may draw duplicate ACKs and one more fast retransmit).
    EXPECT_GE(reno.stats.timeouts, 1u);
    EXPECT_GE(reno.stats.fast_recoveries, 1u);
    EXPECT_GT(reno.stats.retransmits, 3u);
    // ... and waits for it in silence, as ns-2's Reno agent (duplicate ACKs
    // outside fast recovery open no window): the RTO is at least 200 ms.
    EXPECT_GE(reno.max_send_gap_s, 0.15);
    EXPECT_LT(sack.max_send_gap_s, 0.1);
    expect_intact(sack);
    expect_intact(reno);
  }
}

TEST(LossRecovery, NewRenoRepairsSeveralHolesByPartialAcksWithoutTimeout) {
  for (CcKind cc : {CcKind::kNewReno, CcKind::kXcp}) {
    SCOPED_TRACE(std::string(to_string(cc)));
    const Outcome o = run({LossRecovery::kNewReno, LossRecovery::kNewReno, cc});
    ASSERT_EQ(o.dropped, 3u);
    EXPECT_EQ(o.stats.timeouts, 0u);
    EXPECT_EQ(o.stats.fast_recoveries, 1u);  // one episode for all three holes
    EXPECT_EQ(o.stats.retransmits, 3u);      // each hole once: two of them on partial ACKs
    EXPECT_EQ(o.stats.tail_probes, 0u);
    EXPECT_EQ(o.acks_with_sack, 0u);
    expect_intact(o);
  }
}

TEST(LossRecovery, RenoRepairsASingleLossByFastRetransmitAlone) {
  const Outcome o = run({LossRecovery::kReno, LossRecovery::kReno, CcKind::kNewReno, 1});
  ASSERT_EQ(o.dropped, 1u);
  EXPECT_EQ(o.stats.timeouts, 0u);
  EXPECT_EQ(o.stats.fast_recoveries, 1u);
  EXPECT_EQ(o.stats.retransmits, 1u);
  expect_intact(o);
}

TEST(LossRecovery, SackBlocksCrossTheWireOnlyWhenBothEndsUseSack) {
  const Outcome both = run({LossRecovery::kSack, LossRecovery::kSack});
  EXPECT_TRUE(both.client_syn_permits_sack);
  EXPECT_TRUE(both.server_synack_permits_sack);
  EXPECT_GT(both.acks_with_sack, 0u);  // the holes were reported by SACK
  for (LossRecovery m : {LossRecovery::kNewReno, LossRecovery::kReno}) {
    SCOPED_TRACE(name(m));
    // The sender's mode alone turns SACK off: the receiver has SACK enabled.
    const Outcome client_only = run({m, LossRecovery::kSack});
    EXPECT_FALSE(client_only.client_syn_permits_sack);
    EXPECT_TRUE(client_only.server_synack_permits_sack);
    EXPECT_EQ(client_only.acks_with_sack, 0u);
    EXPECT_EQ(client_only.stats.tail_probes, 0u);
    expect_intact(client_only);
    // And the receiver's mode alone turns it off too.
    const Outcome server_only = run({LossRecovery::kSack, m});
    EXPECT_TRUE(server_only.client_syn_permits_sack);
    EXPECT_FALSE(server_only.server_synack_permits_sack);
    EXPECT_EQ(server_only.acks_with_sack, 0u);
    expect_intact(server_only);
  }
}

TEST(LossRecovery, NonSackSendersIgnoreBlocksAPeerSendsAnyway) {
  // Same outcome as the negotiated runs above although blocks arrive: NewReno
  // still needs partial ACKs (3 retransmissions, no RTO); Reno still times out
  // (with the blocks used it would not).
  const Outcome nr = run({LossRecovery::kNewReno, LossRecovery::kSack, CcKind::kNewReno, 3, true});
  EXPECT_GT(nr.acks_with_sack, 0u);
  EXPECT_EQ(nr.stats.timeouts, 0u);
  EXPECT_EQ(nr.stats.retransmits, 3u);
  expect_intact(nr);
  const Outcome reno = run({LossRecovery::kReno, LossRecovery::kSack, CcKind::kNewReno, 3, true});
  EXPECT_GT(reno.acks_with_sack, 0u);
  EXPECT_GE(reno.stats.timeouts, 1u);
  expect_intact(reno);
}

// Random drops, duplicates and reordering in both directions: each mode,
// with a TCP and the XCP controller, delivers every byte intact.
struct ImpairedCase {
  LossRecovery mode;
  CcKind cc;
};
class LossRecoveryImpaired : public ::testing::TestWithParam<ImpairedCase> {};

TEST_P(LossRecoveryImpaired, DeliversEveryByteIntact) {
  const ImpairedCase& p = GetParam();
  PathConfig path;
  path.drop = 0.03;
  path.duplicate = 0.01;
  path.reorder = 0.02;
  SimNetwork net(path, path, 7);
  ConnectionConfig cfg;
  cfg.cc = p.cc;
  cfg.loss_recovery = p.mode;
  cfg.desired_rate = xcp::Rate::from_megabits_per_s(8);
  cfg.send_buffer_bytes = 256 * 1024;
  PatternReceiver rx;
  net.b().listen(5001, cfg, [&](Connection&) { return &rx; });
  PatternSender tx(kBytes);
  Connection& c = net.a().connect(kKey, cfg, &tx, net.now());
  net.run_until([&] { return tx.closed && rx.closed; }, xcp::Duration::seconds(300));
  std::cout << name(p.mode) << "/" << to_string(p.cc) << ": retransmits " << c.stats().retransmits
            << " fast_recoveries " << c.stats().fast_recoveries << " timeouts " << c.stats().timeouts << "\n";
  EXPECT_GT(net.a_to_b().dropped_random, 0u);
  EXPECT_EQ(c.state(), ConnState::kClosed) << to_string(c.error());
  EXPECT_EQ(rx.received, kBytes);
  EXPECT_FALSE(rx.mismatch);
  EXPECT_EQ(c.stats().bytes_acked, kBytes);
  if (p.mode != LossRecovery::kSack) {
    EXPECT_EQ(c.stats().tail_probes, 0u);
  }
}

INSTANTIATE_TEST_SUITE_P(
    Modes, LossRecoveryImpaired,
    ::testing::Values(ImpairedCase{LossRecovery::kSack, CcKind::kNewReno},
                      ImpairedCase{LossRecovery::kNewReno, CcKind::kNewReno},
                      ImpairedCase{LossRecovery::kReno, CcKind::kNewReno},
                      ImpairedCase{LossRecovery::kSack, CcKind::kXcp},
                      ImpairedCase{LossRecovery::kNewReno, CcKind::kXcp},
                      ImpairedCase{LossRecovery::kReno, CcKind::kXcp}),
    [](const auto& info) { return name(info.param.mode) + "_" + std::string(to_string(info.param.cc)); });

TEST(LossRecovery, ModeNamesRoundTrip) {
  for (LossRecovery m : {LossRecovery::kSack, LossRecovery::kNewReno, LossRecovery::kReno}) {
    EXPECT_EQ(parse_loss_recovery(to_string(m)), m);
  }
  EXPECT_FALSE(parse_loss_recovery("SACK"));
  EXPECT_FALSE(parse_loss_recovery(""));
  EXPECT_FALSE(parse_loss_recovery("cubic"));
}

// Seed 000 Fig. 1(c) in miniature: an XCP sender asking for more than a
// DropTail bottleneck carries (no XCP router to hold it back) overruns a
// buffer far below its window, losing several packets per window. A SACK
// sender repairs them by fast recovery; a Reno sender (ns-2's XcpAgent)
// falls into timeouts and the link idles.
TEST(LossRecovery, XcpOverADropTailBottleneckCollapsesOnlyWithReno) {
  struct Result {
    double utilisation;
    ConnectionStats stats;
  };
  auto run_mode = [](LossRecovery mode) {
    PathConfig fwd;
    fwd.rate = xcp::Rate::from_megabits_per_s(30);
    fwd.delay = xcp::Duration::milliseconds(20);  // RTT 40 ms: BDP 100 packets
    fwd.queue_packets = 100;                      // a buffer of one BDP, far below the window XCP asks for
    PathConfig rev = fwd;
    rev.rate = xcp::Rate::from_megabits_per_s(1000);
    SimNetwork net(fwd, rev, 3);
    ConnectionConfig cfg;
    cfg.cc = CcKind::kXcp;
    cfg.desired_rate = xcp::Rate::from_megabits_per_s(40);
    cfg.loss_recovery = mode;
    PatternReceiver rx;
    net.b().listen(5001, cfg, [&](Connection&) { return &rx; });
    PatternSender tx(uint64_t{1} << 40);
    Connection& c = net.a().connect(kKey, cfg, &tx, net.now());
    net.run_until([&] { return tx.established; }, xcp::Duration::seconds(5));
    const xcp::Timestamp t0 = net.now();
    const uint64_t b0 = rx.received;
    net.run_until([] { return false; }, xcp::Duration::seconds(10));
    const double secs = (net.now() - t0).seconds_f();
    const double util = static_cast<double>(rx.received - b0) * 8 / (30e6 * secs);
    std::cout << name(mode) << ": goodput/capacity " << util << " timeouts " << c.stats().timeouts
              << " fast_recoveries " << c.stats().fast_recoveries << " retransmits " << c.stats().retransmits
              << " queue drops " << net.a_to_b().dropped_queue << "\n";
    EXPECT_FALSE(rx.mismatch);
    EXPECT_LE(util, 1.0);  // physics: payload cannot exceed the link
    return Result{util, c.stats()};
  };
  const Result sack = run_mode(LossRecovery::kSack);
  const Result reno = run_mode(LossRecovery::kReno);
  EXPECT_GE(sack.utilisation, 0.8);
  EXPECT_LE(sack.stats.timeouts, 1u);
  EXPECT_GT(sack.stats.fast_recoveries, 20u);  // losses every few RTTs, all repaired
  EXPECT_LE(reno.utilisation, 0.5 * sack.utilisation);
  EXPECT_GE(reno.stats.timeouts, 10u);
}

}  // namespace
}  // namespace xcphost::test
