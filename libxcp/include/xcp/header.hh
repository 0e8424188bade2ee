// The XCP shim header (docs/protocol.md §1): the one definition shared by the
// router engine, the host stack and (through testvectors/) the Python side.
//
//   word 0 : next_protocol(8) | hdr_len(8) | version(4)=4 | format(4) | flags(8)
//   word 1 : H_cwnd             uint32, bytes
//   word 2 : H_rtt              uint32, microseconds (0 = no sample yet)
//   word 3 : H_feedback         int32, bytes
//   word 4 : H_reverse_feedback int32, bytes
//   [flag I] xcp_ttl(8) | reserved(24) ; last_xcp_router IPv4(32)
//   [flag B] bottleneck_id(32) ; next_bottleneck_id(32)
//
// When both optional blocks are present the XCP-i block comes first.
// All fields are network byte order.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

namespace xcp {

// IP protocol number carrying the shim (RFC 3692 experimental).
inline constexpr uint8_t kIpProtoXcp = 253;
inline constexpr uint8_t kXcpVersion = 4;

inline constexpr size_t kHeaderBaseLen = 20;
inline constexpr size_t kXcpiBlockLen = 8;
inline constexpr size_t kIxcpBlockLen = 8;
inline constexpr size_t kHeaderMaxLen = kHeaderBaseLen + kXcpiBlockLen + kIxcpBlockLen;

// Byte offsets of word 0's fields, for code that reads the shim without
// parse_header (the host's kernel socket filter, io/raw_socket.cc).
inline constexpr size_t kOffsetNextProtocol = 0;
inline constexpr size_t kOffsetHdrLen = 1;
inline constexpr size_t kOffsetVersionFormat = 2;  // version << 4 | format
inline constexpr size_t kOffsetFlags = 3;

enum class Format : uint8_t {
  kStandard = 1,  // data; routers process it
  kMinimal = 2,   // pure ACK; routers never modify it
  kControl = 3,   // XCP-i estimation control message
};

// Flag bits of word 0's low byte. Unassigned bits must be zero.
namespace flags {
inline constexpr uint8_t kXcpi = 0x01;          // I: XCP-i block present
inline constexpr uint8_t kIxcp = 0x02;          // B: iXCP block present
inline constexpr uint8_t kLossFallback = 0x04;  // L: sender is in loss fallback
inline constexpr uint8_t kAppLimited = 0x08;    // A: sender is application limited
inline constexpr uint8_t kAllKnown = kXcpi | kIxcp | kLossFallback | kAppLimited;
}  // namespace flags

struct XcpHeader {
  uint8_t next_protocol = 0;
  Format format = Format::kStandard;
  uint8_t flags = 0;
  uint32_t cwnd_bytes = 0;
  uint32_t rtt_us = 0;
  int32_t feedback_bytes = 0;
  int32_t reverse_feedback_bytes = 0;
  // XCP-i block (valid when flags & kXcpi)
  uint8_t xcp_ttl = 0;
  uint32_t last_xcp_router = 0;  // IPv4 address, host byte order
  // iXCP block (valid when flags & kIxcp)
  uint32_t bottleneck_id = 0;
  uint32_t next_bottleneck_id = 0;

  bool has_xcpi() const { return (flags & flags::kXcpi) != 0; }
  bool has_ixcp() const { return (flags & flags::kIxcp) != 0; }
  // hdr_len implied by the flags: 20, 28 or 36.
  size_t length() const {
    return kHeaderBaseLen + (has_xcpi() ? kXcpiBlockLen : 0) + (has_ixcp() ? kIxcpBlockLen : 0);
  }
  bool operator==(const XcpHeader&) const = default;
};

enum class ParseStatus : uint8_t {
  kOk,
  kNotXcp,     // version is not 4: not XCP for us, forward untouched
  kMalformed,  // short buffer, hdr_len inconsistent with flags, unknown format or flag bits
};

struct ParseResult {
  ParseStatus status = ParseStatus::kMalformed;
  XcpHeader header{};
  bool ok() const { return status == ParseStatus::kOk; }
};

std::string_view to_string(ParseStatus s);

// Decodes the shim at the start of `bytes`. Never reads past `bytes.size()`.
ParseResult parse_header(std::span<const uint8_t> bytes);

// Encodes `h` into `out` (which must hold h.length() bytes); hdr_len and
// version are derived, reserved bits written as zero. Returns bytes written,
// or 0 when `out` is too small.
size_t write_header(const XcpHeader& h, std::span<uint8_t> out);

// In-place field updates for the forwarding fast path (no full re-encode).
// `shim` must point at a header that parse_header accepted.
void store_feedback(std::span<uint8_t> shim, int32_t feedback_bytes);
void store_xcpi_block(std::span<uint8_t> shim, uint8_t xcp_ttl, uint32_t last_xcp_router);
void store_next_bottleneck_id(std::span<uint8_t> shim, uint32_t id);

// Rounds real-valued feedback to the wire's int32 with stochastic rounding,
// floor(fb + u) for u ~ U[0,1), saturating at the int32 range (docs/protocol.md §1).
int32_t round_feedback(double feedback_bytes, double uniform01);

}  // namespace xcp
