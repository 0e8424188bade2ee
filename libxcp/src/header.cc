#include "xcp/header.hh"

#include <cmath>
#include <limits>

#include "xcp/byte_order.hh"

namespace xcp {
namespace {

bool known_format(uint8_t f) { return f >= 1 && f <= 3; }

// Offset of the iXCP block inside a shim with the given flags.
size_t ixcp_offset(uint8_t fl) { return kHeaderBaseLen + ((fl & flags::kXcpi) ? kXcpiBlockLen : 0); }

}  // namespace

std::string_view to_string(ParseStatus s) {
  switch (s) {
    case ParseStatus::kOk: return "ok";
    case ParseStatus::kNotXcp: return "not_xcp";
    case ParseStatus::kMalformed: return "malformed";
  }
  return "unknown";
}

ParseResult parse_header(std::span<const uint8_t> b) {
  ParseResult r;
  if (b.size() < 4) return r;  // cannot even read the version: malformed
  const uint8_t version = b[kOffsetVersionFormat] >> 4;
  if (version != kXcpVersion) {
    r.status = ParseStatus::kNotXcp;
    return r;
  }
  if (b.size() < kHeaderBaseLen) return r;
  XcpHeader& h = r.header;
  h.next_protocol = b[kOffsetNextProtocol];
  const uint8_t hdr_len = b[kOffsetHdrLen];
  const uint8_t format = b[kOffsetVersionFormat] & 0x0f;
  h.flags = b[kOffsetFlags];
  if (!known_format(format) || (h.flags & ~flags::kAllKnown) != 0) return r;
  h.format = static_cast<Format>(format);
  if (hdr_len != h.length() || b.size() < hdr_len) return r;
  h.cwnd_bytes = load_be32(&b[4]);
  h.rtt_us = load_be32(&b[8]);
  h.feedback_bytes = static_cast<int32_t>(load_be32(&b[12]));
  h.reverse_feedback_bytes = static_cast<int32_t>(load_be32(&b[16]));
  if (h.has_xcpi()) {
    h.xcp_ttl = b[20];
    h.last_xcp_router = load_be32(&b[24]);
  }
  if (h.has_ixcp()) {
    const size_t o = ixcp_offset(h.flags);
    h.bottleneck_id = load_be32(&b[o]);
    h.next_bottleneck_id = load_be32(&b[o + 4]);
  }
  r.status = ParseStatus::kOk;
  return r;
}

size_t write_header(const XcpHeader& h, std::span<uint8_t> out) {
  const size_t len = h.length();
  if (out.size() < len) return 0;
  uint8_t* p = out.data();
  p[kOffsetNextProtocol] = h.next_protocol;
  p[kOffsetHdrLen] = static_cast<uint8_t>(len);
  p[kOffsetVersionFormat] = static_cast<uint8_t>((kXcpVersion << 4) | (static_cast<uint8_t>(h.format) & 0x0f));
  p[kOffsetFlags] = h.flags & flags::kAllKnown;
  store_be32(p + 4, h.cwnd_bytes);
  store_be32(p + 8, h.rtt_us);
  store_be32(p + 12, static_cast<uint32_t>(h.feedback_bytes));
  store_be32(p + 16, static_cast<uint32_t>(h.reverse_feedback_bytes));
  if (h.has_xcpi()) {
    p[20] = h.xcp_ttl;
    p[21] = p[22] = p[23] = 0;
    store_be32(p + 24, h.last_xcp_router);
  }
  if (h.has_ixcp()) {
    const size_t o = ixcp_offset(h.flags);
    store_be32(p + o, h.bottleneck_id);
    store_be32(p + o + 4, h.next_bottleneck_id);
  }
  return len;
}

void store_feedback(std::span<uint8_t> shim, int32_t feedback_bytes) {
  store_be32(&shim[12], static_cast<uint32_t>(feedback_bytes));
}

void store_xcpi_block(std::span<uint8_t> shim, uint8_t xcp_ttl, uint32_t last_xcp_router) {
  shim[20] = xcp_ttl;
  store_be32(&shim[24], last_xcp_router);
}

void store_next_bottleneck_id(std::span<uint8_t> shim, uint32_t id) {
  store_be32(&shim[ixcp_offset(shim[3]) + 4], id);
}

int32_t round_feedback(double feedback_bytes, double uniform01) {
  const double v = std::floor(feedback_bytes + uniform01);
  if (!(v > std::numeric_limits<int32_t>::min())) return std::numeric_limits<int32_t>::min();  // also NaN
  if (v >= static_cast<double>(std::numeric_limits<int32_t>::max())) return std::numeric_limits<int32_t>::max();
  return static_cast<int32_t>(v);
}

}  // namespace xcp
