// iXCP in seed 001's Fig. 4 topology, in simulated time, at the scale the
// engine runs it (0.1: 34, 24, 16, 12, 6 Mb/s): five links in series, group
// k (10, 10, 10, 20, 30 flows) crosses links 1..k and is bottlenecked at
// link k, max-min 10, 8, 4, 3, 2 Mb/s (scaled). Every link is full at
// max-min, so a flow crosses up to four full links that are not its
// bottleneck. Before the claim of a flow as fast as the flows here (IXCP.md)
// the second group's flows sent about a third of their packets named after
// link 1 (each ACK names the next packet after the one it acknowledges, so a
// window's packets kept the ids they carried; link 2, which holds them, never
// claimed a flow that fast on positive feedback): link 1 shuffled its own
// group's bandwidth toward them, which link 2 clipped, and ran at 0.943,
// its group at 0.86 of max-min (the engine: 0.957).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>

#include "sim/link_chain.hh"

namespace xcprouter::sim {
namespace {

using xcp::Duration;
using xcp::Timestamp;

TEST(IxcpFiveHop, EveryLinkFullAndEveryGroupAtItsMaxMinRate) {
  const double scale = 0.1;
  const double caps[] = {340, 240, 160, 120, 60};  // Mb/s at scale 1
  const size_t groups[] = {10, 10, 10, 20, 30};
  const double maxmin[] = {10, 8, 4, 3, 2};
  LinkChainConfig cfg;
  for (double c : caps) cfg.links.push_back(xcp::Rate::from_megabits_per_s(c * scale));
  for (size_t g = 0; g < 5; ++g) {
    for (size_t i = 0; i < groups[g]; ++i) cfg.flows.push_back({0, g, 0});
  }
  cfg.buffer_packets = 1000;
  LinkChain sim(cfg);
  // Which link group 2's flows name, sampled every 10 ms over 15-30 s.
  size_t g2_samples = 0, g2_named_link2 = 0;
  const size_t g2_first = groups[0];
  sim.run_until(at_s(15));
  for (int i = 1; i <= 1500; ++i) {
    sim.run_until(at_s(15 + i * 0.01));
    for (size_t f = g2_first; f < g2_first + groups[1]; ++f) {
      ++g2_samples;
      g2_named_link2 += sim.flow(f).bottleneck_id() == 2;
    }
  }
  const Timestamp t0 = at_s(15), t1 = at_s(30);
  std::string rates;
  size_t f = 0;
  double worst = 0;
  for (size_t g = 0; g < 5; ++g) {
    double bytes_per_s = 0;
    for (size_t i = 0; i < groups[g]; ++i, ++f) bytes_per_s += sim.rate(0, f, t0, t1);
    const double mbps = bytes_per_s / groups[g] * 8 / 1e6 / scale;
    worst = std::max(worst, std::abs(mbps - maxmin[g]) / maxmin[g]);
    rates += " " + std::to_string(mbps);
  }
  // 2026-11-28: links 0.969 / 0.964 / 0.972 / 0.979 / 0.989, worst group
  // 0.053 off (group 2), group 2 named after link 2 in 0.97 of the samples;
  // the law before: 0.944 / 0.958 / 0.971 / 0.981 / 0.995, group 1 0.09 off,
  // 0.64 of the samples.
  EXPECT_GE(static_cast<double>(g2_named_link2) / g2_samples, 0.9);
  EXPECT_LE(worst, 0.08) << "groups (Mb/s at scale 1):" << rates;
  for (size_t l = 0; l < 5; ++l) {
    EXPECT_GE(sim.link_rate(l, t0, t1) * 8 / 1e6 / scale / caps[l], 0.955) << "link " << l + 1;
  }
  uint64_t drops = 0;
  for (size_t l = 0; l < 5; ++l) drops += sim.queue(l).counters().drops_total();
  EXPECT_EQ(drops, 0u);
}

}  // namespace
}  // namespace xcprouter::sim
