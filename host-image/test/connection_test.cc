// Transport state machine: handshake, teardown, refusal, loss recovery,
// retransmission-timer back-off and receiver feedback accumulation, all in
// simulated time.
#include <gtest/gtest.h>

#include <optional>
#include <vector>

#include "sim_network.hh"
#include "stream_apps.hh"
#include "wire_parse.hh"

namespace xcphost::test {
namespace {

ConnectionConfig base_config(CcKind cc = CcKind::kNewReno) {
  ConnectionConfig c;
  c.cc = cc;
  c.send_buffer_bytes = 256 * 1024;
  return c;
}

constexpr FlowKey kKey{SimNetwork::kAddrB, 40000, 5001};

TEST(Connection, HandshakeSurvivesLostSynAndSynAck) {
  SimNetwork net({}, {}, 1);
  int syns = 0, synacks = 0;
  net.a_to_b().filter = [&](std::vector<uint8_t>& b) {
    auto p = parse(b);
    return !(p && p->seg.has(seg_flags::kSyn) && ++syns == 1);  // first SYN lost
  };
  net.b_to_a().filter = [&](std::vector<uint8_t>& b) {
    auto p = parse(b);
    return !(p && p->seg.has(seg_flags::kSyn) && ++synacks == 1);  // first SYN-ACK lost
  };
  PatternReceiver rx;
  const auto cfg = base_config();
  net.b().listen(5001, cfg, [&](Connection&) { return &rx; });
  PatternSender tx(10'000);
  Connection& c = net.a().connect(kKey, cfg, &tx, net.now());
  net.run_until([&] { return tx.closed && rx.closed; }, xcp::Duration::seconds(30));
  EXPECT_EQ(syns, 3);    // initial, after 1 s, after 2 s more
  EXPECT_EQ(synacks, 2);
  EXPECT_TRUE(tx.established);
  EXPECT_EQ(c.state(), ConnState::kClosed);
  EXPECT_EQ(rx.received, 10'000u);
  EXPECT_FALSE(rx.mismatch);
  EXPECT_EQ(net.b().connection_count(), 0u);  // accepted connection reaped after close
}

TEST(Connection, ConnectTimesOutWithExponentialBackoff) {
  SimNetwork net({}, {}, 1);
  std::vector<double> syn_times;
  net.a_to_b().filter = [&](std::vector<uint8_t>& b) {
    if (auto p = parse(b); p && p->seg.has(seg_flags::kSyn)) syn_times.push_back(net.now().seconds_f());
    return true;
  };
  PatternSender tx(1000);  // nobody listens on B
  Connection& c = net.a().connect(kKey, base_config(), &tx, net.now());
  const double t0 = net.now().seconds_f();
  net.run_until([&] { return c.done(); }, xcp::Duration::seconds(60));
  EXPECT_EQ(c.state(), ConnState::kFailed);
  EXPECT_EQ(c.error(), ConnError::kConnectTimeout);
  ASSERT_EQ(syn_times.size(), 3u);  // RTO 1 s, then 2 s; the 4 s timeout passes connect_timeout (5 s)
  EXPECT_NEAR(syn_times[1] - syn_times[0], 1.0, 1e-6);
  EXPECT_NEAR(syn_times[2] - syn_times[1], 2.0, 1e-6);
  EXPECT_NEAR(net.now().seconds_f() - t0, 7.0, 1e-6);
  EXPECT_TRUE(tx.closed);
}

TEST(Connection, ListenerResetsSegmentsOfUnknownConnections) {
  SimNetwork net({}, {}, 1);
  PatternReceiver rx;
  Connection* accepted = nullptr;
  const auto cfg = base_config();
  net.b().listen(5001, cfg, [&](Connection& c) {
    accepted = &c;
    return &rx;
  });
  PatternSender tx(1'000'000);
  Connection& c = net.a().connect(kKey, cfg, &tx, net.now());
  net.run_until([&] { return accepted && accepted->state() == ConnState::kEstablished; },
                xcp::Duration::seconds(5));
  ASSERT_NE(accepted, nullptr);
  net.b().remove(*accepted);  // the server forgets the connection (e.g. restarted)
  net.run_until([&] { return c.done(); }, xcp::Duration::seconds(5));
  EXPECT_EQ(c.state(), ConnState::kFailed);
  EXPECT_EQ(c.error(), ConnError::kReset);
  EXPECT_GT(net.b().stats().resets_sent, 0u);
}

TEST(Connection, SingleLossIsRepairedByFastRetransmitWithoutTimeout) {
  SimNetwork net({}, {}, 1);
  bool dropped = false;
  net.a_to_b().filter = [&](std::vector<uint8_t>& b) {
    auto p = parse(b);
    if (p && p->payload > 0 && p->seg.seq >= 50'000 && !dropped) {
      dropped = true;
      return false;
    }
    return true;
  };
  PatternReceiver rx;
  const auto cfg = base_config();
  net.b().listen(5001, cfg, [&](Connection&) { return &rx; });
  PatternSender tx(300'000);
  Connection& c = net.a().connect(kKey, cfg, &tx, net.now());
  net.run_until([&] { return tx.closed && rx.closed; }, xcp::Duration::seconds(30));
  EXPECT_TRUE(dropped);
  EXPECT_EQ(rx.received, 300'000u);
  EXPECT_FALSE(rx.mismatch);
  EXPECT_EQ(c.stats().retransmits, 1u);
  EXPECT_EQ(c.stats().fast_recoveries, 1u);
  EXPECT_EQ(c.stats().timeouts, 0u);
}

TEST(Connection, LostLastSegmentIsRepairedByATailProbeBeforeTheRto) {
  SimNetwork net({}, {}, 1);
  constexpr uint64_t kBytes = 100'000;
  int dropped = 0;
  net.a_to_b().filter = [&](std::vector<uint8_t>& b) {
    auto p = parse(b);
    // The last data segment, first transmission: no later segment can produce dupacks.
    if (p && p->payload > 0 && p->seg.seq + p->payload == kBytes && dropped == 0) {
      ++dropped;
      return false;
    }
    return true;
  };
  PatternReceiver rx;
  const auto cfg = base_config();
  net.b().listen(5001, cfg, [&](Connection&) { return &rx; });
  PatternSender tx(kBytes);
  Connection& c = net.a().connect(kKey, cfg, &tx, net.now());
  const xcp::Timestamp t0 = net.now();
  net.run_until([&] { return tx.closed && rx.closed; }, xcp::Duration::seconds(30));
  EXPECT_EQ(dropped, 1);
  EXPECT_EQ(rx.received, kBytes);
  EXPECT_EQ(c.stats().timeouts, 0u);
  EXPECT_EQ(c.stats().tail_probes, 1u);
  // Handshake + ~4 RTT of slow start + the probe's ~2 RTT: well under the 200 ms RTO floor.
  EXPECT_LT((net.now() - t0).seconds_f(), 0.35);
}

TEST(Connection, RetransmissionTimerBacksOffThenGivesUp) {
  SimNetwork net({}, {}, 1);
  bool blackhole = false;
  std::vector<double> data_times;
  net.a_to_b().filter = [&](std::vector<uint8_t>& b) {
    auto p = parse(b);
    if (blackhole && p && p->payload > 0) data_times.push_back(net.now().seconds_f());
    return !blackhole;
  };
  PatternReceiver rx;
  auto cfg = base_config();
  cfg.max_consecutive_timeouts = 5;
  net.b().listen(5001, cfg, [&](Connection&) { return &rx; });
  PatternSender tx(10'000'000);
  Connection& c = net.a().connect(kKey, cfg, &tx, net.now());
  net.run_until([&] { return rx.received > 100'000; }, xcp::Duration::seconds(10));
  blackhole = true;
  net.run_until([&] { return c.done(); }, xcp::Duration::seconds(120));
  EXPECT_EQ(c.error(), ConnError::kTimedOut);
  EXPECT_EQ(c.stats().timeouts, 6u);
  // The gaps between successive retransmissions of the head double (RFC 6298 5.5).
  std::vector<double> retx;
  for (size_t i = 1; i < data_times.size(); ++i) {
    if (data_times[i] - data_times[i - 1] > 0.05) retx.push_back(data_times[i]);
  }
  // One tail-loss probe goes out ~2 RTT after the last ACK, before the first
  // RTO, and only one: no ACK ever re-arms it.
  EXPECT_EQ(c.stats().tail_probes, 1u);
  ASSERT_FALSE(retx.empty());
  retx.erase(retx.begin());
  ASSERT_GE(retx.size(), 4u);
  for (size_t i = 2; i < retx.size(); ++i) {
    EXPECT_NEAR((retx[i] - retx[i - 1]) / (retx[i - 1] - retx[i - 2]), 2.0, 0.01) << i;
  }
}

TEST(Connection, SilentPeerIsDroppedAfterTheIdleTimeout) {
  SimNetwork net({}, {}, 1);
  bool blackhole = false;
  net.a_to_b().filter = [&](std::vector<uint8_t>&) { return !blackhole; };
  PatternReceiver rx;
  Connection* accepted = nullptr;
  auto cfg = base_config();
  cfg.idle_timeout = xcp::Duration::seconds(3);
  net.b().listen(5001, cfg, [&](Connection& c) {
    accepted = &c;
    return &rx;
  });
  PatternSender tx(10'000'000);
  net.a().connect(kKey, cfg, &tx, net.now());
  net.run_until([&] { return rx.received > 50'000; }, xcp::Duration::seconds(10));
  blackhole = true;  // the client vanishes (e.g. SIGKILL): the receiver has nothing to retransmit
  const double t_silent = net.now().seconds_f();
  net.run_until([&] { return rx.closed; }, xcp::Duration::seconds(20));
  EXPECT_TRUE(rx.closed);
  EXPECT_EQ(rx.error, ConnError::kTimedOut);
  EXPECT_NEAR(net.now().seconds_f() - t_silent, 3.0, 0.05);
  EXPECT_EQ(net.b().connection_count(), 0u);
}

TEST(Connection, ReceiverReturnsEveryFeedbackByteUnderDelayedAcks) {
  SimNetwork net({}, {}, 1);
  // Stand in for a router: every data packet carries H_feedback = 7 on arrival.
  uint64_t data_packets = 0;
  net.a_to_b().filter = [&](std::vector<uint8_t>& b) {
    auto p = parse(b);
    if (p && p->shim.format == xcp::Format::kStandard && !p->seg.has(seg_flags::kSyn)) {
      ++data_packets;
      xcp::store_feedback(b, 7);
    }
    return true;
  };
  int64_t echoed = 0;
  uint64_t acks = 0, multi = 0;
  net.b_to_a().filter = [&](std::vector<uint8_t>& b) {
    auto p = parse(b);
    if (p && !p->seg.has(seg_flags::kSyn)) {
      echoed += p->shim.reverse_feedback_bytes;
      ++acks;
      if (p->shim.reverse_feedback_bytes > 7) ++multi;
      EXPECT_EQ(p->shim.reverse_feedback_bytes % 7, 0);
    }
    return true;
  };
  PatternReceiver rx;
  auto cfg = base_config(CcKind::kXcp);
  cfg.desired_rate = xcp::Rate::from_megabits_per_s(5);
  net.b().listen(5001, cfg, [&](Connection&) { return &rx; });
  PatternSender tx(200'000);
  Connection& c = net.a().connect(kKey, cfg, &tx, net.now());
  net.run_until([&] { return tx.closed && rx.closed; }, xcp::Duration::seconds(30));
  ASSERT_EQ(rx.received, 200'000u);
  EXPECT_EQ(echoed, static_cast<int64_t>(7 * data_packets));  // nothing lost, nothing doubled
  EXPECT_EQ(c.stats().feedback_bytes, echoed);               // and applied once per ACK
  EXPECT_GT(multi, 0u);                                      // delayed ACKs summed several packets
  EXPECT_LT(acks, data_packets);                             // ... because there were fewer ACKs
}

}  // namespace
}  // namespace xcphost::test
