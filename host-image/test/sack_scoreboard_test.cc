#include "transport/sack_scoreboard.hh"

#include <gtest/gtest.h>

#include <random>
#include <set>
#include <vector>

namespace xcphost {
namespace {

constexpr uint32_t kMss = 1000;

// Sends `n` MSS-sized segments starting at sb.snd_nxt().
void send_new(SackScoreboard& sb, int n) {
  for (int i = 0; i < n; ++i) sb.on_sent(sb.snd_nxt(), kMss);
}

AckUpdate ack(SackScoreboard& sb, uint64_t cum, std::vector<SackBlock> blocks = {}) {
  return sb.on_ack(cum, blocks);
}

TEST(SackScoreboard, CumulativeAckAdvances) {
  SackScoreboard sb(0, kMss);
  send_new(sb, 10);
  EXPECT_EQ(sb.pipe(), 10'000u);
  auto u = ack(sb, 2000);
  EXPECT_EQ(u.cumulative_advance_bytes, 2000u);
  EXPECT_EQ(u.newly_acked_bytes, 2000u);
  EXPECT_FALSE(u.duplicate);
  EXPECT_EQ(sb.snd_una(), 2000u);
  EXPECT_EQ(sb.pipe(), 8000u);
}

TEST(SackScoreboard, SingleHoleBecomesLostAfterThreeSackedSegments) {
  SackScoreboard sb(0, kMss);
  send_new(sb, 10);
  ack(sb, 2000);
  // Segment [2000,3000) is missing; SACKs grow above it.
  auto u1 = ack(sb, 2000, {{3000, 4000}});
  EXPECT_TRUE(u1.duplicate);
  EXPECT_EQ(u1.newly_sacked_bytes, 1000u);
  EXPECT_EQ(u1.newly_acked_bytes, 1000u);
  EXPECT_FALSE(sb.is_lost(2000));
  ack(sb, 2000, {{3000, 5000}});
  EXPECT_FALSE(sb.is_lost(2000)) << "2 segments / 2000 bytes above: not yet DupThresh";
  EXPECT_FALSE(sb.next_segment_to_retransmit().has_value());
  auto u3 = ack(sb, 2000, {{3000, 6000}});
  EXPECT_EQ(u3.newly_sacked_bytes, 1000u);
  EXPECT_TRUE(sb.is_lost(2000));
  EXPECT_FALSE(sb.is_lost(6000));
  EXPECT_EQ(sb.dupacks(), 3u);
  // pipe = 8000 outstanding − 3000 SACKed − 1000 lost
  EXPECT_EQ(sb.pipe(), 4000u);
  ASSERT_TRUE(sb.next_segment_to_retransmit().has_value());
  EXPECT_EQ(*sb.next_segment_to_retransmit(), (SeqRange{2000, 3000}));
  sb.on_sent(2000, kMss);
  EXPECT_EQ(sb.pipe(), 5000u);
  EXPECT_FALSE(sb.next_segment_to_retransmit().has_value());

  // The same SACK again reports nothing new (no double counting).
  auto again = ack(sb, 2000, {{3000, 6000}});
  EXPECT_EQ(again.newly_acked_bytes, 0u);

  // The retransmission fills the hole: only the hole is newly acknowledged.
  auto full = ack(sb, 6000);
  EXPECT_EQ(full.cumulative_advance_bytes, 4000u);
  EXPECT_EQ(full.newly_acked_bytes, 1000u);
  EXPECT_EQ(sb.sacked_bytes(), 0u);
  EXPECT_EQ(sb.lost_bytes(), 0u);
  EXPECT_EQ(sb.retransmitted_bytes(), 0u);
  EXPECT_EQ(sb.pipe(), 4000u);
  EXPECT_EQ(sb.dupacks(), 0u);
}

TEST(SackScoreboard, SeveralHolesRetransmittedInOrder) {
  SackScoreboard sb(0, kMss);
  send_new(sb, 10);
  // SACK segments 1, 3, 5, 6, 7: holes 0, 2, 4 have >= 3 SACKed segments above.
  ack(sb, 0, {{1000, 2000}, {3000, 4000}, {5000, 8000}});
  EXPECT_TRUE(sb.is_lost(0));
  EXPECT_TRUE(sb.is_lost(2000));
  EXPECT_TRUE(sb.is_lost(4000));
  EXPECT_FALSE(sb.is_lost(8000));
  EXPECT_FALSE(sb.is_lost(1000)) << "SACKed data is never lost";
  // 10000 − 5000 SACKed − 3000 lost
  EXPECT_EQ(sb.pipe(), 2000u);
  for (uint64_t hole : {0u, 2000u, 4000u}) {
    auto next = sb.next_segment_to_retransmit();
    ASSERT_TRUE(next.has_value());
    EXPECT_EQ(next->start, hole);
    EXPECT_EQ(next->length(), kMss);
    sb.on_sent(next->start, static_cast<uint32_t>(next->length()));
  }
  EXPECT_FALSE(sb.next_segment_to_retransmit().has_value());
  EXPECT_EQ(sb.pipe(), 5000u);
  // Partial ACK: holes 0 and 2 repaired.
  auto u = ack(sb, 4000, {{5000, 8000}});
  EXPECT_EQ(u.newly_acked_bytes, 2000u);
  EXPECT_EQ(sb.pipe(), 3000u);  // 6000 out − 3000 SACKed − 1000 lost + 1000 retx
}

TEST(SackScoreboard, BlocksAreClippedAndStaleAcksIgnored) {
  SackScoreboard sb(5000, kMss);
  send_new(sb, 4);  // [5000, 9000)
  ack(sb, 6000);
  auto dsack = ack(sb, 6000, {{5000, 6000}});  // below snd_una: D-SACK, ignored
  EXPECT_EQ(dsack.newly_sacked_bytes, 0u);
  auto beyond = ack(sb, 6000, {{8000, 20000}});  // clipped at snd_nxt
  EXPECT_EQ(beyond.newly_sacked_bytes, 1000u);
  auto old = ack(sb, 5500);
  EXPECT_TRUE(old.stale);
  EXPECT_EQ(sb.snd_una(), 6000u);
  auto future = ack(sb, 9001);
  EXPECT_TRUE(future.stale);
}

TEST(SackScoreboard, PartialSegmentSackSplits) {
  SackScoreboard sb(0, kMss);
  sb.on_sent(0, 3000);  // one large segment
  auto u = ack(sb, 0, {{1000, 2000}});
  EXPECT_EQ(u.newly_sacked_bytes, 1000u);
  EXPECT_EQ(sb.pipe(), 2000u);
  auto c = ack(sb, 1500);
  EXPECT_EQ(c.newly_acked_bytes, 1000u);  // [0,1000) new, [1000,1500) was SACKed
  EXPECT_EQ(sb.sacked_bytes(), 500u);
  EXPECT_EQ(sb.pipe(), 1000u);
}

TEST(SackScoreboard, TimeoutForgetsSacksAndRetransmitsFromUna) {
  SackScoreboard sb(0, kMss);
  send_new(sb, 6);
  ack(sb, 1000, {{2000, 3000}});
  sb.on_timeout();
  EXPECT_EQ(sb.sacked_bytes(), 0u);
  EXPECT_EQ(sb.pipe(), 0u);
  for (uint64_t seq = 1000; seq < 6000; seq += kMss) {
    auto next = sb.next_segment_to_retransmit();
    ASSERT_TRUE(next.has_value());
    EXPECT_EQ(next->start, seq);
    sb.on_sent(next->start, kMss);
    EXPECT_EQ(sb.pipe(), seq - 1000 + kMss);
  }
  EXPECT_FALSE(sb.next_segment_to_retransmit().has_value());
  // After a timeout the previously SACKed segment counts as in flight again.
  auto u = ack(sb, 6000);
  EXPECT_EQ(u.newly_acked_bytes, 5000u);
  EXPECT_EQ(sb.pipe(), 0u);
}

TEST(SackScoreboard, WithoutSackDupacksDrainPipeAndMarkHead) {
  SackScoreboard sb(0, kMss);
  send_new(sb, 10);
  for (int i = 1; i <= 3; ++i) {
    auto u = ack(sb, 0);
    EXPECT_TRUE(u.duplicate);
    EXPECT_EQ(u.newly_acked_bytes, 0u);
  }
  EXPECT_TRUE(sb.is_lost(0));
  // 10000 − 3 dupacks·1000 − 1000 lost head
  EXPECT_EQ(sb.pipe(), 6000u);
  EXPECT_EQ(sb.pipe_without_dupacks(), 9000u);  // only the lost head left the count
  ASSERT_TRUE(sb.next_segment_to_retransmit().has_value());
  sb.on_sent(0, kMss);
  EXPECT_EQ(sb.pipe(), 7000u);
  ack(sb, 0);
  EXPECT_EQ(sb.pipe(), 6000u);
  // Partial ACK up to a second hole at 5000: segments 1..4 were behind the dupacks.
  auto partial = ack(sb, 5000);
  EXPECT_EQ(partial.cumulative_advance_bytes, 5000u);
  EXPECT_EQ(sb.pipe(), 5000u);
  sb.mark_head_lost();  // NewReno: retransmit the new head
  EXPECT_EQ(sb.pipe(), 4000u);
  EXPECT_EQ(sb.next_segment_to_retransmit()->start, 5000u);
}

// With SACK negotiated, a duplicate ACK without blocks acknowledges a duplicate
// segment (the network's, or a go-back-N resending what the peer had): nothing
// left the network, so pipe stays and no segment is marked lost.
TEST(SackScoreboard, WithSackNegotiatedBlocklessDupacksKeepPipe) {
  SackScoreboard sb(0, kMss);
  sb.set_sack_negotiated(true);
  send_new(sb, 10);
  for (int i = 1; i <= 5; ++i) EXPECT_TRUE(ack(sb, 0).duplicate);
  EXPECT_EQ(sb.pipe(), 10'000u);
  EXPECT_FALSE(sb.is_lost(0));
  EXPECT_FALSE(sb.next_segment_to_retransmit().has_value());
}

// The no-SACK estimate is dropped on request (the transport asks when snd_una
// advances outside fast recovery): kept, a later run of one-segment advances
// never subtracts it and pipe stays below what is really in flight.
TEST(SackScoreboard, ForgettingTheDupackEstimateRestoresPipe) {
  SackScoreboard sb(0, kMss);
  send_new(sb, 10);
  ack(sb, 0);
  ack(sb, 0);  // two duplicates: below the threshold, nothing marked lost
  EXPECT_EQ(sb.pipe(), 8000u);
  for (int i = 1; i <= 4; ++i) ack(sb, i * 1000);  // one segment each
  send_new(sb, 4);
  EXPECT_EQ(sb.outstanding_bytes(), 10'000u);
  EXPECT_EQ(sb.pipe(), 8000u);  // the two phantom segments are still counted as gone
  sb.forget_dupack_estimate();
  EXPECT_EQ(sb.pipe(), 10'000u);
}

// A segment carrying the peer's own data repeats the cumulative ACK because
// the peer is sending, not because our data arrived out of order: it is no
// duplicate ACK (RFC 5681 definition, Linux FLAG_NOT_DUP), frees nothing and
// marks nothing lost, whatever the SACK mode.
TEST(SackScoreboard, AckOnTheSegmentOfPeerDataIsNoDuplicate) {
  SackScoreboard sb(0, kMss);
  send_new(sb, 10);
  for (int i = 1; i <= 4; ++i) {
    const AckUpdate u = sb.on_ack(0, {}, /*carries_data=*/true);
    EXPECT_FALSE(u.duplicate);
  }
  EXPECT_EQ(sb.dupacks(), 0u);
  EXPECT_EQ(sb.pipe(), 10'000u);
  EXPECT_FALSE(sb.is_lost(0));
}

TEST(SackScoreboard, NoDuplicateWithNothingOutstanding) {
  SackScoreboard sb(0, kMss);
  EXPECT_FALSE(ack(sb, 0).duplicate);
  send_new(sb, 1);
  ack(sb, 1000);
  EXPECT_FALSE(ack(sb, 1000).duplicate);
  EXPECT_EQ(sb.pipe(), 0u);
}

TEST(SackScoreboard, SmallSegmentsCountBySegmentsNotBytes) {
  SackScoreboard sb(0, kMss);
  for (int i = 0; i < 10; ++i) sb.on_sent(sb.snd_nxt(), 100);
  // Three SACKed segments above the hole, one block at a time (merged into
  // one run internally), only 300 bytes: lost by the segment rule.
  ack(sb, 0, {{100, 200}});
  ack(sb, 0, {{100, 300}});
  EXPECT_FALSE(sb.is_lost(0));
  ack(sb, 0, {{100, 400}});
  EXPECT_TRUE(sb.is_lost(0));
  EXPECT_FALSE(sb.is_lost(400));
  auto next = sb.next_segment_to_retransmit();
  ASSERT_TRUE(next.has_value());
  EXPECT_EQ(*next, (SeqRange{0, 100}));
}

TEST(SackScoreboard, HolesFoundOneAfterAnotherWhileSendingNewData) {
  // Every 10th segment lost; SACKs arrive in order and new data keeps going
  // out. Each hole must be offered exactly once, as soon as it is lost.
  SackScoreboard sb(0, kMss);
  send_new(sb, 100);
  std::vector<uint64_t> offered;
  for (int i = 1; i < 100; ++i) {
    if (i % 10 == 0) continue;
    const uint64_t group = static_cast<uint64_t>(i / 10) * 10 * kMss;
    ack(sb, 0, {{group + kMss, static_cast<uint64_t>(i + 1) * kMss}});
    while (auto next = sb.next_segment_to_retransmit()) {
      offered.push_back(next->start);
      sb.on_sent(next->start, kMss);
    }
    send_new(sb, 1);
  }
  std::vector<uint64_t> expected;
  for (uint64_t g = 0; g < 10; ++g) expected.push_back(g * 10 * kMss);
  EXPECT_EQ(offered, expected);
  EXPECT_EQ(sb.lost_bytes(), 10 * kMss);
  EXPECT_EQ(sb.retransmitted_bytes(), 10 * kMss);
}

// Arbitrary (unaligned, overlapping, out-of-range) blocks and cumulative ACKs
// against a 100-byte-unit model of what has been SACKed.
TEST(SackScoreboard, ArbitraryBlocksMatchUnitModel) {
  constexpr uint64_t kUnit = 100;
  std::mt19937 rng(11);
  SackScoreboard sb(0, kMss);
  std::vector<bool> sacked;  // per unit, from 0
  uint64_t reported = 0;
  for (int round = 0; round < 4000; ++round) {
    sb.on_sent(sb.snd_nxt(), kMss);
    sacked.resize(sb.snd_nxt() / kUnit, false);
    if (auto next = sb.next_segment_to_retransmit(); next && rng() % 2) {
      sb.on_sent(next->start, static_cast<uint32_t>(next->length()));
    }
    const uint64_t una = sb.snd_una(), nxt = sb.snd_nxt();
    std::vector<SackBlock> blocks;
    const int n = static_cast<int>(rng() % 4);
    for (int i = 0; i < n; ++i) {
      const uint64_t lo_unit = (una / kUnit) + rng() % ((nxt - una) / kUnit + 10);
      const uint64_t a = lo_unit >= 5 ? (lo_unit - 5) * kUnit : 0;
      blocks.push_back({a, a + kUnit * (1 + rng() % 25)});
    }
    uint64_t cum = una;
    if (rng() % 3 == 0) cum = std::min(nxt, una + kUnit * (rng() % 30));
    auto u = sb.on_ack(cum, blocks);
    ASSERT_FALSE(u.stale);
    reported += u.newly_acked_bytes;
    for (const auto& b : blocks)
      for (uint64_t x = std::max(b.start, cum); x < std::min(b.end, nxt); x += kUnit) sacked[x / kUnit] = true;
    uint64_t model = 0;
    for (uint64_t x = cum / kUnit; x < nxt / kUnit; ++x) model += sacked[x] ? kUnit : 0;
    ASSERT_EQ(sb.sacked_bytes(), model) << "round " << round;
    ASSERT_EQ(reported, sb.snd_una() + sb.sacked_bytes()) << "round " << round;
    ASSERT_LE(sb.lost_bytes() + sb.sacked_bytes(), sb.outstanding_bytes());
    ASSERT_LE(sb.retransmitted_bytes() + sb.sacked_bytes(), sb.outstanding_bytes());
    if (round % 700 == 699) {
      sb.on_timeout();
      std::fill(sacked.begin(), sacked.end(), false);
      reported = sb.snd_una();
      ASSERT_EQ(sb.pipe(), 0u);
      ASSERT_EQ(sb.lost_bytes(), sb.outstanding_bytes());
    }
  }
}

// Random sends, losses, SACKs and cumulative ACKs against a byte-set model:
// what the scoreboard reports delivered must equal what the receiver has.
TEST(SackScoreboard, RandomisedAgreesWithReceiverModel) {
  std::mt19937 rng(7);
  SackScoreboard sb(0, kMss);
  std::set<uint64_t> received;  // segment starts the receiver holds
  uint64_t rcv_nxt = 0;
  uint64_t reported = 0;
  std::bernoulli_distribution lose(0.1);
  for (int round = 0; round < 3000; ++round) {
    auto next = sb.next_segment_to_retransmit();
    uint64_t seq = next ? next->start : sb.snd_nxt();
    sb.on_sent(seq, kMss);
    if (!lose(rng)) received.insert(seq);
    while (received.count(rcv_nxt)) rcv_nxt += kMss;
    // Up to three SACK blocks of received data above rcv_nxt, newest runs first.
    std::vector<SackBlock> blocks;
    for (auto it = received.upper_bound(rcv_nxt); it != received.end() && blocks.size() < 3;) {
      SackBlock b{*it, *it + kMss};
      for (++it; it != received.end() && *it == b.end; ++it) b.end += kMss;
      blocks.push_back(b);
    }
    auto u = sb.on_ack(rcv_nxt, blocks);
    ASSERT_FALSE(u.stale);
    reported += u.newly_acked_bytes;
    uint64_t held = 0;
    for (uint64_t s : received)
      if (s >= rcv_nxt) held += kMss;
    // Reported deliveries = in-order data + SACKed data (only up to 3 blocks visible).
    ASSERT_EQ(reported, rcv_nxt + sb.sacked_bytes());
    ASSERT_LE(sb.sacked_bytes(), held);
    ASSERT_LE(sb.pipe(), sb.outstanding_bytes() + sb.retransmitted_bytes());
    if (round % 500 == 499) {
      sb.on_timeout();
      // Forgotten SACKs are reported again when cumulatively ACKed.
      reported = rcv_nxt;
    }
  }
  // 3000 sends at 10 % loss; lost retransmissions wait for the next timeout.
  EXPECT_GT(rcv_nxt, 1'500'000u);
}

}  // namespace
}  // namespace xcphost
