#include "transport/receive_side.hh"

#include <gtest/gtest.h>

#include <array>
#include <vector>

namespace xcphost {
namespace {

struct Collect : ReceiveSink {
  void on_bytes(std::span<const uint8_t> b) override { bytes.insert(bytes.end(), b.begin(), b.end()); }
  void on_fin() override { fin_after = bytes.size(); }
  std::vector<uint8_t> bytes;
  std::optional<size_t> fin_after;
};

std::vector<uint8_t> seg(uint8_t first, size_t n) {
  std::vector<uint8_t> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<uint8_t>(first + i);
  return v;
}

const xcp::Timestamp kT0 = xcp::Timestamp::zero() + xcp::Duration::seconds(1);

TEST(ReceiveSide, DelaysTheAckOfOneSegmentAndAcksEverySecond) {
  ReceiveSide rx(1 << 20, true, xcp::Duration::milliseconds(40));
  Collect c;
  rx.note_timestamp(111);
  rx.on_segment(0, seg(0, 10), false, kT0, c);
  EXPECT_FALSE(rx.ack_owed());
  EXPECT_EQ(rx.delack_deadline(), kT0 + xcp::Duration::milliseconds(40));
  rx.note_timestamp(222);  // a second segment before the ACK: echo stays the oldest
  rx.on_segment(10, seg(10, 10), false, kT0, c);
  EXPECT_TRUE(rx.ack_owed());
  EXPECT_EQ(rx.ts_recent(), 111u);
  EXPECT_EQ(rx.rcv_nxt(), 20u);
  rx.on_ack_sent();
  EXPECT_FALSE(rx.ack_owed());
  EXPECT_EQ(rx.delack_deadline(), xcp::Timestamp::max());
  rx.on_segment(20, seg(20, 10), false, kT0, c);
  rx.on_delack_timer(kT0 + xcp::Duration::milliseconds(39));
  EXPECT_FALSE(rx.ack_owed());
  rx.on_delack_timer(kT0 + xcp::Duration::milliseconds(40));
  EXPECT_TRUE(rx.ack_owed());
  EXPECT_EQ(c.bytes, seg(0, 30));
}

TEST(ReceiveSide, AcksOutOfOrderAtOnceWithSackAndDeliversWhenTheHoleFills) {
  ReceiveSide rx(1 << 20, true, xcp::Duration::milliseconds(40));
  Collect c;
  rx.on_segment(10, seg(10, 10), false, kT0, c);
  EXPECT_TRUE(rx.ack_owed());
  EXPECT_TRUE(c.bytes.empty());
  std::array<SackBlock, 4> blocks{};
  ASSERT_EQ(rx.sack_blocks(blocks), 1u);
  EXPECT_EQ(blocks[0], (SackBlock{10, 20}));
  EXPECT_EQ(rx.window(), (1u << 20) - 10);  // held bytes occupy the window
  rx.on_ack_sent();
  rx.on_segment(20, seg(20, 5), true, kT0, c);  // FIN beyond the hole waits too
  EXPECT_FALSE(c.fin_after);
  rx.on_ack_sent();
  rx.on_segment(0, seg(0, 10), false, kT0, c);
  EXPECT_TRUE(rx.ack_owed());  // hole filled: immediate ACK
  EXPECT_EQ(c.bytes, seg(0, 25));
  ASSERT_TRUE(c.fin_after);
  EXPECT_EQ(*c.fin_after, 25u);
  EXPECT_TRUE(rx.fin_received());
  EXPECT_EQ(rx.rcv_nxt(), 26u);  // FIN takes one sequence unit
  EXPECT_EQ(rx.window(), 1u << 20);
}

TEST(ReceiveSide, DuplicateSegmentIsAckedAtOnceAndNotDeliveredTwice) {
  ReceiveSide rx(1 << 20, true, xcp::Duration::milliseconds(40));
  Collect c;
  rx.on_segment(0, seg(0, 10), false, kT0, c);
  rx.on_segment(0, seg(0, 10), false, kT0, c);
  EXPECT_TRUE(rx.ack_owed());
  EXPECT_EQ(c.bytes.size(), 10u);
}

}  // namespace
}  // namespace xcphost
