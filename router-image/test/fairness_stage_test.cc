// FairnessStage inside an XcpQdisc (params tcp_fairness, fairness_*):
// classification, estimates, p_drop driven by an injected clock at 1 Gb/s,
// drops counted as kFairness, the report, and the params parser.
#include "fairness/fairness_stage.hh"

#include <stdexcept>

#include <gtest/gtest.h>

#include "qdisc/qdisc_factory.hh"
#include "qdisc/xcp_qdisc.hh"
#include "qdisc_test_util.hh"
#include "xcp/uniform_rng.hh"

namespace xcprouter {
namespace {

using testutil::make_packet;
using testutil::make_xcp_packet;
using xcp::Timestamp;

constexpr double kC = 125e6;  // 1 Gb/s in bytes/s
constexpr uint32_t kPkt = 1500;

FlowKey key(uint32_t i, uint8_t proto) {
  return FlowKey{.src = 0x0a000001 + i, .dst = 0x0a010001, .sport = static_cast<uint16_t>(5000 + i),
                 .dport = 5201, .proto = proto};
}
PacketPtr xcp_data(uint32_t flow) {
  auto p = make_xcp_packet(kPkt, 200'000, 20'000, INT32_MAX);
  p->flow = key(flow, 253);
  return p;
}
PacketPtr kernel_tcp(uint32_t flow) {
  auto p = make_packet(kPkt);
  p->flow = key(100 + flow, 6);
  return p;
}

std::unique_ptr<XcpQdisc> fair_queue(nlohmann::json extra = nlohmann::json::object()) {
  nlohmann::json params = {{"tcp_fairness", true}};
  params.update(extra);
  auto q = std::make_unique<XcpQdisc>(QueueLimit{}, XcpParams{}, 1);
  q->set_capacity(xcp::Rate::from_bytes_per_s(kC));
  q->configure(params);
  return q;
}

// Offers `seconds` of traffic at `load`·C (1500 B packets, 10 XCP + 3 kernel
// TCP flows, a TCP packet with probability `tcp_fraction`), dequeuing at once;
// timers run on the same injected clock. Returns the end time.
double offer(XcpQdisc& q, double t0, double seconds, double tcp_fraction, UniformRng& pick,
             double load = 1.0) {
  const double gap = kPkt / (load * kC);
  double t = t0;
  for (; t < t0 + seconds; t += gap) {
    const Timestamp now = Timestamp::from_ns(static_cast<int64_t>(t * 1e9));
    while (q.next_deadline() && *q.next_deadline() <= now) q.on_deadline(*q.next_deadline());
    const bool tcp = pick.next() < tcp_fraction;
    const auto f = static_cast<uint32_t>(pick.next() * (tcp ? 3 : 10));
    q.enqueue(tcp ? kernel_tcp(f) : xcp_data(f), now);
    while (q.dequeue(now)) {
    }
  }
  return t;
}

TEST(FairnessStage, ClassifiesPackets) {
  EXPECT_EQ(classify(*xcp_data(0)), FlowClass::kXcp);
  EXPECT_EQ(classify(*kernel_tcp(0)), FlowClass::kTcp);
  // Userspace NewReno/HSTCP: a Standard shim with H_cwnd = 0.
  EXPECT_EQ(classify(*make_xcp_packet(kPkt, 0, 0, 0)), FlowClass::kTcp);
  EXPECT_EQ(classify(*make_xcp_packet(80, 0, 0, 0, xcp::Format::kMinimal)), FlowClass::kOther);
  // An XCP sender before its first RTT sample is still XCP.
  EXPECT_EQ(classify(*make_xcp_packet(kPkt, 1500, 0, INT32_MAX)), FlowClass::kXcp);
  auto udp = make_packet(kPkt);
  udp->flow.proto = 17;
  EXPECT_EQ(classify(*udp), FlowClass::kOther);
}

TEST(FairnessStage, OffByDefaultOnWhenAsked) {
  XcpQdisc q(QueueLimit{}, XcpParams{}, 1);
  EXPECT_EQ(q.fairness(), nullptr);
  q.configure({{"tcp_fairness", true}, {"fairness_inspect", 0.5}});
  ASSERT_NE(q.fairness(), nullptr);
  EXPECT_DOUBLE_EQ(q.fairness()->params().inspect, 0.5);
  EXPECT_DOUBLE_EQ(q.fairness()->params().replacement_probability(), 0.5);
  q.configure({{"fairness_p_drop_start", 0.002}});  // only the given keys change
  EXPECT_DOUBLE_EQ(q.fairness()->params().inspect, 0.5);
  EXPECT_DOUBLE_EQ(q.fairness()->controller().p_drop(), 0.002);
  q.configure({{"tcp_fairness", false}});
  EXPECT_EQ(q.fairness(), nullptr);
}

TEST(FairnessStage, ParamsAreValidated) {
  XcpQdisc q(QueueLimit{}, XcpParams{}, 1);
  EXPECT_THROW(q.configure({{"fairness_bogus", 1}}), std::invalid_argument);
  EXPECT_THROW(q.configure({{"fairness_d_drop", 1.1}}), std::invalid_argument);
  EXPECT_THROW(q.configure({{"fairness_i_drop", 0.9}}), std::invalid_argument);
  EXPECT_THROW(q.configure({{"fairness_zombie_entries", 10.5}}), std::invalid_argument);
  EXPECT_THROW(q.configure({{"fairness_update", "sometimes"}}), std::invalid_argument);
  try {
    q.configure({{"tcp_fairness", true}, {"fairness_inspect", 0}});
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("queue.params.fairness_inspect"), std::string::npos);
  }
  EXPECT_EQ(q.fairness(), nullptr);  // nothing applied from a bad object
  // Both XCP-family kinds of the factory take it.
  for (const char* kind : {"xcp", "xcpi"}) {
    auto made = make_qdisc({{"kind", kind}, {"params", {{"tcp_fairness", true}, {"fairness_update", "interval"}}}}, 1);
    auto* x = dynamic_cast<XcpQdisc*>(made.get());
    ASSERT_NE(x, nullptr);
    ASSERT_NE(x->fairness(), nullptr) << kind;
    EXPECT_EQ(x->fairness()->params().update, FairnessUpdate::kInterval);
  }
}

TEST(FairnessStage, EstimatesBothClassesAndBwXcp) {
  auto q = fair_queue();
  UniformRng pick(5);
  // 10 XCP + 3 TCP flows; per-flow packet rates equal (TCP 3/13 of packets).
  offer(*q, 0, 2.0, 3.0 / 13.0, pick);
  const FairnessStage& f = *q->fairness();
  EXPECT_NEAR(f.xcp_flows(), 10.0, 1.0);
  EXPECT_NEAR(f.tcp_flows(), 3.0, 0.3);
  EXPECT_NEAR(f.bw_xcp() / kC, 10.0 / 13.0, 0.03);
  // XCP has its share: p_drop hovers, no starvation of either class.
  EXPECT_TRUE(f.controller().active());
}

TEST(FairnessStage, PerTcpPacketCadenceMovesPDropTenfoldWithinASecond) {
  auto q = fair_queue();
  UniformRng pick(6);
  // Warm the estimators at a fair mix, then TCP takes 36 % of the packets
  // (XCP at 64 % < its 77 %): p_drop rises by 1.0001 per TCP packet,
  // ~30 000 TCP packets/s at 1 Gb/s.
  double t = offer(*q, 0, 1.0, 3.0 / 13.0, pick);
  const double p0 = q->fairness()->controller().p_drop();
  const double t0 = t;
  while (q->fairness()->controller().p_drop() < 10 * p0 && t < t0 + 5) t = offer(*q, t, 0.01, 0.36, pick);
  EXPECT_NEAR(t - t0, 0.8, 0.15) << "p from " << p0;
  EXPECT_GT(q->counters().drops_fairness, 0u);
  EXPECT_EQ(q->counters().drops_fairness, q->fairness()->counters().drops);
}

TEST(FairnessStage, PerIntervalCadenceBarelyMovesInASecond) {
  auto q = fair_queue({{"fairness_update", "interval"}});
  UniformRng pick(6);
  double t = offer(*q, 0, 1.0, 3.0 / 13.0, pick);
  const double p0 = q->fairness()->controller().p_drop();
  offer(*q, t, 1.0, 0.36, pick);
  // d = 20 ms (H_rtt): ~50 intervals, 1.0001^50 = 1.005.
  EXPECT_LT(q->fairness()->controller().p_drop() / p0, 1.01);
}

TEST(FairnessStage, ResetsBelowTheThresholdAndDropsNothing) {
  auto q = fair_queue();
  UniformRng pick(8);
  double t = offer(*q, 0, 1.0, 0.36, pick);
  EXPECT_TRUE(q->fairness()->controller().active());
  EXPECT_GT(q->fairness()->controller().p_drop(), 0.001);
  const uint64_t drops = q->counters().drops_fairness;
  offer(*q, t, 0.5, 0.36, pick, 0.9);  // input at 90 % of C: not the bottleneck
  EXPECT_FALSE(q->fairness()->controller().active());
  EXPECT_DOUBLE_EQ(q->fairness()->controller().p_drop(), 0.001);
  // At most the packets of the one interval before the first reset.
  EXPECT_LT(q->counters().drops_fairness - drops, 100u);
  EXPECT_GE(q->fairness()->controller().counters().resets, 1u);
}

TEST(FairnessStage, AWindowOfIntervalsRidesOutAShortDip) {
  // 40 ms at 90 % of C (two 20 ms intervals) between busy seconds: measured
  // per interval it resets p_drop; over 200 ms windows the input stays > 97 %.
  for (double window : {0.0, 0.2}) {
    auto q = fair_queue({{"fairness_window_s", window}});
    UniformRng pick(10);
    double t = offer(*q, 0, 1.0, 0.36, pick);
    const uint64_t resets = q->fairness()->controller().counters().resets;
    t = offer(*q, t, 0.04, 0.36, pick, 0.9);
    offer(*q, t, 1.0, 0.36, pick);
    const uint64_t more = q->fairness()->controller().counters().resets - resets;
    if (window == 0) {
      EXPECT_GE(more, 1u);
    } else {
      EXPECT_EQ(more, 0u);
      EXPECT_GT(q->fairness()->controller().p_drop(), 0.01);
    }
  }
}

TEST(FairnessStage, ReportUnderAFairKey) {
  auto q = fair_queue();
  UniformRng pick(9);
  offer(*q, 0, 0.2, 0.3, pick);
  nlohmann::json out;
  q->report(out);
  const auto& f = out.at("xcp").at("tcp_fairness");
  for (const char* k : {"active", "p_drop", "n_xcp", "m_tcp", "bw_xcp", "xcp_rate", "drops", "C"}) {
    EXPECT_TRUE(f.contains(k)) << k;
  }
  EXPECT_TRUE(f.at("active").is_number());
  EXPECT_DOUBLE_EQ(f.at("C").get<double>(), kC);
}

}  // namespace
}  // namespace xcprouter
