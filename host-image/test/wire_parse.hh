// Test support: decodes a packet as a SimLink filter sees it (shim onward)
// into its XCP shim, segment header and payload length.
#pragma once

#include <optional>
#include <span>
#include <vector>

#include "transport/segment.hh"
#include "xcp/header.hh"

namespace xcphost::test {

struct Parsed {
  xcp::XcpHeader shim;
  SegmentHeader seg;
  size_t payload = 0;
  size_t segment_offset = 0;  // where the segment header starts in the packet
};

inline std::optional<Parsed> parse(const std::vector<uint8_t>& b) {
  const auto shim = xcp::parse_header(b);
  if (!shim.ok()) return std::nullopt;
  const auto rest = std::span<const uint8_t>(b).subspan(shim.header.length());
  const auto seg = parse_segment_header(rest);
  if (!seg) return std::nullopt;
  return Parsed{shim.header, *seg, rest.size() - seg->length(), shim.header.length()};
}

}  // namespace xcphost::test
