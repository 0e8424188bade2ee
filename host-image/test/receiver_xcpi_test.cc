// The XCP-i receiver duty (docs/protocol.md §4 "Host duties", src/xcpi/): a
// receiver behind a cloud after the last XCP-i router U runs V(U) itself.
// Unit tests drive ReceiverXcpi with an injected clock; the simulated-path
// tests close the loop through a real sender over a drop-tail bottleneck.
#include <gtest/gtest.h>

#include <array>
#include <iostream>
#include <vector>

#include "sim_network.hh"
#include "stream_apps.hh"
#include "transport/segment.hh"
#include "xcp/chirp_schedule.hh"
#include "xcp/control_message.hh"
#include "xcpi/cloud_delay.hh"
#include "xcpi/receiver_xcpi.hh"
#include "xcpi/virtual_router.hh"

namespace xcphost {
namespace {

using xcp::Duration;
using xcp::Timestamp;

constexpr uint32_t kU = 0x0A000101;       // the last XCP-i router
constexpr uint32_t kSender = 0x0A000001;
constexpr double kMbps30 = 30e6 / 8;      // bytes/s

struct RecordingWriter final : PacketWriter {
  std::span<uint8_t> buffer() override { return buf; }
  void commit(uint32_t remote, size_t len) override {
    sent.push_back({remote, std::vector<uint8_t>(buf.begin(), buf.begin() + static_cast<long>(len))});
  }
  bool has_room() const override { return true; }
  std::optional<xcp::ControlMessage> control(size_t i) const { return xcp::parse_control(sent.at(i).second); }
  std::array<uint8_t, 2048> buf{};
  std::vector<std::pair<uint32_t, std::vector<uint8_t>>> sent;
};

Timestamp at_ms(double ms) { return Timestamp::zero() + Duration::microseconds(static_cast<int64_t>(ms * 1000)); }

// A data packet (shim onward) of 1480 bytes after a 20-byte IPv4 header.
std::vector<uint8_t> data_packet(uint8_t xcp_ttl, uint32_t last_router, int32_t feedback, uint32_t ts_val_us = 0,
                                 uint32_t rtt_us = 40000, uint32_t cwnd = 60000) {
  std::vector<uint8_t> b(1480);
  xcp::XcpHeader h;
  h.next_protocol = kNextProtoTransport;
  h.flags = xcp::flags::kXcpi;
  h.cwnd_bytes = cwnd;
  h.rtt_us = rtt_us;
  h.feedback_bytes = feedback;
  h.xcp_ttl = xcp_ttl;
  h.last_xcp_router = last_router;
  const size_t n = xcp::write_header(h, b);
  SegmentHeader seg;
  seg.src_port = 40000;
  seg.dst_port = 5001;
  seg.ts_val_us = ts_val_us;
  write_segment_header(seg, std::span<uint8_t>(b).subspan(n));
  return b;
}

int32_t feedback_of(const std::vector<uint8_t>& b) { return xcp::parse_header(b).header.feedback_bytes; }

std::vector<uint8_t> ack_for(const xcp::ControlMessage& req) {
  std::vector<uint8_t> b(xcp::kControlMessageLen);
  xcp::write_control({xcp::ControlType::kAck, req.session, req.seq, 0, 0}, b);
  return b;
}

ReceiverXcpiConfig config_30mbps() {
  ReceiverXcpiConfig c;
  c.path_capacity = xcp::Rate::from_bits_per_s(30e6);
  return c;
}

// --- the virtual router's arithmetic (the law shared with the engine) -------

TEST(VirtualRouter, EfficiencyFeedbackIsAlphaDTimesCapacityLeftMinusBetaQ) {
  VirtualRouter v(xcp::XcpParams{}, 7);
  v.spare().set_capacity_for_upstream(kMbps30);
  // 100 packets of 1500 B in 50 ms: y = 3e6 B/s; every r = 40 ms so d = 40 ms.
  xcp::XcpHeader h;
  h.cwnd_bytes = 60000;
  h.rtt_us = 40000;
  for (int i = 0; i < 100; ++i) v.on_arrival(h, 1500);
  const auto& st = v.on_timeout(0.05, 0);
  EXPECT_DOUBLE_EQ(st.y, 3e6);
  EXPECT_NEAR(st.d, 0.04, 1e-12);
  EXPECT_DOUBLE_EQ(st.spare, kMbps30 - 3e6);
  EXPECT_NEAR(st.phi, 0.4 * 0.04 * (kMbps30 - 3e6), 1e-6);  // 12000 B
  // The same traffic in the next interval receives phi in total (h = 0 here).
  double total = 0;
  for (int i = 0; i < 100; ++i) {
    xcp::XcpHeader p = h;
    p.feedback_bytes = 1 << 30;  // the sender asks for more than any hop gives
    v.on_arrival(p, 1500);
    ASSERT_TRUE(v.on_departure(p, 1500));
    total += p.feedback_bytes;
  }
  EXPECT_NEAR(total, 12000, 100);  // stochastic rounding: +-1 B per packet
  // A standing queue Q takes beta*Q off: with y = C and Q = 10 KB, phi = -2260 B.
  VirtualRouter full(xcp::XcpParams{}, 7);
  full.spare().set_capacity_for_upstream(kMbps30);
  for (int i = 0; i < 100; ++i) full.on_arrival(h, 1500);
  const auto& q = full.on_timeout(100 * 1500 / kMbps30, 10000);
  EXPECT_NEAR(q.spare, 0, 1e-6);
  EXPECT_NEAR(q.phi, -0.226 * 10000, 1e-6);
}

TEST(VirtualRouter, OnlyLowersAndCapsPacketsWithoutRtt) {
  VirtualRouter v(xcp::XcpParams{}, 1);
  v.spare().set_capacity_for_upstream(kMbps30);
  xcp::XcpHeader h;
  h.cwnd_bytes = 60000;
  h.rtt_us = 40000;
  for (int i = 0; i < 10; ++i) v.on_arrival(h, 1500);
  v.on_timeout(0.05, 0);
  xcp::XcpHeader low = h;
  low.feedback_bytes = -500;  // an earlier hop asked for less: V leaves it
  EXPECT_FALSE(v.on_departure(low, 1500));
  EXPECT_EQ(low.feedback_bytes, -500);
  xcp::XcpHeader no_rtt = h;
  no_rtt.rtt_us = 0;
  no_rtt.feedback_bytes = 9999;
  EXPECT_TRUE(v.on_departure(no_rtt, 1500));
  EXPECT_EQ(no_rtt.feedback_bytes, 0);
}

// --- Q from the cloud's one-way delay ---------------------------------------

TEST(CloudDelay, QueueDelayIsIntervalMinimumAboveTheFloorAcrossClockWrap) {
  CloudDelay d;
  // Sender clock near the 32-bit wrap, offset arbitrary: only differences count.
  const uint32_t ts0 = 0xFFFFFF00u;
  d.on_sample(ts0, 5000);           // owd + offset
  d.on_sample(ts0 + 1000, 6000);    // same delay
  EXPECT_DOUBLE_EQ(d.close_interval(), 0.0);
  d.on_sample(ts0 + 2000, 7000 + 3000);  // 3 ms of queue
  d.on_sample(ts0 + 3000, 8000 + 2000);  // 2 ms: the interval's minimum
  EXPECT_NEAR(d.close_interval(), 0.002, 1e-9);
  EXPECT_NEAR(d.close_interval(), 0.002, 1e-9);  // no sample: the last value holds
}

// --- the duty: detection, the estimation session, V on the packet ----------

TEST(ReceiverXcpi, PacketsWithoutACloudAreLeftAlone) {
  RecordingWriter w;
  ReceiverXcpi r(config_30mbps(), w);
  auto p = data_packet(61, kU, 5000);
  EXPECT_FALSE(r.on_packet(kSender, 61, p, 20, at_ms(0)));  // xcp_ttl == IP TTL: XCP-i all the way
  EXPECT_EQ(r.entries(), 0u);
  EXPECT_EQ(r.counters().clouds_detected, 0u);
  EXPECT_TRUE(w.sent.empty());
  EXPECT_EQ(feedback_of(p), 5000);
}

TEST(ReceiverXcpi, RequestsUAndRunsVOnceUAcknowledged) {
  RecordingWriter w;
  ReceiverXcpi r(config_30mbps(), w);
  auto p = data_packet(63, kU, 1 << 30, wire_timestamp_us(at_ms(0)) - 5000);
  EXPECT_FALSE(r.on_packet(kSender, 61, p, 20, at_ms(0)));
  EXPECT_EQ(r.counters().clouds_detected, 1u);
  ASSERT_EQ(w.sent.size(), 1u);
  EXPECT_EQ(w.sent[0].first, kU);  // the request goes to last_xcp_router
  const auto req = w.control(0);
  ASSERT_TRUE(req);
  EXPECT_EQ(req->type, xcp::ControlType::kRequest);
  EXPECT_EQ(req->aux, 0u);  // acknowledge only: no chirps
  EXPECT_EQ(feedback_of(p), 1 << 30);  // no estimate yet: V stays out
  EXPECT_EQ(r.counters().no_estimate, 1u);

  auto ack = ack_for(*req);
  EXPECT_TRUE(r.on_packet(kU, 60, ack, 20, at_ms(30)));  // consumed
  EXPECT_EQ(r.entry(kU)->session.state(), xcp::EstimationSession::State::kEstablished);
  auto stranger = ack_for({xcp::ControlType::kRequest, req->session + 1, 1, 0, 0});
  EXPECT_FALSE(r.on_packet(kU, 60, stranger, 20, at_ms(31)));  // not ours: the endpoint counts it

  // 20.3 Mb/s from U for 0.8 s, no queue in the cloud (constant one-way
  // delay): V's S = C - y > 0, so it hands out alpha*S bytes of window per
  // second (phi = alpha*d*S per interval d, h = 0 since |phi| > gamma*y*d),
  // far less than the sender's request, and never negative feedback.
  Timestamp t = at_ms(40);
  double granted = 0;
  int lowered = 0;
  const Timestamp steady = at_ms(300);
  for (int i = 0; i < 1350; ++i) {
    r.advance(t);
    auto d = data_packet(63, kU, 1 << 30, wire_timestamp_us(t) - 5000);
    r.on_packet(kSender, 61, d, 20, t);
    if (feedback_of(d) < (1 << 30)) ++lowered;
    if (t >= steady) {
      EXPECT_GE(feedback_of(d), 0);
      granted += feedback_of(d);
    }
    t += Duration::microseconds(592);  // 1500 B at 20.27 Mb/s
  }
  EXPECT_EQ(r.counters().lowered, static_cast<uint64_t>(lowered));
  EXPECT_GT(lowered, 1300);
  const auto& st = r.entry(kU)->v.state();
  const double y = 1500 / 592e-6;
  EXPECT_NEAR(st.y, y, 0.03 * y);
  EXPECT_NEAR(st.spare, kMbps30 - st.y, 1e-6);
  EXPECT_NEAR(st.d, 0.04, 1e-9);
  EXPECT_DOUBLE_EQ(st.q, 0.0);
  const nlohmann::json rep = r.report();
  EXPECT_EQ(rep["lowered"], r.counters().lowered);
  EXPECT_EQ(rep["upstreams"]["10.0.1.1"]["state"], "established");
  EXPECT_EQ(rep["upstreams"]["10.0.1.1"]["acks"], 1);
  EXPECT_NEAR(granted, 0.4 * (kMbps30 - y) * (t - steady).seconds_f(), 0.1 * 0.4 * (kMbps30 - y) * 0.5);
}

TEST(ReceiverXcpi, AStandingQueueInTheCloudTurnsVsFeedbackNegative) {
  RecordingWriter w;
  ReceiverXcpi r(config_30mbps(), w);
  auto p = data_packet(63, kU, 0, 0);
  r.on_packet(kSender, 61, p, 20, at_ms(0));
  auto ack = ack_for(*w.control(0));
  r.on_packet(kU, 60, ack, 20, at_ms(10));
  // The cloud's bottleneck delivers at C (y = C, S = 0) and its queue grows by
  // 0.1 ms per packet: V sees the delay, Q = delay * C, phi = -beta*Q < 0.
  Timestamp t = at_ms(20);
  int negative = 0;
  for (int i = 0; i < 1000; ++i) {
    r.advance(t);
    const uint32_t sent = wire_timestamp_us(t) - 5000 - static_cast<uint32_t>(i) * 100;
    auto d = data_packet(63, kU, 1 << 30, sent);
    r.on_packet(kSender, 61, d, 20, t);
    if (t > at_ms(200) && feedback_of(d) < 0) ++negative;
    t += Duration::microseconds(400);  // 1500 B at 30 Mb/s
  }
  const auto& st = r.entry(kU)->v.state();
  EXPECT_GT(st.q, 0.0);
  EXPECT_LT(st.phi, 0.0);
  EXPECT_GT(negative, 500);
}

TEST(ReceiverXcpi, ThreeUnansweredRequestsBreakThePathUntilAPacketAfterTheHoldoff) {
  RecordingWriter w;
  ReceiverXcpi r(config_30mbps(), w);
  auto p = data_packet(63, kU, 1 << 30);
  r.on_packet(kSender, 61, p, 20, at_ms(0));
  for (double ms : {200.0, 400.0, 600.0}) r.advance(at_ms(ms));
  EXPECT_EQ(r.counters().requests, 3u);  // first attempt + 2 retries
  EXPECT_EQ(r.counters().timeouts, 3u);
  EXPECT_EQ(r.counters().broken, 1u);
  EXPECT_EQ(r.entry(kU)->session.state(), xcp::EstimationSession::State::kBroken);
  auto q = data_packet(63, kU, 1 << 30);
  r.on_packet(kSender, 61, q, 20, at_ms(700));  // within the hold-off: no request, no V
  EXPECT_EQ(r.counters().requests, 3u);
  EXPECT_EQ(feedback_of(q), 1 << 30);
  auto late = data_packet(63, kU, 1 << 30);
  r.on_packet(kSender, 61, late, 20, at_ms(1601));
  EXPECT_EQ(r.counters().requests, 4u);  // a packet from U after the hold-off retries
}

TEST(ReceiverXcpi, IdleEntriesExpireAndTheTableIsBounded) {
  RecordingWriter w;
  ReceiverXcpiConfig c = config_30mbps();
  c.max_upstreams = 2;
  ReceiverXcpi r(c, w);
  for (uint32_t u = 1; u <= 3; ++u) {
    auto p = data_packet(63, kU + u, 0);
    r.on_packet(kSender, 61, p, 20, at_ms(0));
  }
  EXPECT_EQ(r.entries(), 2u);
  EXPECT_EQ(r.counters().table_full, 1u);
  for (double ms = 100; ms <= 5000; ms += 100) r.advance(at_ms(ms));
  EXPECT_EQ(r.entries(), 0u);
  EXPECT_EQ(r.counters().expired, 2u);
  EXPECT_EQ(r.next_deadline(), Timestamp::max());
}

// --- the chirp estimator at the receiver (receiver as R of the probing) -----

ReceiverXcpiConfig config_chirp_80mbps() {
  ReceiverXcpiConfig c;
  c.estimator = ReceiverEstimator::kChirp;
  c.chirp_high_rate = xcp::Rate::from_bits_per_s(80e6);
  return c;
}

// U's chirps as they reach us across a FIFO link of `rate` (10 ms one way,
// no cross traffic): one probe of `bytes` on the wire leaves the link P/C
// after the later of its send time and the previous probe's departure.
struct ChirpPath {
  xcp::ChirpSchedule schedule;
  double rate_bps;
  Timestamp link_free = Timestamp::zero();
  // Feeds chirp `id` sent from `start` (U's clock = ours + 7 s: offsets cancel)
  // to `r`; returns the last arrival.
  Timestamp send(ReceiverXcpi& r, uint32_t session, uint32_t id, Timestamp start) {
    const uint32_t bytes = schedule.config().packet_bytes;
    const Duration serial = Duration::nanoseconds(static_cast<int64_t>(bytes * 8 / rate_bps * 1e9));
    Timestamp arrival{};
    for (uint32_t k = 0; k < schedule.packets(); ++k) {
      const Timestamp sent = start + schedule.offsets()[k];
      link_free = std::max(link_free, sent) + serial;
      arrival = link_free + Duration::milliseconds(10);
      std::vector<uint8_t> b(bytes - 20);
      const xcp::ControlMessage m{xcp::ControlType::kProbe, session, id,
                                  xcp::ControlMessage::probe_aux(static_cast<uint16_t>(k),
                                                                 static_cast<uint16_t>(schedule.packets())),
                                  static_cast<uint64_t>((sent + Duration::seconds(7.0)).ns())};
      xcp::write_control(m, b);
      // The loop's clock runs late (a batch): the kernel stamp is what counts.
      EXPECT_TRUE(r.on_packet(kU, 60, b, 20, arrival + Duration::milliseconds(3), arrival));
    }
    return arrival;
  }
};

TEST(ReceiverXcpi, ChirpEstimatorAsksUForChirpsAndTakesCapacityFromThem) {
  RecordingWriter w;
  ReceiverXcpi r(config_chirp_80mbps(), w);
  auto p = data_packet(63, kU, 1 << 30);
  r.on_packet(kSender, 61, p, 20, at_ms(0));
  const auto req = w.control(0);
  ASSERT_TRUE(req);
  EXPECT_EQ(req->aux, 8u);                        // chirps per request
  EXPECT_EQ(req->value, static_cast<uint64_t>(80e6));  // H: U probes up to our access link
  auto ack = ack_for(*req);
  EXPECT_TRUE(r.on_packet(kU, 60, ack, 20, at_ms(20)));
  auto before = data_packet(63, kU, 1 << 30);
  r.on_packet(kSender, 61, before, 20, at_ms(25));
  EXPECT_EQ(feedback_of(before), 1 << 30);  // acknowledged, but no chirp yet: V stays out
  EXPECT_EQ(r.counters().no_estimate, 2u);

  // The cloud's tight link: 30 Mb/s, idle. Chirps every period (100 ms at
  // 80 Mb/s and 2 %), ids as U numbers them (request seq x 1000 + k).
  ChirpPath path{xcp::ChirpSchedule(xcp::ChirpConfig{}.for_rate(xcp::Rate::from_bits_per_s(80e6), 0.02)), 30e6};
  const Duration period = path.schedule.config().chirp_period;
  EXPECT_NEAR(period.seconds_f(), 0.100, 0.001);  // 20 probes x 1000 B at 2 % of 80 Mb/s
  Timestamp start = at_ms(30);
  Timestamp last{};
  for (uint32_t k = 0; k < 2; ++k, start += period) last = path.send(r, req->session, req->seq * 1000 + k, start);
  EXPECT_EQ(r.counters().estimates, 0u);  // two chirps: min_chirps is 3
  for (uint32_t k = 2; k < 8; ++k, start += period) last = path.send(r, req->session, req->seq * 1000 + k, start);
  EXPECT_EQ(r.counters().probes, 8u * path.schedule.packets());
  EXPECT_EQ(r.counters().probe_bytes, 8u * path.schedule.packets() * 1000u);
  EXPECT_EQ(r.counters().estimates, 6u);  // one per chirp from the third on
  const auto* e = r.entry(kU);
  ASSERT_TRUE(e->estimate_at);
  // A = 30 Mb/s (y = 0: no V interval ran with data): within one grid step.
  EXPECT_NEAR(e->estimate_bps, 30e6, 0.2 * 30e6);
  EXPECT_NEAR(e->v.spare().capacity_for_upstream() * 8, 30e6, 0.2 * 30e6);
  const nlohmann::json rep = r.report();
  EXPECT_EQ(rep["estimator"], "chirp");
  EXPECT_EQ(rep["upstreams"]["10.0.1.1"]["chirps"], 8);
  EXPECT_NEAR(rep["upstreams"]["10.0.1.1"]["estimate_bps"].get<double>(), e->estimate_bps, 1e-6);

  // With the estimate, V lowers the sender's request (S = C_U - y > 0 but far
  // below 2^30 bytes of window).
  Timestamp t = last + Duration::milliseconds(1);
  int lowered = 0;
  for (int i = 0; i < 200; ++i, t += Duration::microseconds(592)) {
    r.advance(t);
    auto d = data_packet(63, kU, 1 << 30);
    r.on_packet(kSender, 61, d, 20, t);
    if (feedback_of(d) < (1 << 30)) ++lowered;
  }
  EXPECT_EQ(lowered, 200);
  // A probe naming no session of ours is consumed and counted.
  std::vector<uint8_t> stray(980);
  xcp::write_control({xcp::ControlType::kProbe, req->session + 1, 5, xcp::ControlMessage::probe_aux(0, 21), 0}, stray);
  EXPECT_TRUE(r.on_packet(kU, 60, stray, 20, t));
  EXPECT_EQ(r.counters().probes_unknown, 1u);
  // No chirp for longer than estimate_max_age (3 s): V stands aside again.
  const Timestamp stale = *e->estimate_at + Duration::seconds(3.1);
  auto late = data_packet(63, kU, 1 << 30);
  const uint64_t no_est = r.counters().no_estimate;
  r.on_packet(kSender, 61, late, 20, stale);
  EXPECT_EQ(feedback_of(late), 1 << 30);
  EXPECT_EQ(r.counters().no_estimate, no_est + 1);
}

TEST(ReceiverXcpi, ChirpEstimatorReadsTheCrossTrafficsShareAsLessCapacity) {
  // The same cloud link with 20 of its 30 Mb/s taken by CBR cross traffic
  // (1000-byte packets, FIFO with the probes): A = 10 Mb/s.
  RecordingWriter w;
  ReceiverXcpi r(config_chirp_80mbps(), w);
  auto p = data_packet(63, kU, 1 << 30);
  r.on_packet(kSender, 61, p, 20, at_ms(0));
  const auto req = *w.control(0);
  auto ack = ack_for(req);
  r.on_packet(kU, 60, ack, 20, at_ms(20));
  const xcp::ChirpConfig cfg = xcp::ChirpConfig{}.for_rate(xcp::Rate::from_bits_per_s(80e6), 0.02);
  const xcp::ChirpSchedule sched(cfg);
  const Duration serial = Duration::nanoseconds(static_cast<int64_t>(1000 * 8 / 30e6 * 1e9));
  const Duration cross_gap = Duration::microseconds(400);  // 1000 B every 400 us = 20 Mb/s
  Timestamp link_free = Timestamp::zero();
  Timestamp next_cross = at_ms(0);
  for (uint32_t k = 0; k < 11; ++k) {
    const Timestamp start = at_ms(30) + cfg.chirp_period * static_cast<int64_t>(k);
    for (uint32_t i = 0; i < sched.packets(); ++i) {
      const Timestamp sent = start + sched.offsets()[i];
      while (next_cross <= sent) {  // cross packets ahead of the probe
        link_free = std::max(link_free, next_cross) + serial;
        next_cross += cross_gap;
      }
      link_free = std::max(link_free, sent) + serial;
      const Timestamp arrival = link_free + Duration::milliseconds(10);
      std::vector<uint8_t> b(980);
      xcp::write_control({xcp::ControlType::kProbe, req.session, req.seq * 1000 + k,
                          xcp::ControlMessage::probe_aux(static_cast<uint16_t>(i), static_cast<uint16_t>(sched.packets())),
                          static_cast<uint64_t>(sent.ns())},
                         b);
      r.on_packet(kU, 60, b, 20, arrival, arrival);
    }
  }
  const auto* e = r.entry(kU);
  ASSERT_TRUE(e->estimate_at);
  // XCPI_ESTIMATOR.md's bounds: median error <= 0.12 C, here of the 30 Mb/s link.
  EXPECT_NEAR(e->estimate_bps, 10e6, 0.12 * 30e6);
}

TEST(ReceiverXcpi, AnEstimatorWithoutItsRateIsRefused) {
  RecordingWriter w;
  EXPECT_THROW(ReceiverXcpi(ReceiverXcpiConfig{}, w), std::invalid_argument);  // capacity 0
  ReceiverXcpiConfig c;
  c.estimator = ReceiverEstimator::kChirp;
  EXPECT_THROW(ReceiverXcpi(c, w), std::invalid_argument);  // H 0
  c.chirp_high_rate = xcp::Rate::from_bits_per_s(80e6);
  c.chirps_per_request = 0;
  EXPECT_THROW(ReceiverXcpi(c, w), std::invalid_argument);
}

// --- closed loop: a real XCP sender over a drop-tail cloud ------------------

struct LoopResult {
  double goodput_bps = 0;  // receiver's in-order bytes over [1 s, 4 s]
  uint64_t queue_drops = 0;      // over [1 s, 4 s]
  uint64_t all_queue_drops = 0;  // over the whole run
  uint64_t timeouts = 0;
  uint64_t lowered = 0;
};

// A -> B over a 30 Mb/s drop-tail bottleneck (1 BDP of buffer, RTT 40 ms) and
// no XCP router: the sender is the last XCP-i point (U = A, which answers
// requests: the sender duty), the whole path is the cloud. With `receiver_v`
// B runs V(A); without it nobody lowers the sender's request.
LoopResult run_loop(bool receiver_v) {
  test::PathConfig fwd;
  fwd.rate = xcp::Rate::from_megabits_per_s(30);
  fwd.delay = Duration::milliseconds(20);
  fwd.queue_packets = 100;  // 30 Mb/s x 40 ms = 100 packets of 1500 B
  test::PathConfig rev = fwd;
  test::SimNetwork net(fwd, rev, 11);
  ReceiverXcpi v(config_30mbps(), net.b_to_a());
  if (receiver_v) {
    // Two non-XCP routers decremented the IP TTL the sender set with xcp_ttl.
    net.set_b_stage({[&](uint32_t src, std::span<uint8_t> b, Timestamp now) { return v.on_packet(src, 62, b, 20, now); },
                     [&](Timestamp now) { v.advance(now); }, [&] { return v.next_deadline(); }});
  }
  ConnectionConfig cfg;
  cfg.cc = CcKind::kXcp;
  cfg.xcpi_ip_ttl = 64;
  cfg.xcpi_sender_ipv4 = test::SimNetwork::kAddrA;
  cfg.mss_bytes = cfg.mtu_payload_bytes();
  cfg.send_buffer_bytes = 4 << 20;
  test::PatternReceiver rx;
  net.b().listen(5001, cfg, [&](Connection&) { return &rx; });
  test::PatternSender tx(1ull << 40);
  Connection& c = net.a().connect({test::SimNetwork::kAddrB, 40000, 5001}, cfg, &tx, net.now());
  net.run_until([] { return false; }, Duration::seconds(1));
  const uint64_t from = rx.received;
  const uint64_t drops_from = net.a_to_b().dropped_queue;
  net.run_until([] { return false; }, Duration::seconds(3));
  LoopResult r;
  r.goodput_bps = static_cast<double>(rx.received - from) * 8 / 3.0;
  r.queue_drops = net.a_to_b().dropped_queue - drops_from;
  r.all_queue_drops = net.a_to_b().dropped_queue;
  r.timeouts = c.stats().timeouts;
  r.lowered = v.counters().lowered;
  EXPECT_FALSE(rx.mismatch);
  std::cout << (receiver_v ? "with" : "without") << " receiver V: goodput " << r.goodput_bps / 1e6
            << " Mb/s, queue drops " << r.queue_drops << " (all " << net.a_to_b().dropped_queue << "), timeouts "
            << r.timeouts << ", V lowered " << r.lowered << ", requests " << v.counters().requests << ", acks "
            << v.counters().acks << "\n";
  return r;
}

TEST(ReceiverXcpiLoop, WithoutReceiverVTheSenderOverflowsTheCloud) {
  const LoopResult r = run_loop(false);
  // Nothing lowers the sender's request: the window explodes in the first
  // RTTs, the drop-tail queue overflows and the flow never recovers.
  EXPECT_GT(r.all_queue_drops, 1000u);
  EXPECT_EQ(r.lowered, 0u);
  EXPECT_LT(r.goodput_bps, 0.5 * 30e6);
}

TEST(ReceiverXcpiLoop, WithReceiverVTheBottleneckStaysBusyWithoutDrops) {
  const LoopResult r = run_loop(true);
  EXPECT_EQ(r.all_queue_drops, 0u);
  EXPECT_EQ(r.timeouts, 0u);
  EXPECT_GT(r.lowered, 0u);
  // Payload is at most 1424/1500 of the wire (shim with the I block and the
  // transport header); 0.9 of that leaves room for XCP's small steady queue.
  EXPECT_GE(r.goodput_bps, 0.9 * 30e6 * 1424 / 1500);
  EXPECT_LE(r.goodput_bps, 30e6);
}

}  // namespace
}  // namespace xcphost
