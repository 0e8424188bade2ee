#include "qdisc/drop_tail.hh"

#include <stdexcept>
#include <string>

#include <gtest/gtest.h>

#include "qdisc_test_util.hh"

namespace xcprouter {
namespace {

using xcp::Timestamp;

TEST(DropTail, FifoOrderAndAccounting) {
  DropTail q({.packets = 0, .bytes = 0});
  for (uint16_t i = 1; i <= 3; ++i) ASSERT_TRUE(q.enqueue(testutil::make_packet(100 * i), Timestamp::zero()));
  EXPECT_EQ(q.packets(), 3u);
  EXPECT_EQ(q.bytes(), 600u);
  for (uint16_t i = 1; i <= 3; ++i) {
    auto p = q.dequeue(Timestamp::zero());
    ASSERT_NE(p, nullptr);
    EXPECT_EQ(p->wire_bytes(), 100u * i);
  }
  EXPECT_EQ(q.dequeue(Timestamp::zero()), nullptr);
  EXPECT_EQ(q.bytes(), 0u);
  EXPECT_EQ(q.counters().dequeued_packets, 3u);
}

TEST(DropTail, PacketLimitDropsArrivals) {
  DropTail q({.packets = 2, .bytes = 0});
  EXPECT_TRUE(q.enqueue(testutil::make_packet(1500), Timestamp::zero()));
  EXPECT_TRUE(q.enqueue(testutil::make_packet(1500), Timestamp::zero()));
  EXPECT_FALSE(q.enqueue(testutil::make_packet(40), Timestamp::zero()));
  EXPECT_EQ(q.counters().drops_overflow, 1u);
  EXPECT_EQ(q.packets(), 2u);
}

TEST(DropTail, ByteLimitAdmitsSmallPacketThatFits) {
  DropTail q({.packets = 0, .bytes = 3000});
  EXPECT_TRUE(q.enqueue(testutil::make_packet(1500), Timestamp::zero()));
  EXPECT_TRUE(q.enqueue(testutil::make_packet(1000), Timestamp::zero()));
  EXPECT_FALSE(q.enqueue(testutil::make_packet(1000), Timestamp::zero()));  // 3500 > 3000
  EXPECT_TRUE(q.enqueue(testutil::make_packet(500), Timestamp::zero()));    // exactly 3000
  EXPECT_EQ(q.bytes(), 3000u);
  EXPECT_EQ(q.counters().drops_overflow, 1u);
  EXPECT_EQ(q.counters().max_bytes, 3000u);
}

TEST(DropTail, ConfigureRejectsAnyParam) {
  DropTail q({.packets = 5, .bytes = 0});
  EXPECT_NO_THROW(q.configure(nlohmann::json::object()));
  EXPECT_NO_THROW(q.configure(nullptr));
  try {
    q.configure({{"max_p", 0.1}});
    FAIL() << "accepted a param DropTail does not have";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("queue.params.max_p"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace xcprouter
