#include "core/link.hh"

#include <gtest/gtest.h>

#include "engine_test_util.hh"
#include "qdisc/qdisc_factory.hh"
#include "xcp/clock.hh"

namespace xcprouter {
namespace {

using enginetest::CollectingSink;
using enginetest::make_sized;
using xcp::Duration;
using xcp::Rate;
using xcp::Timestamp;

std::unique_ptr<Qdisc> droptail(uint64_t packets, uint64_t bytes = 0) {
  return make_qdisc({{"kind", "droptail"}, {"limit_packets", packets}, {"limit_bytes", bytes}}, 1);
}

LossConfig bernoulli(double p) {
  LossConfig c;
  c.model = LossConfig::Model::kBernoulli;
  c.p = p;
  return c;
}

// Drives a link with a FakeClock in small steps, as the engine's loop would.
void run_until(Link& link, xcp::FakeClock& clock, Timestamp end, Duration step = Duration::microseconds(7)) {
  while (clock.now() < end) {
    clock.set(std::min(end, clock.now() + step));
    link.advance(clock.now());
  }
}

TEST(Link, TenMegabitsDeliver62500BytesIn50ms) {
  xcp::FakeClock clock;
  CollectingSink sink;
  Link link(Rate::from_megabits_per_s(10), Duration::zero(), droptail(1000), LossModel({}, 1), sink);
  for (int i = 0; i < 200; ++i) link.offer(make_sized(1500), clock.now());
  run_until(link, clock, Timestamp::zero() + Duration::milliseconds(50));
  // 10 Mb/s * 50 ms = 62 500 bytes, within one 1500-byte packet.
  EXPECT_NEAR(static_cast<double>(sink.bytes()), 62500.0, 1500.0);
}

TEST(Link, LateServicingDoesNotChangeTheRate) {
  xcp::FakeClock clock;
  CollectingSink sink;
  Link link(Rate::from_megabits_per_s(10), Duration::zero(), droptail(1000), LossModel({}, 1), sink);
  for (int i = 0; i < 200; ++i) link.offer(make_sized(1500), clock.now());
  // Woken only every 3.3 ms (much coarser than the 1.2 ms per packet).
  run_until(link, clock, Timestamp::zero() + Duration::milliseconds(50), Duration::microseconds(3300));
  EXPECT_NEAR(static_cast<double>(sink.bytes()), 62500.0, 1500.0);
  // Each packet still left at its exact serialisation instant (k * 1.2 ms).
  for (size_t k = 0; k < sink.got.size(); ++k) {
    EXPECT_EQ(sink.got[k].at.ns(), static_cast<int64_t>(k + 1) * 1'200'000) << k;
  }
  EXPECT_GT(link.counters().late_events, 0u);
}

TEST(Link, AnArrivalReadLateBeforeItsDeliveryIsNotLate) {
  // The engine defers reading arrivals while their delivery is still ahead
  // (wait_policy.hh): the serialiser's event runs late, the delivery on time.
  xcp::FakeClock clock;
  CollectingSink sink;
  Link link(Rate::from_megabits_per_s(10), Duration::milliseconds(10), droptail(10), LossModel({}, 1), sink);
  link.note_wall_time(Timestamp::zero() + Duration::milliseconds(5));  // read 5 ms after it arrived
  link.offer(make_sized(1000), Timestamp::zero());
  EXPECT_EQ(link.next_delivery(), Timestamp::max());  // still serialising
  link.advance(Timestamp::zero() + Duration::milliseconds(5));
  const Timestamp due = Timestamp::zero() + Duration::microseconds(800) + Duration::milliseconds(10);
  EXPECT_EQ(link.next_delivery(), due);  // the serialiser's end ran late: the delivery is known
  link.note_wall_time(due);
  link.advance(due);
  ASSERT_EQ(sink.got.size(), 1u);
  EXPECT_EQ(sink.got[0].at, due);
  EXPECT_EQ(link.counters().late_events, 0u);
  EXPECT_EQ(link.counters().lateness.total(), 1u);  // one delivery, on time
  EXPECT_EQ(link.next_delivery(), Timestamp::max());
  // The same delivery 2 ms late counts.
  link.offer(make_sized(1000), due);
  link.note_wall_time(due + Duration::milliseconds(12));
  link.advance(due + Duration::milliseconds(12));
  EXPECT_EQ(link.counters().late_events, 1u);
}

TEST(Link, PropagationDelayIsExact) {
  xcp::FakeClock clock;
  CollectingSink sink;
  Link link(Rate::from_megabits_per_s(10), Duration::milliseconds(10), droptail(10), LossModel({}, 1), sink);
  link.offer(make_sized(1000), clock.now());
  const Timestamp due = Timestamp::zero() + Duration::microseconds(800) + Duration::milliseconds(10);
  EXPECT_EQ(link.next_deadline(), Timestamp::zero() + Duration::microseconds(800));
  link.advance(due - Duration::nanoseconds(1));
  EXPECT_TRUE(sink.got.empty());
  EXPECT_EQ(link.next_deadline(), due);
  link.advance(due);
  ASSERT_EQ(sink.got.size(), 1u);
  EXPECT_EQ(sink.got[0].at, due);
  EXPECT_EQ(link.next_deadline(), Timestamp::max());
}

TEST(Link, BufferLimitInPackets) {
  xcp::FakeClock clock;
  CollectingSink sink;
  Link link(Rate::from_megabits_per_s(1), Duration::zero(), droptail(10), LossModel({}, 1), sink);
  for (int i = 0; i < 20; ++i) link.offer(make_sized(1000), clock.now());
  // One packet went straight into the serialiser, ten wait, nine were dropped.
  EXPECT_EQ(link.qdisc().packets(), 10u);
  EXPECT_EQ(link.qdisc().counters().drops_overflow, 9u);
  EXPECT_EQ(link.in_flight(), 1u);
  run_until(link, clock, Timestamp::zero() + Duration::seconds(1), Duration::microseconds(500));
  EXPECT_EQ(sink.got.size(), 11u);
}

TEST(Link, BufferLimitInBytes) {
  xcp::FakeClock clock;
  CollectingSink sink;
  Link link(Rate::from_megabits_per_s(1), Duration::zero(), droptail(0, 5000), LossModel({}, 1), sink);
  for (int i = 0; i < 20; ++i) link.offer(make_sized(1000), clock.now());
  EXPECT_EQ(link.qdisc().bytes(), 5000u);
  EXPECT_EQ(link.qdisc().counters().drops_overflow, 14u);
}

TEST(Link, LiveCapacityChangeKeepsQueuedPackets) {
  xcp::FakeClock clock;
  CollectingSink sink;
  Link link(Rate::from_megabits_per_s(10), Duration::zero(), droptail(100), LossModel({}, 1), sink);
  for (int i = 0; i < 50; ++i) link.offer(make_sized(1250), clock.now());  // 1 ms each at 10 Mb/s
  run_until(link, clock, Timestamp::zero() + Duration::microseconds(10500));
  ASSERT_EQ(sink.got.size(), 10u);
  link.set_capacity(Rate::from_megabits_per_s(20));
  EXPECT_EQ(link.qdisc().capacity(), Rate::from_megabits_per_s(20));
  run_until(link, clock, Timestamp::zero() + Duration::milliseconds(100));
  ASSERT_EQ(sink.got.size(), 50u);  // nothing lost
  // The 11th finishes at 11 ms at the old rate, the remaining 39 at 0.5 ms each.
  EXPECT_EQ(sink.got[10].at.ns(), 11'000'000);
  EXPECT_EQ(sink.got[49].at.ns(), 11'000'000 + 39 * 500'000);
}

TEST(Link, DownDropsArrivalsHoldsQueueAndResumes) {
  xcp::FakeClock clock;
  CollectingSink sink;
  Link link(Rate::from_megabits_per_s(10), Duration::milliseconds(1), droptail(100), LossModel({}, 1), sink);
  for (int i = 0; i < 5; ++i) link.offer(make_sized(1250), clock.now());
  link.set_up(false, clock.now());
  link.offer(make_sized(1250), clock.now());
  EXPECT_EQ(link.counters().drops_link_down, 1u);
  run_until(link, clock, Timestamp::zero() + Duration::milliseconds(20));
  EXPECT_EQ(sink.got.size(), 1u);             // the one already on the wire
  EXPECT_EQ(link.qdisc().packets(), 4u);      // the queue holds
  link.set_up(true, clock.now());
  run_until(link, clock, Timestamp::zero() + Duration::milliseconds(40));
  EXPECT_EQ(sink.got.size(), 5u);
}

TEST(Link, LateHandOverNeverOverlapsTheWire) {
  xcp::FakeClock clock;
  CollectingSink sink;
  Link link(Rate::from_megabits_per_s(10), Duration::zero(), droptail(10), LossModel({}, 1), sink);
  link.offer(make_sized(1250), Timestamp::zero());  // on the wire 0..1 ms
  link.advance(Timestamp::zero() + Duration::milliseconds(2));
  // Another link hands over a packet whose virtual arrival (0.5 ms) predates
  // the end of the previous serialisation: it must wait for the wire.
  link.offer(make_sized(1250), Timestamp::zero() + Duration::microseconds(500));
  link.advance(Timestamp::zero() + Duration::milliseconds(5));
  ASSERT_EQ(sink.got.size(), 2u);
  EXPECT_EQ(sink.got[1].at.ns(), 2'000'000);
}

TEST(Link, DelayDecreaseNeverReorders) {
  xcp::FakeClock clock;
  CollectingSink sink;
  Link link(Rate::from_megabits_per_s(100), Duration::milliseconds(20), droptail(100), LossModel({}, 1), sink);
  for (int i = 0; i < 3; ++i) link.offer(make_sized(1000 + i), clock.now());
  run_until(link, clock, Timestamp::zero() + Duration::milliseconds(1));
  link.set_delay(Duration::milliseconds(1));
  for (int i = 3; i < 6; ++i) link.offer(make_sized(1000 + i), clock.now());
  run_until(link, clock, Timestamp::zero() + Duration::milliseconds(40));
  ASSERT_EQ(sink.got.size(), 6u);
  for (size_t k = 0; k < 6; ++k) EXPECT_EQ(sink.got[k].packet->wire_bytes(), 1000 + k);
}

TEST(Link, BernoulliLossOnTheLinkWithinBound) {
  xcp::FakeClock clock;
  CollectingSink sink;
  const int n = 50000;
  Link link(Rate::from_megabits_per_s(1000), Duration::zero(), droptail(n), LossModel(bernoulli(0.01), 5), sink);
  for (int i = 0; i < n; ++i) link.offer(make_sized(100), clock.now());
  run_until(link, clock, Timestamp::zero() + Duration::milliseconds(100), Duration::microseconds(50));
  const double sigma = std::sqrt(n * 0.01 * 0.99);
  EXPECT_NEAR(static_cast<double>(link.counters().drops_loss), n * 0.01, 5 * sigma);
  EXPECT_EQ(sink.got.size() + link.counters().drops_loss, static_cast<size_t>(n));
  EXPECT_EQ(link.counters().out_packets, sink.got.size());
}

TEST(Link, BusyTimeCountsSerialisationOnlyAndThePartInProgress) {
  xcp::FakeClock clock;
  CollectingSink sink;
  // 10 Mb/s: a 1500-byte frame serialises in 1.2 ms.
  Link link(Rate::from_megabits_per_s(10), Duration::milliseconds(5), droptail(100), LossModel({}, 1), sink);
  for (int i = 0; i < 3; ++i) link.offer(make_sized(1500), clock.now());
  run_until(link, clock, Timestamp::zero() + Duration::milliseconds(10));
  EXPECT_EQ(link.busy_time(clock.now()).ns(), 3'600'000);  // three frames, then idle
  // Idle 10 ms, then one frame offered at 20 ms: half of it by 20.6 ms.
  clock.set(Timestamp::zero() + Duration::milliseconds(20));
  link.offer(make_sized(1500), clock.now());
  EXPECT_EQ(link.busy_time(clock.now() + Duration::microseconds(600)).ns(), 4'200'000);
  // Never beyond the frame's own end, whatever `now` is asked.
  EXPECT_EQ(link.busy_time(clock.now() + Duration::seconds(1)).ns(), 4'800'000);
  EXPECT_EQ(link.stats_json(clock.now())["busy_ns"], 3'600'000);
  run_until(link, clock, Timestamp::zero() + Duration::milliseconds(30));
  EXPECT_EQ(link.counters().busy.ns(), 4'800'000);
}

TEST(Link, StatsJsonNamesEveryCounter) {
  xcp::FakeClock clock;
  CollectingSink sink;
  Link link(Rate::from_megabits_per_s(10), Duration::milliseconds(3), droptail(7), LossModel(bernoulli(0.5), 5), sink);
  const auto j = link.stats_json();
  EXPECT_EQ(j["config"]["capacity_bps"], 10000000u);
  EXPECT_EQ(j["config"]["delay_us"], 3000);
  EXPECT_EQ(j["config"]["limit_packets"], 7u);
  EXPECT_EQ(j["config"]["loss"]["model"], "bernoulli");
  EXPECT_EQ(j["config"]["queue_kind"], "droptail");
  for (const char* k : {"queue", "queue_overflow", "queue_early", "queue_fairness", "loss", "link_down"}) {
    EXPECT_TRUE(j["drops"].contains(k)) << k;
  }
}

}  // namespace
}  // namespace xcprouter
