// ArrivalClock: kernel receive stamps (CLOCK_REALTIME) onto the monotonic
// timeline, clamped per port; and the property it exists for: an XCP link
// fed by an engine that reads late measures the same input rate y as one
// fed on time.
#include "core/arrival_clock.hh"

#include <climits>
#include <cmath>
#include <memory>
#include <vector>

#include <gtest/gtest.h>

#include "core/link.hh"
#include "engine_test_util.hh"
#include "qdisc/xcp_qdisc.hh"
#include "qdisc_test_util.hh"

namespace xcprouter {
namespace {

using xcp::Duration;
using xcp::Timestamp;

// CLOCK_REALTIME is ~1.7e18 ns; CLOCK_MONOTONIC counts from boot.
constexpr int64_t kRealtimeOffsetNs = 1'700'000'000'000'000'000;

Timestamp ms(double v) { return Timestamp::from_ns(static_cast<int64_t>(std::llround(v * 1e6))); }
Timestamp real(Timestamp mono) { return Timestamp::from_ns(mono.ns() + kRealtimeOffsetNs); }
ClockSample sample_at(Timestamp mono, Duration realtime_step = Duration::zero()) {
  return ClockSample{mono, real(mono) + realtime_step};
}

TEST(ArrivalClock, LateBatchKeepsTheKernelsSpacing) {
  ArrivalClock c;
  // Ten frames 1 ms apart, read in one batch 10 ms after the first.
  const ClockSample s = sample_at(ms(110));
  for (int i = 0; i < 10; ++i) {
    EXPECT_EQ(c.stamp(real(ms(100 + i)), s), ms(100 + i)) << i;
  }
  EXPECT_EQ(c.clamped(), 0u);
}

TEST(ArrivalClock, PeekDoesNotRecord) {
  ArrivalClock c;
  const ClockSample s = sample_at(ms(50));
  EXPECT_EQ(c.peek(real(ms(40)), s), ms(40));
  EXPECT_EQ(c.last(), Timestamp::zero());
  EXPECT_EQ(c.stamp(real(ms(30)), s), ms(30));  // earlier than the peeked one: fine, not recorded
  EXPECT_EQ(c.last(), ms(30));
}

TEST(ArrivalClock, NeverInTheFuture) {
  ArrivalClock c;
  // The wall clock was stepped back 1 s between the kernel's stamp and the
  // sample: the frame would appear to arrive 1 s from now.
  const ClockSample s = sample_at(ms(200), Duration::seconds(-1.0));
  EXPECT_EQ(c.stamp(real(ms(199)), s), ms(200));
  EXPECT_EQ(c.clamped(), 1u);
}

TEST(ArrivalClock, NeverBackwardsOnOnePort) {
  ArrivalClock c;
  EXPECT_EQ(c.stamp(real(ms(100)), sample_at(ms(101))), ms(100));
  // The wall clock was stepped forward 1 s before this sample: a frame
  // stamped before the step converts to 1 s ago, before the last stamp.
  const ClockSample stepped = sample_at(ms(102), Duration::seconds(1.0));
  EXPECT_EQ(c.stamp(real(ms(101)), stepped), ms(100));
  // Frames stamped after the step convert normally again.
  EXPECT_EQ(c.stamp(real(ms(101.5)) + Duration::seconds(1.0), stepped), ms(101.5));
  EXPECT_EQ(c.clamped(), 1u);
}

TEST(ArrivalClock, MonotonicUnderJitteredStampsAndSamples) {
  ArrivalClock c;
  Timestamp prev = Timestamp::zero();
  uint64_t x = 88172645463325252ULL;  // xorshift64, fixed seed
  for (int batch = 0; batch < 200; ++batch) {
    const Timestamp now = ms(10 + batch);
    // Realtime drifts +-0.5 ms between samples (NTP slewing, steps).
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    const ClockSample s = sample_at(now, Duration::microseconds(static_cast<int64_t>(x % 1000) - 500));
    for (int k = 0; k < 8; ++k) {
      x ^= x << 13, x ^= x >> 7, x ^= x << 17;
      const Timestamp kernel = real(now - Duration::microseconds(static_cast<int64_t>(x % 3000)));
      const Timestamp t = c.stamp(kernel, s);
      ASSERT_GE(t, prev);
      ASSERT_LE(t, now);
      prev = t;
    }
  }
}

TEST(ArrivalClock, StampNowStaysMonotonic) {
  ArrivalClock c;
  EXPECT_EQ(c.stamp(real(ms(20)), sample_at(ms(21))), ms(20));
  EXPECT_EQ(c.stamp_now(sample_at(ms(25))), ms(25));
  EXPECT_EQ(c.stamp_now(sample_at(ms(24))), ms(25));
}

// --- the property: y does not depend on when the engine reads -------------

// Records y of every control interval of the port.
class YRecorder final : public XcpStage {
 public:
  explicit YRecorder(std::vector<double>& out) : out_(out) {}
  void on_timeout(const IntervalState& port, double /*elapsed_s*/) override { out_.push_back(port.y); }

 private:
  std::vector<double>& out_;
};

enum class Stamp { kKernel, kRead };

// A 10 Mb/s XCP link fed 1000 B every 1 ms (8 Mb/s, RTT 10 ms so d = 10 ms)
// by an engine that reads every 0.5 ms, except during `stalls` (start,
// length) when it does not run at all. Reads offer what arrived, stamped by
// the ArrivalClock or with the read time, then advance the link — the
// engine's order (Engine::service). Returns y per control interval.
std::vector<double> y_series(Stamp stamp, const std::vector<std::pair<double, double>>& stalls) {
  std::vector<double> y;
  enginetest::CollectingSink sink;
  auto qdisc = std::make_unique<XcpQdisc>(QueueLimit{.packets = 1000, .bytes = 0}, XcpParams{}, 1);
  qdisc->add_stage(std::make_unique<YRecorder>(y));
  Link link(xcp::Rate::from_megabits_per_s(10), Duration::milliseconds(5), std::move(qdisc), LossModel({}, 1),
            sink);
  ArrivalClock port;
  int next_packet = 0;
  for (double now_ms = 0.5; now_ms <= 400.0; now_ms += 0.5) {
    bool stalled = false;
    for (const auto& [start, len] : stalls) stalled = stalled || (now_ms > start && now_ms < start + len);
    if (stalled) continue;
    const Timestamp now = ms(now_ms);
    const ClockSample s = sample_at(now);
    for (; next_packet * 1.0 + 0.3 <= now_ms; ++next_packet) {
      const Timestamp arrived = ms(next_packet * 1.0 + 0.3);
      const Timestamp at = stamp == Stamp::kKernel ? port.stamp(real(arrived), s) : now;
      link.offer(testutil::make_xcp_packet(1000, 12500, 10000, INT32_MAX), at);
    }
    link.advance(now);
  }
  return y;
}

// Stalls of 5 ms (a late timer on a busy machine). Timeouts fall at
// 50.3 + 10k ms: the first, fourth and sixth stall straddle one (missing 3, 2
// and 2 arrivals of its interval when stamped at read time), the others not.
const std::vector<std::pair<double, double>> kStalls = {
    {57.2, 5.0}, {93.9, 5.0}, {131.0, 5.0}, {178.4, 5.0}, {229.7, 5.0}, {318.4, 5.0}};

TEST(ArrivalClockXcp, LateReadsGiveTheSameYAsOnTimeReads) {
  const std::vector<double> on_time = y_series(Stamp::kKernel, {});
  const std::vector<double> late = y_series(Stamp::kKernel, kStalls);
  ASSERT_GE(on_time.size(), 30u);
  ASSERT_EQ(late.size(), on_time.size());
  for (size_t i = 1; i < on_time.size(); ++i) {
    // After the first (50 ms fallback) interval, y is the offered 1 MB/s
    // within one packet per 10 ms interval.
    EXPECT_NEAR(on_time[i], 1e6, 1e5 + 1) << i;
    EXPECT_DOUBLE_EQ(late[i], on_time[i]) << "interval " << i;
  }
}

TEST(ArrivalClockXcp, ReadTimeStampsDistortYTheWayThisGuardsAgainst) {
  // The old behaviour, as a check that the scenario is sensitive: stamping
  // with the read time makes an interval that a stall straddles see a dip.
  const std::vector<double> on_time = y_series(Stamp::kKernel, {});
  const std::vector<double> late = y_series(Stamp::kRead, kStalls);
  ASSERT_EQ(late.size(), on_time.size());
  double min_ratio = 1.0;
  for (size_t i = 1; i < late.size(); ++i) min_ratio = std::min(min_ratio, late[i] / on_time[i]);
  EXPECT_LT(min_ratio, 0.75);
}

TEST(ArrivalClockXcp, ArrivalBeforeTheLinksLastEventCountsInTheOpenInterval) {
  std::vector<double> y;
  enginetest::CollectingSink sink;
  auto qdisc = std::make_unique<XcpQdisc>(QueueLimit{.packets = 1000, .bytes = 0}, XcpParams{}, 1);
  XcpQdisc* q = qdisc.get();
  qdisc->add_stage(std::make_unique<YRecorder>(y));
  Link link(xcp::Rate::from_megabits_per_s(10), Duration::zero(), std::move(qdisc), LossModel({}, 1), sink);
  link.offer(testutil::make_xcp_packet(1000, 12500, 10000, INT32_MAX), ms(0));
  link.advance(ms(51));  // the first (50 ms fallback) timeout has run
  ASSERT_EQ(y.size(), 1u);
  // Offered after that timeout but stamped before it (another port's frame
  // read late): counted once, in the interval still open.
  link.offer(testutil::make_xcp_packet(1000, 12500, 10000, INT32_MAX), ms(49));
  EXPECT_DOUBLE_EQ(q->controller().sums().y_bytes, 1000);
  EXPECT_EQ(q->counters().enqueued_packets, 2u);
  link.advance(ms(200));
  EXPECT_EQ(sink.got.size(), 2u);
  // It left no earlier than the timeout it was taken at (+0.8 ms on the wire).
  EXPECT_GE(sink.got[1].at, ms(50) + Duration::microseconds(800));
}

TEST(ArrivalClockXcp, LatenessIsMeasuredAgainstTheEnginesClock) {
  enginetest::CollectingSink sink;
  Link link(xcp::Rate::from_megabits_per_s(10), Duration::zero(),
            std::make_unique<XcpQdisc>(QueueLimit{.packets = 1000, .bytes = 0}, XcpParams{}, 1), LossModel({}, 1),
            sink);
  link.offer(testutil::make_packet(1500), ms(0));  // done serialising at 1.2 ms
  // Read 5 ms late: the next frame arrived at 2 ms, the engine's clock says 6.2.
  link.note_wall_time(ms(6.2));
  link.offer(testutil::make_packet(1500), ms(2));
  EXPECT_EQ(sink.got.size(), 1u);
  EXPECT_EQ(link.counters().lateness.max(), Duration::milliseconds(5));
}

}  // namespace
}  // namespace xcprouter
