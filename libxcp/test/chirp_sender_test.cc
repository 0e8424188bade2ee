// U's chirp jobs (xcp/chirp_sender.hh): what a request starts, when probes are
// due, retries that must not stack probe trains, and the job bound.
#include <gtest/gtest.h>

#include <vector>

#include "xcp/chirp_sender.hh"

namespace xcp {
namespace {

struct Sent {
  uint32_t dst;
  ControlMessage m;
  size_t payload;
  Timestamp at;
};

std::vector<Sent> run_until(ChirpSender& s, Timestamp end) {
  std::vector<Sent> out;
  for (Timestamp t = s.next_deadline(); t <= end; t = s.next_deadline()) {
    s.run(t, [&](uint32_t dst, ControlMessage& m, size_t payload, Timestamp at) { out.push_back({dst, m, payload, at}); });
  }
  return out;
}

ControlMessage request(uint32_t session, uint32_t seq, uint32_t chirps, double h_bps) {
  return {ControlType::kRequest, session, seq, chirps, static_cast<uint64_t>(h_bps)};
}

TEST(ChirpSender, SendsTheChirpsOfTheRequestedGridAtItsPeriod) {
  UniformRng rng(1);
  ChirpConfig tmpl;
  tmpl.dither = false;
  ChirpSender s(tmpl, 0.02, 4, rng);
  EXPECT_EQ(s.next_deadline(), Timestamp::max());
  const Timestamp t0 = Timestamp::from_ns(1'000'000'000);
  ASSERT_EQ(s.on_request(7, request(0xAB, 2, 3, 30e6), t0), 3u);
  const ChirpConfig grid = tmpl.for_rate(Rate::from_bits_per_s(30e6), 0.02);
  const ChirpSchedule sched(grid);
  const auto sent = run_until(s, t0 + Duration::seconds(10.0));
  ASSERT_EQ(sent.size(), 3u * sched.packets());
  for (size_t i = 0; i < sent.size(); ++i) {
    const size_t chirp = i / sched.packets(), k = i % sched.packets();
    const Timestamp want = t0 + grid.chirp_period * static_cast<double>(chirp) + sched.offsets()[k];
    EXPECT_EQ(sent[i].dst, 7u);
    EXPECT_EQ(sent[i].m.type, ControlType::kProbe);
    EXPECT_EQ(sent[i].m.session, 0xABu);
    EXPECT_EQ(sent[i].m.seq, 2u * ChirpSender::kMaxChirpsPerRequest + chirp);
    EXPECT_EQ(sent[i].m.probe_index(), k);
    EXPECT_EQ(sent[i].m.probe_count(), sched.packets());
    EXPECT_EQ(sent[i].at, want);
    EXPECT_EQ(sent[i].m.value, static_cast<uint64_t>(want.ns()));
    EXPECT_EQ(sent[i].payload, tmpl.packet_bytes - 20u);
  }
  EXPECT_EQ(s.jobs(), 0u);
  EXPECT_EQ(s.counters().probes_sent, sent.size());
  EXPECT_EQ(s.counters().probe_bytes, sent.size() * tmpl.packet_bytes);
}

TEST(ChirpSender, OracleRequestsSendNothingAndRetriesExtendOneJob) {
  UniformRng rng(2);
  ChirpSender s(ChirpConfig{}, 0.02, 4, rng);
  EXPECT_EQ(s.on_request(7, request(1, 1, 0, 30e6), Timestamp::zero()), 0u);
  EXPECT_EQ(s.jobs(), 0u);
  EXPECT_EQ(s.on_request(7, request(1, 1, 2, 30e6), Timestamp::zero()), 2u);
  EXPECT_EQ(s.on_request(7, request(1, 2, 2, 30e6), Timestamp::zero()), 2u);  // retry: same job
  EXPECT_EQ(s.jobs(), 1u);
  const ChirpSchedule sched(ChirpConfig{}.for_rate(Rate::from_bits_per_s(30e6), 0.02));
  EXPECT_EQ(run_until(s, Timestamp::from_ns(100'000'000'000)).size(), 2u * sched.packets());
}

TEST(ChirpSender, RefusesJobsBeyondItsBoundAndClampsChirps) {
  UniformRng rng(3);
  ChirpSender s(ChirpConfig{}, 0.02, 2, rng);
  EXPECT_EQ(s.on_request(1, request(1, 1, 5, 10e6), Timestamp::zero()), 5u);
  EXPECT_EQ(s.on_request(2, request(1, 1, 5, 10e6), Timestamp::zero()), 5u);
  EXPECT_EQ(s.on_request(3, request(1, 1, 5, 10e6), Timestamp::zero()), 0u);
  EXPECT_EQ(s.counters().jobs_refused, 1u);
  UniformRng rng2(4);
  ChirpSender big(ChirpConfig{}, 0.02, 2, rng2);
  EXPECT_EQ(big.on_request(1, request(1, 1, 70000, 10e6), Timestamp::zero()), ChirpSender::kMaxChirpsPerRequest);
}

TEST(ChirpSender, AWakeUpPeriodsLateDoesNotSendTheMissedChirpsBackToBack) {
  UniformRng rng(5);
  ChirpConfig tmpl;
  tmpl.dither = false;
  ChirpSender s(tmpl, 0.02, 4, rng);
  const Timestamp t0 = Timestamp::from_ns(1'000'000'000);
  ASSERT_EQ(s.on_request(7, request(1, 1, 6, 30e6), t0), 6u);
  const ChirpConfig grid = tmpl.for_rate(Rate::from_bits_per_s(30e6), 0.02);
  const size_t n = ChirpSchedule(grid).packets();
  std::vector<Sent> sent;
  auto emit = [&](uint32_t dst, ControlMessage& m, size_t payload, Timestamp at) { sent.push_back({dst, m, payload, at}); };
  s.run(s.next_deadline(), emit);  // on time: the first chirp's first probe
  // the caller stalls for ten periods, then wakes on every deadline again
  const Timestamp woke = t0 + grid.chirp_period * 10.0;
  s.run(woke, emit);
  for (Timestamp t = s.next_deadline(); t != Timestamp::max(); t = s.next_deadline()) s.run(t, emit);
  ASSERT_EQ(sent.size(), 6u * n);
  for (size_t c = 2; c < 6; ++c) {  // chirps after the one the stall cut into
    const Duration gap = sent[c * n].at - sent[(c - 1) * n].at;
    EXPECT_GE(gap, grid.chirp_period) << "chirp " << c << " started " << gap.ns() << " ns after the previous";
  }
  EXPECT_GE(sent[n].at, woke);  // the first chirp after the stall starts when the caller woke
}

}  // namespace
}  // namespace xcp
