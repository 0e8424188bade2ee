#include "transport/reassembly_queue.hh"

#include <gtest/gtest.h>

#include <array>
#include <vector>

namespace xcphost {
namespace {

std::vector<uint8_t> bytes(uint64_t from, size_t n) {
  std::vector<uint8_t> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<uint8_t>(from + i);
  return v;
}

TEST(ReassemblyQueue, HoldsOverlappingOutOfOrderBytesOnceAndDrainsInOrder) {
  ReassemblyQueue q;
  q.insert(20, bytes(20, 10));  // [20,30)
  q.insert(25, bytes(25, 10));  // overlaps: adds [30,35)
  q.insert(40, bytes(40, 5));   // [40,45)
  q.insert(22, bytes(22, 3));   // already held
  EXPECT_EQ(q.held_bytes(), 20u);
  std::array<SackBlock, 4> sacks{};
  ASSERT_EQ(q.sack_blocks(sacks), 2u);
  EXPECT_EQ(sacks[0], (SackBlock{20, 35}));  // most recent insert (22) lies in [20,35)
  EXPECT_EQ(sacks[1], (SackBlock{40, 45}));

  std::vector<uint8_t> got;
  auto sink = [&](std::span<const uint8_t> d) { got.insert(got.end(), d.begin(), d.end()); };
  EXPECT_EQ(q.drain(10, sink), 10u);  // hole at [10,20): nothing
  EXPECT_TRUE(got.empty());
  EXPECT_EQ(q.drain(20, sink), 35u);
  EXPECT_EQ(got, bytes(20, 15));
  EXPECT_EQ(q.held_bytes(), 5u);
  // Drain with rcv_nxt inside a held range delivers only the new part.
  got.clear();
  EXPECT_EQ(q.drain(42, sink), 45u);
  EXPECT_EQ(got, bytes(42, 3));
  EXPECT_TRUE(q.empty());
}

}  // namespace
}  // namespace xcphost
