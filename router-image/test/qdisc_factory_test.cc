#include "qdisc/qdisc_factory.hh"

#include <stdexcept>
#include <string>

#include <gtest/gtest.h>

namespace xcprouter {
namespace {

std::string error_of(const nlohmann::json& cfg) {
  try {
    make_qdisc(cfg, 1);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

TEST(QdiscFactory, BuildsDropTailWithLimits) {
  auto q = make_qdisc({{"kind", "droptail"}, {"limit_packets", 10}, {"limit_bytes", 15000}}, 1);
  ASSERT_NE(q, nullptr);
  EXPECT_EQ(q->kind(), "droptail");
  EXPECT_EQ(q->limit().packets, 10u);
  EXPECT_EQ(q->limit().bytes, 15000u);
}

TEST(QdiscFactory, BuildsXcpWithParams) {
  auto q = make_qdisc({{"kind", "xcp"}, {"limit_packets", 50}, {"params", {{"alpha", 0.3}, {"capacity_bps", 8e6}}}}, 1);
  ASSERT_NE(q, nullptr);
  EXPECT_EQ(q->kind(), "xcp");
  nlohmann::json out;
  q->report(out);
  EXPECT_DOUBLE_EQ(out["xcp"]["alpha"].get<double>(), 0.3);
  EXPECT_DOUBLE_EQ(out["xcp"]["C"].get<double>(), 1e6);
}

TEST(QdiscFactory, BadXcpParamNamesField) {
  const auto msg = error_of({{"kind", "xcp"}, {"params", {{"beta", -1}}}});
  EXPECT_NE(msg.find("queue.params.beta"), std::string::npos) << msg;
  EXPECT_NE(error_of({{"kind", "xcp"}, {"params", 3}}).find("queue.params"), std::string::npos);
}

TEST(QdiscFactory, BuildsRed) {
  auto q = make_qdisc({{"kind", "red"}, {"limit_packets", 100}, {"params", {{"min_th", 5}, {"max_th", 20}}}}, 1);
  EXPECT_EQ(q->kind(), "red");
  const auto msg = error_of({{"kind", "red"}, {"params", {{"min_th", 30}, {"max_th", 20}}}});
  EXPECT_NE(msg.find("queue.params.max_th"), std::string::npos) << msg;
}

TEST(QdiscFactory, UnknownKindNamesFieldAndValidValues) {
  const auto msg = error_of({{"kind", "sfq"}});
  EXPECT_NE(msg.find("queue.kind"), std::string::npos) << msg;
  for (const char* k : {"droptail", "red", "xcp"}) EXPECT_NE(msg.find(k), std::string::npos) << msg;
  EXPECT_NE(msg.find("sfq"), std::string::npos) << msg;
}

TEST(QdiscFactory, MissingKindRejected) {
  EXPECT_NE(error_of({{"limit_packets", 3}}).find("queue.kind"), std::string::npos);
}

TEST(QdiscFactory, NegativeLimitRejected) {
  const auto msg = error_of({{"kind", "droptail"}, {"limit_packets", -1}});
  EXPECT_NE(msg.find("queue.limit_packets"), std::string::npos) << msg;
}

TEST(QdiscFactory, UnknownTopLevelFieldRejected) {
  const auto msg = error_of({{"kind", "droptail"}, {"limt_packets", 5}});
  EXPECT_NE(msg.find("queue.limt_packets"), std::string::npos) << msg;
}

TEST(QdiscFactory, UnknownParamRejected) {
  const auto msg = error_of({{"kind", "droptail"}, {"params", {{"foo", 1}}}});
  EXPECT_NE(msg.find("queue.params.foo"), std::string::npos) << msg;
}

}  // namespace
}  // namespace xcprouter
