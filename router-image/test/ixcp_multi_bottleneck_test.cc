// iXCP in Low's topology (seed 001 Fig. 1, scaled 155/100 → 20/10 Mb/s), in
// simulated time: where plain XCP leaves the first link under-used
// (xcp_multi_bottleneck_test.cc), iXCP fills it and gives the short flow its
// max-min share, because link 1 stops shuffling bandwidth toward the long
// flows bottlenecked at link 2.
#include <gtest/gtest.h>

#include "sim/two_link_chain.hh"

namespace xcprouter::sim {
namespace {

using xcp::Duration;
using xcp::Timestamp;

ChainConfig chain(size_t long_flows, bool ixcp) { return low_chain(long_flows, ixcp); }

struct Result {
  double util1, util2, short_share;
};

Result run(size_t n, bool ixcp) {
  TwoLinkChain sim(chain(n, ixcp));
  sim.run_until(at_s(30));
  const Timestamp t0 = at_s(15), t1 = at_s(30);
  const double c1 = 20e6 / 8, c2 = 10e6 / 8;
  return {sim.rate(1, 0, sim.flow_count(), t0, t1) / c1, sim.rate(2, 0, n, t0, t1) / c2,
          // the short flow's max-min rate is C1 − C2 = 10 Mb/s
          sim.rate(1, n, n + 1, t0, t1) / (c1 - c2)};
}

TEST(IxcpMultiBottleneck, FillsTheFirstLinkWhereXcpDoesNot) {
  for (size_t n : {4, 16}) {
    const Result x = run(n, false);
    const Result i = run(n, true);
    // seed 001 §4.1 reports > 97 % of link 1 and > 90 % of max-min for the short
    // flow; this model reaches 95-97 % / 90-95 % over 15-30 s (IXCP.md), XCP 82-88 %.
    EXPECT_GE(i.util1, 0.94) << n;
    EXPECT_GE(i.short_share, 0.88) << n;
    EXPECT_GE(i.util2, 0.97) << n;
    EXPECT_GT(i.util1, x.util1 + 0.05) << n;
    EXPECT_GT(i.short_share, x.short_share + 0.1) << n;
  }
}

TEST(IxcpMultiBottleneck, FlowsLearnTheirBottleneckIds) {
  TwoLinkChain sim(chain(4, true));
  sim.run_until(at_s(10));
  for (size_t f = 0; f < 4; ++f) EXPECT_EQ(sim.flow(f).bottleneck_id(), 2u) << "long flow " << f;
  EXPECT_EQ(sim.flow(4).bottleneck_id(), 1u);
  EXPECT_EQ(sim.queue(1).counters().drops_total() + sim.queue(2).counters().drops_total(), 0u);
}

}  // namespace
}  // namespace xcprouter::sim
