#include "transport/send_buffer.hh"

#include <gtest/gtest.h>

#include <numeric>
#include <vector>

namespace xcphost {
namespace {

TEST(SendBuffer, WrapsAroundAndKeepsOffsets) {
  SendBuffer b(10);
  std::vector<uint8_t> in(8);
  std::iota(in.begin(), in.end(), 0);
  EXPECT_EQ(b.append(in), 8u);
  EXPECT_EQ(b.append(in), 2u);  // only 2 bytes free
  EXPECT_EQ(b.free_space(), 0u);
  b.release_until(6);
  EXPECT_EQ(b.base_offset(), 6u);
  std::vector<uint8_t> more = {100, 101, 102, 103, 104, 105};
  EXPECT_EQ(b.append(more), 6u);  // wraps in the ring
  std::vector<uint8_t> out(10);
  b.copy_out(6, out);
  EXPECT_EQ(out, (std::vector<uint8_t>{6, 7, 0, 1, 100, 101, 102, 103, 104, 105}));
  EXPECT_THROW(b.copy_out(5, std::span<uint8_t>(out).first(1)), std::out_of_range);
  EXPECT_THROW(b.copy_out(15, std::span<uint8_t>(out).first(2)), std::out_of_range);
}

TEST(SendBuffer, TruncateDropsUnsentTail) {
  SendBuffer b(100);
  std::vector<uint8_t> in(50, 7);
  b.append(in);
  b.truncate(20);
  EXPECT_EQ(b.end_offset(), 20u);
  EXPECT_EQ(b.free_space(), 80u);
}

}  // namespace
}  // namespace xcphost
