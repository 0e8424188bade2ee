// XcpQdisc: timers, persistent queue over the Tq window, y counting drops,
// capacity override and live configuration. Time is explicit timestamps.
#include "qdisc/xcp_qdisc.hh"

#include <climits>
#include <stdexcept>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "qdisc_test_util.hh"

namespace xcprouter {
namespace {

using testutil::make_packet;
using testutil::make_xcp_packet;
using xcp::Duration;
using xcp::Timestamp;

Timestamp at_ms(double ms) { return Timestamp::from_ns(static_cast<int64_t>(ms * 1e6)); }

TEST(XcpQdisc, TimersStartWithFirstPacket) {
  XcpQdisc q({.packets = 100, .bytes = 0}, XcpParams{}, 1);
  q.set_capacity(xcp::Rate::from_bytes_per_s(1e6));
  EXPECT_FALSE(q.next_deadline().has_value());
  ASSERT_TRUE(q.enqueue(make_packet(1000), at_ms(10)));
  ASSERT_NE(q.dequeue(at_ms(10)), nullptr);
  // Control timer at the 50 ms fallback d, queue window Tq = max(2 ms,
  // (d − q/C)/2) = 25 ms (queue empty when the timers started).
  ASSERT_TRUE(q.next_deadline().has_value());
  EXPECT_EQ(*q.next_deadline(), at_ms(35));
  q.on_deadline(at_ms(35));
  EXPECT_EQ(*q.next_deadline(), at_ms(60));
  q.on_deadline(at_ms(60));
  EXPECT_EQ(q.controller().counters().intervals, 1u);
  // y over the first 50 ms: 1000 B.
  EXPECT_NEAR(q.controller().state().y, 1000 / 0.05, 1e-6);
}

TEST(XcpQdisc, ArrivalsDroppedByTheBufferStillCountInY) {
  XcpQdisc q({.packets = 2, .bytes = 0}, XcpParams{}, 1);
  q.set_capacity(xcp::Rate::from_bytes_per_s(1e6));
  for (int i = 0; i < 5; ++i) q.enqueue(make_xcp_packet(1000, 10000, 100000, INT32_MAX), at_ms(0));
  EXPECT_EQ(q.counters().drops_overflow, 3u);
  EXPECT_DOUBLE_EQ(q.controller().sums().y_bytes, 5000);
}

TEST(XcpQdisc, StandingQueueIsPersistentBurstIsNot) {
  XcpQdisc q({.packets = 0, .bytes = 0}, XcpParams{}, 1);
  q.set_capacity(xcp::Rate::from_bytes_per_s(1e6));  // 1 ms per 1000 B packet
  // A burst of 20 packets that drains completely within the 25 ms window.
  for (int i = 0; i < 20; ++i) q.enqueue(make_packet(1000), at_ms(0));
  for (int i = 1; i <= 20; ++i) q.dequeue(at_ms(i));
  q.on_deadline(at_ms(25));
  EXPECT_DOUBLE_EQ(q.persistent_queue(), 0);
  // Now a standing queue: 10 packets stay queued, one in one out.
  for (int i = 0; i < 10; ++i) q.enqueue(make_packet(1000), at_ms(25));
  const Timestamp end = *q.next_deadline();
  for (Timestamp t = at_ms(26); t < end; t += Duration::milliseconds(1)) {
    q.enqueue(make_packet(1000), t);
    q.dequeue(t);
  }
  q.on_deadline(end);
  EXPECT_DOUBLE_EQ(q.persistent_queue(), 10000);  // 10 left behind at every departure
}

TEST(XcpQdisc, CapacityOverrideDecouplesXcpCapacity) {
  XcpQdisc q({}, XcpParams{}, 1);
  q.set_capacity(xcp::Rate::from_megabits_per_s(10));
  EXPECT_DOUBLE_EQ(q.xcp_capacity(), 1.25e6);
  q.configure({{"capacity_bps", 12e6}});
  EXPECT_DOUBLE_EQ(q.xcp_capacity(), 1.5e6);
  q.set_capacity(xcp::Rate::from_megabits_per_s(20));  // link changes, override stays
  EXPECT_DOUBLE_EQ(q.xcp_capacity(), 1.5e6);
  q.configure({{"capacity_bps", 0}});  // back to the link rate
  EXPECT_DOUBLE_EQ(q.xcp_capacity(), 2.5e6);
}

TEST(XcpQdisc, ConfigureValidatesAsAWhole) {
  XcpQdisc q({}, XcpParams{}, 1);
  q.configure({{"alpha", 0.3}, {"beta", 0.1}, {"gamma", 0.05}});
  EXPECT_DOUBLE_EQ(q.controller().params().alpha, 0.3);
  try {
    q.configure({{"alpha", 0.5}, {"gama", 0.1}});
    FAIL() << "unknown param accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("queue.params.gama"), std::string::npos) << e.what();
  }
  EXPECT_DOUBLE_EQ(q.controller().params().alpha, 0.3);  // nothing applied
  EXPECT_THROW(q.configure({{"gamma", 2.0}}), std::invalid_argument);
  EXPECT_THROW(q.configure({{"alpha", "big"}}), std::invalid_argument);
  EXPECT_THROW(q.configure({{"min_interval_s", 2.0}, {"max_interval_s", 1.0}}), std::invalid_argument);
}

TEST(XcpQdisc, ReportCarriesXcpState) {
  XcpQdisc q({}, XcpParams{}, 1);
  q.set_capacity(xcp::Rate::from_bytes_per_s(1e6));
  nlohmann::json out;
  q.report(out);
  ASSERT_TRUE(out.contains("xcp"));
  for (const char* k : {"d", "phi", "h", "y", "Q", "xi_p", "xi_n", "R_pos", "R_neg", "SA", "C", "Tq"}) {
    EXPECT_TRUE(out["xcp"].contains(k)) << k;
  }
  EXPECT_DOUBLE_EQ(out["xcp"]["C"].get<double>(), 1e6);
}

TEST(XcpQdisc, DepartingPacketCarriesFeedback) {
  XcpQdisc q({}, XcpParams{}, 1);
  q.set_capacity(xcp::Rate::from_bytes_per_s(12.5e6));
  // One interval of 10 MB/s of the §2 test-vector traffic, then departures.
  q.enqueue(make_xcp_packet(1000, 100000, 100000, INT32_MAX), at_ms(0));
  q.dequeue(at_ms(0));
  for (int i = 1; i < 500; ++i) {
    q.enqueue(make_xcp_packet(1000, 100000, 100000, INT32_MAX), at_ms(0.1 * i));
    q.dequeue(at_ms(0.1 * i));
  }
  while (q.next_deadline() && *q.next_deadline() <= at_ms(50)) q.on_deadline(*q.next_deadline());
  ASSERT_EQ(q.controller().counters().intervals, 1u);
  EXPECT_NEAR(q.controller().state().y, 10e6, 1.0);
  q.enqueue(make_xcp_packet(1000, 100000, 100000, INT32_MAX), at_ms(50));
  auto p = q.dequeue(at_ms(50));
  ASSERT_NE(p, nullptr);
  EXPECT_GT(testutil::wire_feedback(*p), 0);
  EXPECT_LT(testutil::wire_feedback(*p), INT32_MAX);
}

// A stage as XCP-i / the fairness dropper will plug in: sees every arrival
// (and can drop), runs before and after the port's feedback, and after each
// timeout with the port's state.
class RecordingStage final : public XcpStage {
 public:
  explicit RecordingStage(std::vector<std::string>& log) : log_(log) {}
  bool on_arrival(Packet& p, Timestamp) override {
    log_.push_back("arrival");
    return p.wire_bytes() != 666;  // drops one marked size
  }
  void before_feedback(Packet& p, Timestamp) override {
    log_.push_back("before:" + std::to_string(p.xcp.feedback_bytes));
    // Like an XCP-i virtual router: lower H_feedback before the port runs.
    xcp::store_feedback(p.xcp_shim(), -7);
    p.xcp.feedback_bytes = -7;
  }
  void after_feedback(Packet& p, Timestamp) override {
    log_.push_back("after:" + std::to_string(testutil::wire_feedback(p)));
  }
  void on_timeout(const IntervalState& port, double elapsed_s) override {
    log_.push_back("timeout d=" + std::to_string(port.d) + " T=" + std::to_string(elapsed_s));
  }

 private:
  std::vector<std::string>& log_;
};

TEST(XcpQdisc, StagesSeeArrivalsFeedbackAndTimeouts) {
  std::vector<std::string> log;
  XcpQdisc q({}, XcpParams{}, 1);
  q.set_capacity(xcp::Rate::from_bytes_per_s(1e6));
  q.add_stage(std::make_unique<RecordingStage>(log));
  EXPECT_FALSE(q.enqueue(make_xcp_packet(666, 10000, 100000, INT32_MAX), at_ms(0)));
  EXPECT_EQ(q.counters().drops_fairness, 1u);
  EXPECT_DOUBLE_EQ(q.controller().sums().y_bytes, 666);  // still input traffic
  ASSERT_TRUE(q.enqueue(make_xcp_packet(1000, 10000, 100000, INT32_MAX), at_ms(0)));
  auto p = q.dequeue(at_ms(1));
  // The port's own fb (0 before any timeout) is above the stage's −7: kept.
  EXPECT_EQ(testutil::wire_feedback(*p), -7);
  q.on_deadline(at_ms(50));
  const std::vector<std::string> want = {"arrival", "arrival", "before:2147483647", "after:-7",
                                         "timeout d=0.100000 T=0.050000"};  // d = SB/SA = the packet's 100 ms
  EXPECT_EQ(log, want);
  nlohmann::json out;
  q.report(out);
  EXPECT_TRUE(out.contains("xcp"));
}

}  // namespace
}  // namespace xcprouter

namespace xcprouter {
namespace {

// The engine refuses what `xcplab validate` refuses: a control timer under
// 1 ms would keep a real-time engine spinning (issue 14, one set of bounds).
TEST(XcpQdiscBounds, TimersUnderOneMillisecondAreRefused) {
  XcpQdisc q(QueueLimit{100, 0}, XcpParams{}, 1);
  EXPECT_THROW(q.configure({{"min_interval_s", 1e-6}}), std::invalid_argument);
  EXPECT_THROW(q.configure({{"fallback_interval_s", 0.0005}}), std::invalid_argument);
  EXPECT_NO_THROW(q.configure({{"min_interval_s", 0.001}}));
}

}  // namespace
}  // namespace xcprouter
