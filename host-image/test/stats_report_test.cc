// xcp-stackd --json-stream's lines (stackd/stats_report.hh) with a fake clock.
#include "stackd/stats_report.hh"

#include <gtest/gtest.h>

#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace xcpstackd {
namespace {

std::vector<nlohmann::json> lines_of(std::FILE* f) {
  std::rewind(f);
  std::vector<nlohmann::json> out;
  char buf[4096];
  while (std::fgets(buf, sizeof buf, f) != nullptr) out.push_back(nlohmann::json::parse(buf));
  return out;
}

ConnSnapshot conn(uint16_t local, uint64_t acked) {
  ConnSnapshot s;
  s.key = xcphost::FlowKey{0x0a000102, local, 8080};  // 10.0.1.2:8080
  s.cc = xcphost::CcKind::kXcp;
  s.info.bytes_acked = acked;
  s.info.cwnd_bytes = 14240;
  s.info.srtt_us = 40123;
  s.info.feedback_bytes = -1500;
  s.info.state = 1;
  s.timeouts = 2;
  return s;
}

TEST(StatsReport, OneIntervalLinePerIntervalAndExactClosedLines) {
  std::FILE* f = std::tmpfile();
  ASSERT_NE(f, nullptr);
  const xcp::Timestamp t0 = xcp::Timestamp::from_ns(5'000'000'000);
  StatsReport r(f, xcp::Duration::milliseconds(100), t0);
  r.started("@xcp-stackd");
  r.listening(8080);
  EXPECT_FALSE(r.due(t0 + xcp::Duration::milliseconds(99)));
  EXPECT_TRUE(r.due(t0 + xcp::Duration::milliseconds(100)));
  EXPECT_FALSE(r.due(t0 + xcp::Duration::milliseconds(150)));  // once per interval
  // A loop stalled for 3.5 intervals gets one line, not a burst of four.
  EXPECT_TRUE(r.due(t0 + xcp::Duration::milliseconds(550)));
  EXPECT_FALSE(r.due(t0 + xcp::Duration::milliseconds(599)));
  r.interval(t0 + xcp::Duration::milliseconds(550), {});  // no connections: no line
  r.interval(t0 + xcp::Duration::milliseconds(550), {conn(40000, 1000), conn(40001, 0)});
  r.closed(conn(40000, 6'832'025));
  const auto ls = lines_of(f);
  std::fclose(f);
  ASSERT_EQ(ls.size(), 4u);
  EXPECT_EQ(ls[0]["event"], "start");
  EXPECT_EQ(ls[0]["data"]["socket"], "@xcp-stackd");
  EXPECT_EQ(ls[1]["data"]["port"], 8080);
  EXPECT_EQ(ls[2]["event"], "interval");
  EXPECT_DOUBLE_EQ(ls[2]["data"]["t_s"].get<double>(), 0.55);
  ASSERT_EQ(ls[2]["data"]["streams"].size(), 2u);
  const auto& s = ls[2]["data"]["streams"][0];
  EXPECT_EQ(s["socket"], "40000-10.0.1.2:8080");
  EXPECT_EQ(s["remote_addr"], "10.0.1.2");
  EXPECT_EQ(s["cc"], "xcp");
  EXPECT_EQ(s["state"], "established");
  EXPECT_EQ(s["bytes"], 1000);
  EXPECT_EQ(s["cwnd"], 14240);
  EXPECT_EQ(s["srtt_us"], 40123);
  EXPECT_EQ(s["feedback_bytes"], -1500);
  EXPECT_EQ(s["timeouts"], 2);
  EXPECT_EQ(ls[3]["event"], "closed");
  EXPECT_EQ(ls[3]["data"]["bytes"], 6'832'025);
}

TEST(StatsReport, WithoutAStreamEveryCallIsSilent) {
  StatsReport r(nullptr, xcp::Duration::milliseconds(100), xcp::Timestamp::zero());
  EXPECT_FALSE(r.enabled());
  EXPECT_FALSE(r.due(xcp::Timestamp::zero() + xcp::Duration::seconds(10)));
  r.started("x");
  r.listening(1);
  r.closed(conn(1, 1));  // no crash, nothing to write to
}

}  // namespace
}  // namespace xcpstackd
