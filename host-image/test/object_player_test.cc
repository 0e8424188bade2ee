// ObjectPlayer over a simulated 10 Mb/s path against real server streams:
// every object completes intact, no FCT beats physics (handshake RTT + one RTT
// + serialisation), the concurrency bound holds and counts who waited, and
// the end of a test leaves unfinished objects marked as such.
#include "app/object_player.hh"

#include <gtest/gtest.h>

#include <memory>
#include <vector>

#include "app/server_stream.hh"
#include "app/session_protocol.hh"
#include "sim_network.hh"

namespace xcphost::test {
namespace {

constexpr double kRateBps = 10e6;
constexpr double kRttS = 0.020;  // 10 ms each way (PathConfig's default)

struct Bed {
  SimNetwork net{PathConfig{}, PathConfig{}, 1};
  std::vector<std::unique_ptr<ServerStream>> served;

  Bed() {
    ConnectionConfig scfg;
    scfg.send_buffer_bytes = 64 * 1024;
    net.b().listen(5201, scfg, [this](Connection&) {
      served.push_back(std::make_unique<ServerStream>(net.now()));
      return served.back().get();
    });
  }

  ObjectPlayer::Config config(std::vector<ObjectSpec> objects, uint32_t max_concurrent, CcKind cc) {
    ObjectPlayer::Config c;
    c.objects = std::move(objects);
    c.max_concurrent = max_concurrent;
    c.conn.cc = cc;
    c.conn.desired_rate = xcp::Rate::from_megabits_per_s(8);  // no XCP router on the simulated path
    c.remote_addr = SimNetwork::kAddrB;
    c.remote_port = 5201;
    c.first_local_port = 40000;
    c.verify = true;
    return c;
  }

  // Runs the network and the player until every object concluded, `stop_at`
  // (then stop()) or `limit`.
  void play(ObjectPlayer& p, xcp::Duration limit, xcp::Timestamp stop_at = xcp::Timestamp::max()) {
    const xcp::Timestamp end = net.now() + limit;
    while (!p.finished() && net.now() < end) {
      if (net.now() >= stop_at) p.stop(net.now());
      p.step(net.now());
      const xcp::Timestamp wake = std::min({p.next_wake(), end, stop_at > net.now() ? stop_at : end});
      const xcp::Timestamp before = net.now();
      net.run_until([&] {
        p.step(net.now());
        return p.finished() || net.now() >= wake;
      }, wake - net.now());
      if (net.now() == before && wake > before) net.clock().set(wake);  // idle until the next start
    }
  }
};

std::vector<ObjectSpec> web_like() {
  // 20 objects over 2 s, 1 KB .. 200 KB, some overlapping.
  std::vector<ObjectSpec> v;
  const uint64_t sizes[] = {1000, 14600, 200000, 3000, 50000, 1460, 120000, 7000, 90000, 500};
  for (int i = 0; i < 20; ++i) v.push_back({xcp::Duration::milliseconds(100 * i), sizes[i % 10] + i});
  return v;
}

class ObjectPlayerCc : public ::testing::TestWithParam<CcKind> {};

TEST_P(ObjectPlayerCc, EveryObjectCompletesIntactAndNoFctBeatsPhysics) {
  Bed bed;
  const auto objects = web_like();
  ObjectPlayer p(bed.net.a(), bed.config(objects, 32, GetParam()), bed.net.now());
  bed.play(p, xcp::Duration::seconds(30));
  ASSERT_TRUE(p.finished());
  uint64_t total = 0;
  for (size_t i = 0; i < objects.size(); ++i) {
    const ObjectResult& r = p.results()[i];
    EXPECT_EQ(r.status, ObjectStatus::kComplete) << i << ": " << r.error;
    ASSERT_TRUE(r.fct && r.started) << i;
    EXPECT_EQ(r.bytes_received, objects[i].bytes) << i;
    // Started on time (a free slot), and SYN-ACK plus data-ACK need two RTTs,
    // and the payload its serialisation time at least.
    EXPECT_NEAR(r.started->seconds_f(), objects[i].start.seconds_f(), 1e-6);
    const double floor_s = 2 * kRttS + static_cast<double>(objects[i].bytes) * 8 / kRateBps;
    EXPECT_GE(r.fct->seconds_f(), floor_s) << i;
    total += objects[i].bytes;
  }
  EXPECT_EQ(p.totals().bytes_acked, total);
  EXPECT_EQ(p.waited(), 0u);
  EXPECT_EQ(p.active(), 0u);
  EXPECT_EQ(bed.net.a().connection_count(), 0u);  // every connection was removed
  // The lone first object (1 KB, one segment) takes about the two RTTs.
  EXPECT_LT(p.results()[0].fct->seconds_f(), 2 * kRttS + 0.005);
}

INSTANTIATE_TEST_SUITE_P(Controllers, ObjectPlayerCc, ::testing::Values(CcKind::kNewReno, CcKind::kXcp));

TEST(ObjectPlayer, BoundsConcurrencyAndCountsWhoWaited) {
  Bed bed;
  std::vector<ObjectSpec> objects(10, ObjectSpec{xcp::Duration::zero(), 30000});
  ObjectPlayer p(bed.net.a(), bed.config(objects, 3, CcKind::kNewReno), bed.net.now());
  bed.play(p, xcp::Duration::seconds(30));
  ASSERT_TRUE(p.finished());
  EXPECT_EQ(p.max_active(), 3u);
  EXPECT_EQ(p.waited(), 7u);
  for (size_t i = 0; i < objects.size(); ++i) {
    EXPECT_EQ(p.results()[i].status, ObjectStatus::kComplete) << i;
    EXPECT_EQ(p.results()[i].waited, i >= 3) << i;
  }
  // The last three started only after earlier ones closed: at least one object's FCT later.
  EXPECT_GT(p.results()[9].started->seconds_f(), 2 * kRttS);
}

TEST(ObjectPlayer, StopLeavesUnfinishedObjectsMarked) {
  Bed bed;
  std::vector<ObjectSpec> objects = {{xcp::Duration::zero(), 1000},
                                     {xcp::Duration::milliseconds(10), 5'000'000},
                                     {xcp::Duration::seconds(5), 1000}};
  ObjectPlayer p(bed.net.a(), bed.config(objects, 32, CcKind::kNewReno), bed.net.now());
  bed.play(p, xcp::Duration::seconds(15), bed.net.now() + xcp::Duration::milliseconds(500));
  ASSERT_TRUE(p.finished());
  EXPECT_EQ(p.results()[0].status, ObjectStatus::kComplete);
  EXPECT_EQ(p.results()[1].status, ObjectStatus::kIncomplete);  // 5 MB need 4 s at 10 Mb/s
  EXPECT_FALSE(p.results()[1].fct.has_value());
  EXPECT_EQ(p.results()[2].status, ObjectStatus::kNotStarted);
  EXPECT_FALSE(p.results()[2].started.has_value());
  EXPECT_EQ(bed.net.a().connection_count(), 0u);
}

TEST(ObjectPlayer, LocalPortsAreDistinctForEveryObject) {
  for (uint16_t first : {uint16_t{1024}, uint16_t{40000}, uint16_t{65535}}) {
    std::vector<bool> seen(65536, false);
    for (size_t i = 0; i < kMaxObjects; ++i) {
      const uint16_t port = ObjectPlayer::local_port(first, i);
      EXPECT_GE(port, 1024);
      ASSERT_FALSE(seen[port]) << first << " " << i;
      seen[port] = true;
    }
  }
}

}  // namespace
}  // namespace xcphost::test
