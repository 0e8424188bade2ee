// iXCP in seed 001's Fig. 6 topology, in simulated time: a long flow over
// three links (150, 100, 120 Mb/s, scaled), short flows on one link each;
// each of the paper's three phases run from a static start (all flows from
// t = 0). At max-min every link is full in every phase, so the long flow is
// held by all three at once: the link named in its bottleneck_id shuffles
// toward it, the other two give it spare feedback only and keep its share
// for their own flows. Before the release of a flow held upstream and the
// claim of a flow clipped here (IXCP.md) the long flow stayed named after
// one link and reached 15 of 40 Mb/s over 5-20 s in phase 1 (scale 0.5), the
// engine's Fig. 6 failure.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "sim/link_chain.hh"

namespace xcprouter::sim {
namespace {

using xcp::Duration;
using xcp::Timestamp;

LinkChainConfig fig6(double scale) {
  LinkChainConfig cfg;
  for (double mbps : {150.0, 100.0, 120.0}) cfg.links.push_back(xcp::Rate::from_megabits_per_s(mbps * scale));
  return cfg;
}

struct Phase {
  std::vector<ChainFlow> flows;  // the long flow first
  std::vector<double> maxmin;    // Mb/s at scale 1
};

// Worst relative distance from max-min over [t0, t1) at scale 0.5 (the
// engine runs Fig. 6 at 0.5); the flows start together at t = 0.
void expect_maxmin(const Phase& ph, double t0_s, double t1_s, double bound, const char* name) {
  const double scale = 0.5;
  LinkChainConfig cfg = fig6(scale);
  cfg.flows = ph.flows;
  LinkChain sim(cfg);
  sim.run_until(at_s(t1_s));
  double worst = 0;
  std::string rates;
  for (size_t f = 0; f < ph.flows.size(); ++f) {
    const double mbps = sim.rate(ph.flows[f].first, f, at_s(t0_s), at_s(t1_s)) * 8 / 1e6 / scale;
    worst = std::max(worst, std::abs(mbps - ph.maxmin[f]) / ph.maxmin[f]);
    rates += " " + std::to_string(mbps);
  }
  EXPECT_LE(worst, bound) << name << ": flows (Mb/s at scale 1):" << rates;
  const double caps[] = {150, 100, 120};
  for (size_t l = 0; l < 3; ++l) {
    const double u = sim.link_rate(l, at_s(t0_s), at_s(t1_s)) * 8 / 1e6 / scale / caps[l];
    EXPECT_GE(u, 0.93) << name << " link " << l;
  }
  uint64_t drops = 0;
  for (size_t l = 0; l < 3; ++l) drops += sim.queue(l).counters().drops_total();
  EXPECT_EQ(drops, 0u) << name;
}

TEST(IxcpDynamic, EveryFlowReachesItsMaxMinRateInEachPhase) {
  // Fig. 6's check is within 10 % of max-min 5 s after each change. Worst
  // flow over 5-20 s before the release of flows held upstream and the claim
  // of flows clipped here (IXCP.md): phase 1 0.63, phase 2 0.67, phase 3
  // 0.73 (the long flow each time); with the release only (7e369a0): 0.087,
  // 0.74, 0.16, and link A at 0.91.
  // 0-20 s: long 40 (held by all three links), s1 110, s2 60, s3 = s4 = 40
  expect_maxmin({{{0, 2}, {0, 0}, {1, 1}, {2, 2}, {2, 2}}, {40, 110, 60, 40, 40}}, 5, 20, 0.10, "phase 1");
  // 20-40 s: s5-s7 join at A: long 30, s1 = s5 = s6 = s7 = 30, s2 70, s3 = s4 = 45
  expect_maxmin({{{0, 2}, {0, 0}, {1, 1}, {2, 2}, {2, 2}, {0, 0}, {0, 0}, {0, 0}}, {30, 30, 70, 45, 45, 30, 30, 30}},
                5, 20, 0.10, "phase 2");
  // 40-60 s: s4-s7 leave: long 50, s1 100, s2 50, s3 70
  expect_maxmin({{{0, 2}, {0, 0}, {1, 1}, {2, 2}}, {50, 100, 50, 70}}, 5, 20, 0.10, "phase 3");
}

}  // namespace
}  // namespace xcprouter::sim
