#include "core/packet_pool.hh"

#include <gtest/gtest.h>

#include <vector>

namespace xcprouter {
namespace {

TEST(PacketPool, RecyclesBuffersInSteadyState) {
  std::vector<PacketPtr> live;
  for (int i = 0; i < 100; ++i) live.push_back(PacketPool::acquire());
  live.clear();  // back to the free list
  const uint64_t before = PacketPool::allocated_blocks();
  for (int round = 0; round < 1000; ++round) {
    for (int i = 0; i < 100; ++i) live.push_back(PacketPool::acquire());
    live.clear();
  }
  EXPECT_EQ(PacketPool::allocated_blocks(), before);
}

TEST(PacketPool, MakeUniqueAndDropsUseThePoolToo) {
  { auto warm = std::make_unique<Packet>(); }
  const uint64_t before = PacketPool::allocated_blocks();
  for (int i = 0; i < 1000; ++i) {
    auto p = std::make_unique<Packet>();
    p->frame_len = 60;
  }  // destroyed like a queue drop
  EXPECT_EQ(PacketPool::allocated_blocks(), before);
}

TEST(PacketPool, FreshPacketHasResetMetadata) {
  { auto p = PacketPool::acquire(); p->frame_len = 999; p->xcp_offset = 34; }
  auto p = PacketPool::acquire();
  EXPECT_EQ(p->frame_len, 0u);
  EXPECT_EQ(p->xcp_offset, 0);
  EXPECT_FALSE(p->has_xcp());
}

}  // namespace
}  // namespace xcprouter
