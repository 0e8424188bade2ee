// The transport segment that follows the XCP shim (host-image/README.md has
// the wire diagram). 64-bit sequence numbers are byte offsets in the stream,
// so a flow never wraps and no ISN arithmetic is needed; SYN occupies no
// sequence space, FIN occupies one unit at the stream's end (like TCP).
//
//   0  src_port(16) | dst_port(16)
//   4  seq(64)                     offset of the first payload byte
//   12 ack(64)                     next byte expected (valid with flag ACK)
//   20 flags(8) | sack_count(8) | options(16)
//                                  options bit 0x0001 = SACK permitted (SYN and
//                                  SYN-ACK only; other bits reserved, sent as 0,
//                                  ignored on receipt, so older peers interoperate)
//   24 window(32)                  receive window, bytes beyond `ack`
//   28 ts_val(32)                  sender's clock, microseconds (wraps)
//   32 ts_ecr(32)                  echo of the peer's latest ts_val
//   36 sack_count x { start(64), end(64) }   half-open SACKed ranges
//   ... payload
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>

#include "xcp/units.hh"

namespace xcphost {

// Value of the shim's next_protocol field for this transport (RFC 3692
// experimental number, distinct from the shim's own IP protocol 253).
inline constexpr uint8_t kNextProtoTransport = 254;

inline constexpr size_t kSegmentBaseLen = 36;
// Byte offsets of the ports (also read by the kernel socket filter, io/raw_socket.cc).
inline constexpr size_t kSegmentSrcPortOffset = 0;
inline constexpr size_t kSegmentDstPortOffset = 2;
inline constexpr size_t kSackBlockLen = 16;
inline constexpr size_t kMaxSackBlocks = 4;

namespace seg_flags {
inline constexpr uint8_t kSyn = 0x01;
inline constexpr uint8_t kAck = 0x02;
inline constexpr uint8_t kFin = 0x04;
inline constexpr uint8_t kRst = 0x08;
inline constexpr uint8_t kAllKnown = kSyn | kAck | kFin | kRst;
}  // namespace seg_flags

namespace seg_options {
inline constexpr uint16_t kSackPermitted = 0x0001;
}  // namespace seg_options

// A SACKed range on the wire; also the scoreboard's input (one definition).
struct SackBlock {
  uint64_t start = 0;  // first SACKed byte
  uint64_t end = 0;    // one past the last SACKed byte
  bool operator==(const SackBlock&) const = default;
};

struct SegmentHeader {
  uint16_t src_port = 0;
  uint16_t dst_port = 0;
  uint64_t seq = 0;
  uint64_t ack = 0;
  uint8_t flags = 0;
  uint32_t window_bytes = 0;
  uint32_t ts_val_us = 0;
  uint32_t ts_ecr_us = 0;
  uint8_t sack_count = 0;
  // On a SYN or SYN-ACK: the sender accepts SACK blocks (TCP's SACK-permitted
  // option, RFC 2018). SACK is used only when both SYNs carried it.
  bool sack_permitted = false;
  std::array<SackBlock, kMaxSackBlocks> sacks{};

  bool has(uint8_t f) const { return (flags & f) != 0; }
  size_t length() const { return kSegmentBaseLen + kSackBlockLen * sack_count; }
};

// ts_val of a segment sent at `t`: microseconds, wrapping at 2^32 (~71 min);
// only differences of echoed values are ever used.
inline uint32_t wire_timestamp_us(xcp::Timestamp t) { return static_cast<uint32_t>(t.ns() / 1000); }

// Encodes `h` at the start of `out`; returns bytes written or 0 if too small.
size_t write_segment_header(const SegmentHeader& h, std::span<uint8_t> out);

// Decodes a segment header; nullopt when short, with unknown flags, more
// than kMaxSackBlocks blocks or an inverted SACK range.
std::optional<SegmentHeader> parse_segment_header(std::span<const uint8_t> bytes);

}  // namespace xcphost
