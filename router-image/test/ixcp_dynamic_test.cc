// iXCP in seed 001's Fig. 6 topology, first phase, in simulated time: a long
// flow over three links (150, 100, 120 Mb/s, scaled), s1 on the first, s2
// on the second, s3 and s4 on the third, all from t = 0. Max-min: long 40,
// s1 110, s2 60, s3 = s4 = 40 Mb/s (at scale 1). At max-min every link is
// full, so the long flow is held by all three at once: the link named in
// its bottleneck_id shuffles toward it, the other two give it spare
// feedback only and keep its share for their own flow. Before the release
// of a flow held upstream (IXCP.md) the long flow stayed named after the
// 100 link and reached 15 of 40 Mb/s over 5-20 s (scale 0.5), the engine's
// Fig. 6 failure.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>

#include "sim/link_chain.hh"

namespace xcprouter::sim {
namespace {

using xcp::Duration;
using xcp::Timestamp;

Timestamp at_s(double s) { return Timestamp::zero() + Duration::seconds(s); }

LinkChainConfig fig6(double scale) {
  LinkChainConfig cfg;
  for (double mbps : {150.0, 100.0, 120.0}) cfg.links.push_back(xcp::Rate::from_megabits_per_s(mbps * scale));
  cfg.flows = {{0, 2}, {0, 0}, {1, 1}, {2, 2}, {2, 2}};  // long, s1, s2, s3, s4
  return cfg;
}

TEST(IxcpDynamic, EveryFlowReachesItsMaxMinRateInPhaseOne) {
  const double scale = 0.5;  // the engine runs Fig. 6 at 0.5
  LinkChain sim(fig6(scale));
  sim.run_until(at_s(20));
  const double maxmin[] = {40, 110, 60, 40, 40};
  const size_t link_of[] = {2, 0, 1, 2, 2};
  const Timestamp t0 = at_s(5), t1 = at_s(20);  // the spec's 5 s settle
  double worst = 0;
  std::string rates;
  for (size_t f = 0; f < 5; ++f) {
    const double mbps = sim.rate(link_of[f], f, t0, t1) * 8 / 1e6 / scale;
    worst = std::max(worst, std::abs(mbps - maxmin[f]) / maxmin[f]);
    rates += " " + std::to_string(mbps);
  }
  // Fig. 6's check: within 10 % of max-min (before the release: 0.63, the
  // long flow at 15 Mb/s).
  EXPECT_LE(worst, 0.10) << "long s1 s2 s3 s4 (Mb/s at scale 1):" << rates;
  const double caps[] = {150, 100, 120};
  for (size_t l = 0; l < 3; ++l) {
    const double u = sim.link_rate(l, t0, t1) * 8 / 1e6 / scale / caps[l];
    // Links B and C fill (0.99); link A runs at 0.91: a released long flow
    // matches there for a round trip and A's shuffle takes from s1 what B
    // and C do not let the long flow use (IXCP.md).
    EXPECT_GE(u, l == 0 ? 0.88 : 0.97) << "link " << l;
  }
  EXPECT_EQ(sim.queue(0).counters().drops_total() + sim.queue(1).counters().drops_total() +
                sim.queue(2).counters().drops_total(),
            0u);
}

}  // namespace
}  // namespace xcprouter::sim
