// Chirp analysis on synthetic queueing delays (a fluid queue, flat paths,
// bumps) and the reassembly rules: loss, reordering, duplicates, timeouts,
// bounded memory, stale probes.
#include "xcp/chirp_analyzer.hh"

#include <algorithm>
#include <cmath>

#include <gtest/gtest.h>

#include "xcp/chirp_schedule.hh"

namespace xcprouter {
namespace {

using xcp::Duration;
using xcp::Rate;
using xcp::Timestamp;

constexpr double kC = 1.25e6;  // link capacity, bytes/s (10 Mb/s)

ChirpConfig config() {
  ChirpConfig c = ChirpConfig::for_path(Rate::from_bytes_per_s(kC));
  c.dither = false;
  return c;
}

// Probes of one chirp through a fluid FIFO of capacity C whose cross traffic
// leaves `avail` bytes/s: the backlog grows by P − avail·Δ per gap, never
// below zero (pathChirp's model of self-induced congestion).
std::vector<ChirpProbe> fluid_chirp(const ChirpConfig& c, double avail, uint32_t id = 0,
                                    Timestamp start = Timestamp::from_ns(1'000'000'000)) {
  const ChirpSchedule s(c);
  std::vector<ChirpProbe> out;
  double backlog = 0;
  for (uint32_t k = 0; k < s.packets(); ++k) {
    if (k > 0) {
      const double gap = (s.offsets()[k] - s.offsets()[k - 1]).seconds_f();
      backlog = std::max(0.0, backlog - avail * gap);
    }
    backlog += c.packet_bytes;
    const Duration delay = Duration::milliseconds(10) + Duration::seconds(backlog / kC);
    out.push_back({id, k, s.offsets()[k], start + s.offsets()[k] + delay, c.packet_bytes});
  }
  return out;
}

std::optional<Rate> analyse(ChirpAnalyzer& a, const std::vector<ChirpProbe>& probes) {
  std::optional<Rate> r;
  for (const auto& p : probes)
    for (const auto& done : a.on_probe(p)) r = done.estimate;
  return r;
}

TEST(ChirpAnalyzer, FluidQueueGivesTheFirstRateAboveTheAvailableBandwidth) {
  const ChirpConfig c = config();
  for (double frac : {0.1, 0.25, 0.4, 0.7, 0.95}) {
    ChirpAnalyzer a(c);
    const auto est = analyse(a, fluid_chirp(c, frac * kC));
    ASSERT_TRUE(est) << frac;
    // Gaps below A keep the backlog at one probe; the first gap above A
    // starts the open excursion, so D = R_l with A < R_l <= γ·A — or one
    // step later when that gap's delay rise, P·(1 − A/R_l)/C, is still
    // within delay_floor (the onset is placed where the delay leaves the
    // noise band).
    EXPECT_GT(est->bytes_per_s(), frac * kC) << frac;
    EXPECT_LE(est->bytes_per_s(), 1.2 * 1.2 * frac * kC * (1 + 1e-9)) << frac;
  }
}

TEST(ChirpAnalyzer, IdlePathReadsTheHighRate) {
  const ChirpConfig c = config();
  ChirpAnalyzer a(c);
  const auto est = analyse(a, fluid_chirp(c, kC));
  ASSERT_TRUE(est);
  // No gap exceeds C, delays stay flat: every E_k = R_top, clamped to H.
  EXPECT_DOUBLE_EQ(est->bytes_per_s(), c.high_rate.bytes_per_s());
}

TEST(ChirpAnalyzer, ShortBumpIsCrossTrafficNotCongestion) {
  const ChirpConfig c = config();
  auto probes = fluid_chirp(c, kC);
  // A 3-packet excursion (< busy_period_threshold = 5) early in the chirp.
  probes[3].arrival += Duration::microseconds(800);
  probes[4].arrival += Duration::microseconds(400);
  ChirpAnalyzer a(c);
  EXPECT_DOUBLE_EQ(analyse(a, probes)->bytes_per_s(), c.high_rate.bytes_per_s());
}

TEST(ChirpAnalyzer, LongTerminatedExcursionMarksItsRisingGaps) {
  const ChirpConfig c = config();
  auto probes = fluid_chirp(c, kC);
  // Delay rises over gaps 2..5 and is back at gap 8: valid (6 >= 5 packets).
  const int bump[] = {0, 0, 0, 300, 600, 900, 1200, 600, 0};
  for (size_t k = 0; k < std::size(bump); ++k) probes[k].arrival += Duration::microseconds(bump[k]);
  ChirpAnalyzer a(c);
  const double est = analyse(a, probes)->bytes_per_s();
  const ChirpSchedule s(c);
  double num = 0, den = 0;
  for (uint32_t k = 0; k + 1 < s.packets(); ++k) {
    const double g = (s.offsets()[k + 1] - s.offsets()[k]).seconds_f();
    const bool rising = k >= 2 && k <= 5;
    num += (rising ? s.gap_rate(k).bytes_per_s() : s.gap_rate(s.packets() - 2).bytes_per_s()) * g;
    den += g;
  }
  EXPECT_NEAR(est / (num / den), 1.0, 1e-5);  // offsets are whole ns
  EXPECT_LT(est, c.high_rate.bytes_per_s());
}

TEST(ChirpAnalyzer, StampNoiseBelowTheFloorIsIgnored) {
  const ChirpConfig c = config();
  auto probes = fluid_chirp(c, kC);
  // A dip at packet 1 then noise above it to the end: an excursion that
  // never ends, but whose peak stays under delay_floor.
  for (size_t k = 2; k < probes.size(); ++k)
    probes[k].arrival += Duration::nanoseconds(static_cast<int64_t>((k * 7919) % 40'000));
  ChirpAnalyzer a(c);
  EXPECT_DOUBLE_EQ(analyse(a, probes)->bytes_per_s(), c.high_rate.bytes_per_s());
}

TEST(ChirpAnalyzer, LossCapsTheEstimateAtTheFirstLostGap) {
  const ChirpConfig c = config();
  // Flat delays (a full buffer pins them) but packet 9 lost: the open
  // excursion starts at the merged gap 8–10, so D is that gap's rate.
  auto probes = fluid_chirp(c, kC);
  probes.erase(probes.begin() + 9);
  ChirpAnalyzer a(c);
  const auto est = analyse(a, probes);
  ASSERT_TRUE(est);
  const double merged = 2.0 * c.packet_bytes /
                        (probes[9].send_offset - probes[8].send_offset).seconds_f();
  EXPECT_NEAR(est->bytes_per_s() / merged, 1.0, 1e-9);
}

TEST(ChirpAnalyzer, LostPacketsMergeGaps) {
  const ChirpConfig c = config();
  auto probes = fluid_chirp(c, 0.4 * kC);
  probes.erase(probes.begin() + 6);
  probes.erase(probes.begin() + 2);
  ChirpAnalyzer a(c);
  const auto est = analyse(a, probes);
  ASSERT_TRUE(est);
  // The first loss (gap 1–3, below A) caps the estimate at that merged
  // gap's rate: about the rates of gaps 1 and 2, well under A.
  const ChirpSchedule s(c);
  EXPECT_GT(est->bytes_per_s(), s.gap_rate(1).bytes_per_s());
  EXPECT_LT(est->bytes_per_s(), s.gap_rate(2).bytes_per_s());
}

TEST(ChirpAnalyzer, ReorderedAndDuplicatedProbesGiveTheSameEstimate) {
  const ChirpConfig c = config();
  const auto probes = fluid_chirp(c, 0.4 * kC);
  ChirpAnalyzer in_order(c);
  const auto want = analyse(in_order, probes);

  auto mixed = probes;
  std::swap(mixed[3], mixed[4]);
  std::swap(mixed[10], mixed[12]);
  const ChirpProbe dup = mixed[5];
  mixed.insert(mixed.begin() + 7, dup);  // duplicate of an earlier probe
  // The last index must stay last or it closes the chirp early.
  ChirpAnalyzer a(c);
  EXPECT_EQ(analyse(a, mixed), want);
  EXPECT_EQ(a.counters().duplicates, 1u);
}

TEST(ChirpAnalyzer, ChirpWithoutItsLastPacketClosesAtTheTimeout) {
  const ChirpConfig c = config();
  auto probes = fluid_chirp(c, 0.4 * kC);
  probes.pop_back();
  ChirpAnalyzer a(c);
  for (const auto& p : probes) EXPECT_TRUE(a.on_probe(p).empty());
  const Timestamp last = probes.back().arrival;
  ASSERT_EQ(a.next_deadline(), last + c.chirp_timeout);
  EXPECT_TRUE(a.on_deadline(last + c.chirp_timeout - Duration::nanoseconds(1)).empty());
  const auto done = a.on_deadline(last + c.chirp_timeout);
  ASSERT_EQ(done.size(), 1u);
  EXPECT_TRUE(done[0].estimate);
  EXPECT_EQ(done[0].received, probes.size());
  EXPECT_EQ(done[0].completed_at, last + c.chirp_timeout);
  EXPECT_EQ(a.open_chirps(), 0u);
  EXPECT_EQ(a.counters().timed_out, 1u);
  EXPECT_FALSE(a.next_deadline());
}

TEST(ChirpAnalyzer, TooMuchLossIsUnusable) {
  const ChirpConfig c = config();
  auto probes = fluid_chirp(c, 0.4 * kC);
  // Keep 1 in 3 (loss 2/3 > max_loss_fraction 0.5), including the last.
  std::vector<ChirpProbe> kept;
  for (size_t k = 0; k < probes.size(); ++k)
    if (k % 3 == 0 || k + 1 == probes.size()) kept.push_back(probes[k]);
  ChirpAnalyzer a(c);
  std::vector<ChirpResult> done;
  for (const auto& p : kept)
    for (const auto& r : a.on_probe(p)) done.push_back(r);
  ASSERT_EQ(done.size(), 1u);
  EXPECT_FALSE(done[0].estimate);
  EXPECT_EQ(a.counters().unusable, 1u);
}

TEST(ChirpAnalyzer, OpenChirpsAreBoundedByEvictingTheOldest) {
  const ChirpConfig c = config();
  ChirpAnalyzer a(c);
  std::vector<ChirpResult> done;
  for (uint32_t id = 0; id < c.max_open_chirps + 2; ++id) {
    auto probes = fluid_chirp(c, 0.4 * kC, id, Timestamp::from_ns(1'000'000'000 + id * 1'000'000));
    probes.pop_back();  // none completes
    for (const auto& p : probes)
      for (const auto& r : a.on_probe(p)) done.push_back(r);
    EXPECT_LE(a.open_chirps(), c.max_open_chirps);
  }
  ASSERT_EQ(done.size(), 2u);
  EXPECT_EQ(done[0].chirp_id, 0u);
  EXPECT_EQ(done[1].chirp_id, 1u);
  EXPECT_EQ(a.counters().evicted, 2u);
}

TEST(ChirpAnalyzer, ProbesOfAClosedChirpAreStale) {
  const ChirpConfig c = config();
  ChirpAnalyzer a(c);
  const auto probes = fluid_chirp(c, 0.4 * kC, 7);
  ASSERT_TRUE(analyse(a, probes));
  EXPECT_TRUE(a.on_probe(probes[3]).empty());
  EXPECT_EQ(a.counters().stale, 1u);
  EXPECT_EQ(a.open_chirps(), 0u);
  // A sender that restarted its counter far behind is accepted again.
  ASSERT_TRUE(analyse(a, fluid_chirp(c, 0.4 * kC, 7u - 1000u)));
  ASSERT_TRUE(analyse(a, fluid_chirp(c, 0.4 * kC, 0)));
}

TEST(ChirpAnalyzer, IndexPastTheChirpIsRejected) {
  const ChirpConfig c = config();
  ChirpAnalyzer a(c);
  ChirpProbe p{1, c.packets_per_chirp(), Duration::zero(), Timestamp::from_ns(1), c.packet_bytes};
  EXPECT_TRUE(a.on_probe(p).empty());
  EXPECT_EQ(a.counters().out_of_range, 1u);
  EXPECT_EQ(a.open_chirps(), 0u);
}

TEST(ChirpAnalyzer, EstimateNeedsThreeSamplesAndIncreasingOffsets) {
  const ChirpConfig c = config();
  using S = ChirpAnalyzer::Sample;
  const Timestamp t = Timestamp::from_ns(1'000'000);
  std::vector<S> two{{0, Duration::zero(), t, 1000}, {1, Duration::milliseconds(1), t, 1000}};
  EXPECT_FALSE(ChirpAnalyzer::estimate(two, c));
  std::vector<S> back{{0, Duration::zero(), t, 1000},
                      {1, Duration::milliseconds(2), t, 1000},
                      {2, Duration::milliseconds(1), t, 1000}};
  EXPECT_FALSE(ChirpAnalyzer::estimate(back, c));
}

}  // namespace
}  // namespace xcprouter
