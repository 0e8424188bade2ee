#include <gtest/gtest.h>

#include "cc/congestion_controller.hh"

namespace xcphost {
namespace {

TEST(CcFactory, ParsesEveryKindAndRoundTrips) {
  for (CcKind k : {CcKind::kXcp, CcKind::kNewReno, CcKind::kHighSpeed}) {
    auto parsed = parse_cc_kind(to_string(k));
    ASSERT_TRUE(parsed.has_value()) << to_string(k);
    EXPECT_EQ(*parsed, k);
  }
  EXPECT_EQ(parse_cc_kind("xcp"), CcKind::kXcp);
  EXPECT_EQ(parse_cc_kind("newreno"), CcKind::kNewReno);
  EXPECT_EQ(parse_cc_kind("hstcp"), CcKind::kHighSpeed);
}

TEST(CcFactory, RejectsUnknownNames) {
  for (const char* bad : {"", "XCP", "reno", "cubic", "hstcp ", "newreno\n"}) {
    EXPECT_FALSE(parse_cc_kind(bad).has_value()) << '"' << bad << '"';
  }
}

TEST(CcFactory, BuildsTheNamedController) {
  CcConfig cfg;
  for (CcKind k : {CcKind::kXcp, CcKind::kNewReno, CcKind::kHighSpeed}) {
    auto cc = make_congestion_controller(k, cfg);
    ASSERT_NE(cc, nullptr);
    EXPECT_EQ(cc->name(), to_string(k));
    EXPECT_GE(cc->cwnd_bytes(), cfg.mss_bytes);
  }
}

TEST(CcFactory, XcpReactsToFeedbackTcpDoesNot) {
  CcConfig cfg;
  AckEvent a;
  a.duplicate = true;
  a.reverse_feedback_bytes = 15'000;
  auto xcp = make_congestion_controller(CcKind::kXcp, cfg);
  auto reno = make_congestion_controller(CcKind::kNewReno, cfg);
  const uint64_t x0 = xcp->cwnd_bytes(), r0 = reno->cwnd_bytes();
  xcp->on_ack(a);
  reno->on_ack(a);
  EXPECT_GT(xcp->cwnd_bytes(), x0);
  EXPECT_EQ(reno->cwnd_bytes(), r0);
}

}  // namespace
}  // namespace xcphost
