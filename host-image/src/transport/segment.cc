#include "transport/segment.hh"

namespace xcphost {
namespace {

void put16(uint8_t* p, uint16_t v) {
  p[0] = static_cast<uint8_t>(v >> 8);
  p[1] = static_cast<uint8_t>(v);
}
void put32(uint8_t* p, uint32_t v) {
  for (int i = 3; i >= 0; --i, v >>= 8) p[i] = static_cast<uint8_t>(v);
}
void put64(uint8_t* p, uint64_t v) {
  for (int i = 7; i >= 0; --i, v >>= 8) p[i] = static_cast<uint8_t>(v);
}
uint16_t get16(const uint8_t* p) { return static_cast<uint16_t>((p[0] << 8) | p[1]); }
uint32_t get32(const uint8_t* p) {
  uint32_t v = 0;
  for (int i = 0; i < 4; ++i) v = (v << 8) | p[i];
  return v;
}
uint64_t get64(const uint8_t* p) {
  uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v = (v << 8) | p[i];
  return v;
}

}  // namespace

size_t write_segment_header(const SegmentHeader& h, std::span<uint8_t> out) {
  const size_t len = h.length();
  if (h.sack_count > kMaxSackBlocks || out.size() < len) return 0;
  uint8_t* p = out.data();
  put16(p + kSegmentSrcPortOffset, h.src_port);
  put16(p + kSegmentDstPortOffset, h.dst_port);
  put64(p + 4, h.seq);
  put64(p + 12, h.ack);
  p[20] = h.flags & seg_flags::kAllKnown;
  p[21] = h.sack_count;
  put16(p + 22, h.sack_permitted ? seg_options::kSackPermitted : 0);
  put32(p + 24, h.window_bytes);
  put32(p + 28, h.ts_val_us);
  put32(p + 32, h.ts_ecr_us);
  for (size_t i = 0; i < h.sack_count; ++i) {
    put64(p + kSegmentBaseLen + i * kSackBlockLen, h.sacks[i].start);
    put64(p + kSegmentBaseLen + i * kSackBlockLen + 8, h.sacks[i].end);
  }
  return len;
}

std::optional<SegmentHeader> parse_segment_header(std::span<const uint8_t> b) {
  if (b.size() < kSegmentBaseLen) return std::nullopt;
  const uint8_t* p = b.data();
  SegmentHeader h;
  h.src_port = get16(p + kSegmentSrcPortOffset);
  h.dst_port = get16(p + kSegmentDstPortOffset);
  h.seq = get64(p + 4);
  h.ack = get64(p + 12);
  h.flags = p[20];
  h.sack_count = p[21];
  if ((h.flags & ~seg_flags::kAllKnown) != 0 || h.sack_count > kMaxSackBlocks) return std::nullopt;
  if (b.size() < h.length()) return std::nullopt;
  h.sack_permitted = (get16(p + 22) & seg_options::kSackPermitted) != 0;  // other bits: reserved
  h.window_bytes = get32(p + 24);
  h.ts_val_us = get32(p + 28);
  h.ts_ecr_us = get32(p + 32);
  for (size_t i = 0; i < h.sack_count; ++i) {
    h.sacks[i].start = get64(p + kSegmentBaseLen + i * kSackBlockLen);
    h.sacks[i].end = get64(p + kSegmentBaseLen + i * kSackBlockLen + 8);
    if (h.sacks[i].end <= h.sacks[i].start) return std::nullopt;
  }
  return h;
}

}  // namespace xcphost
