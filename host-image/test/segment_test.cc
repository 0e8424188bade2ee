#include "transport/segment.hh"

#include <gtest/gtest.h>

#include <vector>

namespace xcphost {
namespace {

TEST(SegmentHeader, RoundTripsEveryField) {
  SegmentHeader h;
  h.src_port = 40001;
  h.dst_port = 5201;
  h.seq = 0x0102030405060708ULL;
  h.ack = 0x1112131415161718ULL;
  h.flags = seg_flags::kAck | seg_flags::kFin;
  h.window_bytes = 0xA1B2C3D4;
  h.ts_val_us = 123456789;
  h.ts_ecr_us = 987654321;
  h.sack_count = 2;
  h.sacks[0] = {100, 200};
  h.sacks[1] = {300, 450};
  std::vector<uint8_t> buf(h.length());
  ASSERT_EQ(write_segment_header(h, buf), kSegmentBaseLen + 2 * kSackBlockLen);
  const auto p = parse_segment_header(buf);
  ASSERT_TRUE(p);
  EXPECT_EQ(p->src_port, h.src_port);
  EXPECT_EQ(p->dst_port, h.dst_port);
  EXPECT_EQ(p->seq, h.seq);
  EXPECT_EQ(p->ack, h.ack);
  EXPECT_EQ(p->flags, h.flags);
  EXPECT_EQ(p->window_bytes, h.window_bytes);
  EXPECT_EQ(p->ts_val_us, h.ts_val_us);
  EXPECT_EQ(p->ts_ecr_us, h.ts_ecr_us);
  ASSERT_EQ(p->sack_count, 2);
  EXPECT_EQ(p->sacks[0], h.sacks[0]);
  EXPECT_EQ(p->sacks[1], h.sacks[1]);
}

TEST(SegmentHeader, WireLayoutIsBigEndianAtDocumentedOffsets) {
  SegmentHeader h;
  h.src_port = 0x1234;
  h.dst_port = 0x5678;
  h.seq = 1;
  h.ack = 2;
  h.flags = seg_flags::kSyn;
  h.window_bytes = 3;
  h.ts_val_us = 4;
  h.ts_ecr_us = 5;
  std::vector<uint8_t> b(kSegmentBaseLen);
  ASSERT_EQ(write_segment_header(h, b), kSegmentBaseLen);
  EXPECT_EQ(b[0], 0x12);
  EXPECT_EQ(b[1], 0x34);
  EXPECT_EQ(b[2], 0x56);
  EXPECT_EQ(b[3], 0x78);
  EXPECT_EQ(b[11], 1);  // seq low byte
  EXPECT_EQ(b[19], 2);  // ack low byte
  EXPECT_EQ(b[20], seg_flags::kSyn);
  EXPECT_EQ(b[21], 0);  // sack_count
  EXPECT_EQ(b[27], 3);
  EXPECT_EQ(b[31], 4);
  EXPECT_EQ(b[35], 5);
}

TEST(SegmentHeader, SackPermittedIsOptionBitZeroAndOtherOptionBitsAreIgnored) {
  SegmentHeader h;
  h.flags = seg_flags::kSyn;
  h.sack_permitted = true;
  std::vector<uint8_t> b(kSegmentBaseLen);
  ASSERT_EQ(write_segment_header(h, b), kSegmentBaseLen);
  EXPECT_EQ(b[22], 0);
  EXPECT_EQ(b[23], seg_options::kSackPermitted);
  auto p = parse_segment_header(b);
  ASSERT_TRUE(p);
  EXPECT_TRUE(p->sack_permitted);
  b[22] = 0x80;  // a reserved bit from a later version: accepted, ignored
  b[23] = 0x02;
  p = parse_segment_header(b);
  ASSERT_TRUE(p);
  EXPECT_FALSE(p->sack_permitted);
  h.sack_permitted = false;
  write_segment_header(h, b);
  EXPECT_EQ(b[22], 0);
  EXPECT_EQ(b[23], 0);
}

TEST(SegmentHeader, RejectsShortUnknownFlagsTooManyBlocksAndInvertedRanges) {
  SegmentHeader h;
  h.sack_count = 1;
  h.sacks[0] = {10, 20};
  std::vector<uint8_t> b(h.length());
  write_segment_header(h, b);
  EXPECT_FALSE(parse_segment_header(std::span<const uint8_t>(b).first(b.size() - 1)));
  auto bad = b;
  bad[20] = 0x80;
  EXPECT_FALSE(parse_segment_header(bad));
  bad = b;
  bad[21] = kMaxSackBlocks + 1;
  EXPECT_FALSE(parse_segment_header(bad));
  bad = b;
  bad[kSegmentBaseLen + 15] = 5;  // end (…05) < start (…0a)
  EXPECT_FALSE(parse_segment_header(bad));
  EXPECT_FALSE(parse_segment_header(std::span<const uint8_t>(b).first(10)));
  EXPECT_EQ(write_segment_header(h, std::span<uint8_t>(b).first(10)), 0u);
}

}  // namespace
}  // namespace xcphost
