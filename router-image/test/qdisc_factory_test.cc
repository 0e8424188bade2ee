#include "qdisc/qdisc_factory.hh"

#include <stdexcept>
#include <string>

#include <gtest/gtest.h>

#include "qdisc/xcp_qdisc.hh"

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

// The config loader reads a queue once; the router builds every link's queue from what
// it read, with the link's seed. The build keeps the values read, not the JSON.
TEST(QdiscFactory, ReadOnceThenBuiltPerSeedWithTheParamsRead) {
  QueueConfig c;
  {
    const nlohmann::json cfg = {{"kind", "xcp"},
                                {"limit_packets", 50},
                                {"params", {{"alpha", 0.3}, {"capacity_bps", 8e6}, {"tcp_fairness", true}}}};
    c = read_queue_config(cfg);
  }  // the JSON is gone: what builds is what was read
  EXPECT_EQ(c.kind, "xcp");
  EXPECT_EQ(c.limit.packets, 50u);
  auto a = c.make(1);
  auto b = c.make(2);
  ASSERT_NE(a.get(), b.get());
  for (const auto* q : {a.get(), b.get()}) {
    EXPECT_EQ(q->limit().packets, 50u);
    nlohmann::json out;
    q->report(out);
    EXPECT_DOUBLE_EQ(out["xcp"]["alpha"].get<double>(), 0.3);
    EXPECT_DOUBLE_EQ(out["xcp"]["C"].get<double>(), 1e6);
    EXPECT_TRUE(out["xcp"]["capacity_override"].get<bool>());
    EXPECT_NE(dynamic_cast<const XcpQdisc&>(*q).fairness(), nullptr);
  }
}

TEST(QdiscFactory, BadParamsRefusedWhenReadNotWhenBuilt) {
  EXPECT_THROW(read_queue_config({{"kind", "ixcp"}}), std::invalid_argument);  // link_id required
  EXPECT_THROW(read_queue_config({{"kind", "red"}, {"params", {{"min_th", 30}, {"max_th", 20}}}}),
               std::invalid_argument);
  EXPECT_THROW(read_queue_config({{"kind", "droptail"}, {"params", {{"alpha", 1}}}}), std::invalid_argument);
}

// Live configure reads over the queue's current settings: a key left out keeps its value.
TEST(QdiscFactory, LiveConfigureKeepsWhatItDoesNotName) {
  auto q = make_qdisc({{"kind", "xcp"}, {"limit_packets", 50}, {"params", {{"alpha", 0.3}, {"capacity_bps", 8e6}}}}, 1);
  q->configure({{"gamma", 0.2}});
  nlohmann::json out;
  q->report(out);
  EXPECT_DOUBLE_EQ(out["xcp"]["alpha"].get<double>(), 0.3);
  EXPECT_DOUBLE_EQ(out["xcp"]["gamma"].get<double>(), 0.2);
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
