// ZombieTable + HitRate (SRED zombie estimator, seed 004 §4.2): 1/P converges
// to the number of flows of a class, and one table per class (not one shared
// table) is what gives BW_XCP = O·N/(N+M).
#include "fairness/zombie_table.hh"

#include <cmath>

#include <gtest/gtest.h>

#include "fairness/hit_rate.hh"
#include "xcp/uniform_rng.hh"

namespace xcprouter {
namespace {

constexpr double kDelta = 0.00025;

FlowKey flow(uint32_t i, uint8_t proto = 253) {
  return FlowKey{.src = 0x0a000001 + i, .dst = 0x0a010001, .sport = static_cast<uint16_t>(5000 + i),
                 .dport = 5201, .proto = proto};
}

// N flows sending alike (each packet from a flow drawn at random). Returns
// 1/P at the end and 1/mean(P) over the second half of the packets.
struct Estimate {
  double last, mean;
};
Estimate estimate_flows(uint32_t n, double replacement, double inspect, int packets, uint64_t seed) {
  UniformRng traffic(seed), rng(seed + 1);
  ZombieTable table(1000, replacement);
  HitRate hits(kDelta);
  double sum = 0;
  int samples = 0;
  for (int i = 0; i < packets; ++i) {
    const auto f = static_cast<uint32_t>(traffic.next() * n);
    if (traffic.next() < inspect) {
      if (auto hit = table.probe(flow(f), rng)) hits.add(*hit);
    }
    if (i >= packets / 2) {
      sum += hits.p();
      ++samples;
    }
  }
  return {hits.flows(), samples / sum};
}

class ZombieConverges : public ::testing::TestWithParam<uint32_t> {};

TEST_P(ZombieConverges, OneOverPIsTheFlowCount) {
  const uint32_t n = GetParam();
  // 1/δ = 4000 probes per time constant; 400 000 probes is 100 of them.
  const Estimate e = estimate_flows(n, 0.25, 1.0, 400'000, 7 + n);
  // P converges to 1/N (its time average over ~50 time constants within 5 %).
  // One sample of 1/P scatters by about sqrt(δ·N/2): 2 % at N = 3, 7 % at 50,
  // 22 % at 200 — with a 1000-entry table and this δ, SRED's estimate is for
  // tens of flows, not hundreds.
  EXPECT_NEAR(e.mean, n, 0.05 * n) << n << " flows";
  EXPECT_NEAR(e.last, n, 3 * std::sqrt(kDelta * n / 2) * n + 0.05) << n << " flows";
}

INSTANTIATE_TEST_SUITE_P(Flows, ZombieConverges, ::testing::Values(1u, 3u, 10u, 50u, 200u));

TEST(ZombieTable, HalfInspectionWithReplacementHalfStillConverges) {
  // Seed 004 §6: inspect 50 % of the packets, replace with probability 0.5.
  EXPECT_NEAR(estimate_flows(10, 0.5, 0.5, 400'000, 3).mean, 10.0, 0.3);
  EXPECT_NEAR(estimate_flows(3, 0.5, 0.5, 400'000, 4).mean, 3.0, 0.1);
}

TEST(ZombieTable, FillsBeforeItProbes) {
  UniformRng rng(1);
  ZombieTable t(4, 0.25);
  for (int i = 0; i < 4; ++i) EXPECT_FALSE(t.probe(flow(0), rng).has_value());
  EXPECT_EQ(t.filled(), 4u);
  EXPECT_EQ(t.probe(flow(0), rng), std::optional<bool>(true));
  EXPECT_EQ(t.probe(flow(1), rng), std::optional<bool>(false));
}

TEST(HitRate, StartsAtOneFlowAndFollowsEquation5) {
  HitRate h(0.5);
  EXPECT_DOUBLE_EQ(h.flows(), 1.0);
  h.add(false);  // P = 0.5·1 + 0
  EXPECT_DOUBLE_EQ(h.p(), 0.5);
  h.add(true);  // P = 0.5·0.5 + 0.5
  EXPECT_DOUBLE_EQ(h.p(), 0.75);
}

// 10 XCP + 3 TCP flows at equal rates (the fair allocation): the share XCP
// is owed is N/(N+M) = 10/13 = 0.77.
struct Shares {
  double shared, per_class;
};

Shares xcp_share_estimates(uint32_t n_xcp, uint32_t m_tcp, uint64_t seed) {
  UniformRng traffic(seed), rng(seed + 1);
  ZombieTable shared(1000, 0.25), xcp_table(1000, 0.25), tcp_table(1000, 0.25);
  HitRate shared_x(kDelta), shared_t(kDelta), own_x(kDelta), own_t(kDelta);
  for (int i = 0; i < 400'000; ++i) {
    const auto f = static_cast<uint32_t>(traffic.next() * (n_xcp + m_tcp));
    const bool is_xcp = f < n_xcp;
    const FlowKey k = flow(f, is_xcp ? 253 : 6);
    auto s = shared.probe(k, rng);
    auto o = (is_xcp ? xcp_table : tcp_table).probe(k, rng);
    if (s) (is_xcp ? shared_x : shared_t).add(*s);
    if (o) (is_xcp ? own_x : own_t).add(*o);
  }
  auto share = [](const HitRate& x, const HitRate& t) { return x.flows() / (x.flows() + t.flows()); };
  return {share(shared_x, shared_t), share(own_x, own_t)};
}

TEST(ZombieTable, OneTablePerClassNotOneSharedTable) {
  // A shared table holds each flow in proportion to its packets, so a class's
  // hit probability is 1/(N+M) for both classes when rates are equal: the
  // share estimate is 1/2 whatever the counts.
  const Shares s = xcp_share_estimates(10, 3, 11);
  EXPECT_NEAR(s.shared, 0.49, 0.04);
  EXPECT_NEAR(s.per_class, 10.0 / 13.0, 0.03);
  const Shares s2 = xcp_share_estimates(5, 3, 12);
  EXPECT_NEAR(s2.shared, 0.5, 0.04);
  EXPECT_NEAR(s2.per_class, 5.0 / 8.0, 0.03);
}

}  // namespace
}  // namespace xcprouter
