// Packet builders for queue-discipline tests: an IPv4 frame of a given wire
// size, optionally carrying a real XCP shim (so in-place stores are visible
// when the header is re-parsed from the frame bytes).
#pragma once

#include <cstdint>
#include <memory>

#include "core/packet.hh"
#include "xcp/header.hh"

namespace xcprouter::testutil {

inline constexpr uint16_t kEthLen = 14;
inline constexpr uint16_t kIpLen = 20;

inline PacketPtr make_packet(uint32_t wire_bytes) {
  auto p = std::make_unique<Packet>();
  p->ip_offset = kEthLen;
  p->ip_total_len = static_cast<uint16_t>(wire_bytes);
  p->frame_len = kEthLen + wire_bytes;
  return p;
}

inline PacketPtr make_xcp_packet(uint32_t wire_bytes, uint32_t cwnd_bytes, uint32_t rtt_us,
                                 int32_t feedback_bytes,
                                 xcp::Format format = xcp::Format::kStandard) {
  auto p = make_packet(wire_bytes);
  xcp::XcpHeader h;
  h.next_protocol = 6;
  h.format = format;
  h.cwnd_bytes = cwnd_bytes;
  h.rtt_us = rtt_us;
  h.feedback_bytes = feedback_bytes;
  p->xcp_offset = kEthLen + kIpLen;
  xcp::write_header(h, p->xcp_shim());
  p->xcp = h;
  return p;
}

// A Standard packet carrying the iXCP block (flag B).
inline PacketPtr make_ixcp_packet(uint32_t wire_bytes, uint32_t cwnd_bytes, uint32_t rtt_us, int32_t feedback_bytes,
                                  uint32_t bottleneck_id, uint32_t next_bottleneck_id) {
  auto p = make_xcp_packet(wire_bytes, cwnd_bytes, rtt_us, feedback_bytes);
  p->xcp.flags = xcp::flags::kIxcp;
  p->xcp.bottleneck_id = bottleneck_id;
  p->xcp.next_bottleneck_id = next_bottleneck_id;
  xcp::write_header(p->xcp, p->xcp_shim());
  return p;
}

// next_bottleneck_id as it is on the wire now.
inline uint32_t wire_next_bottleneck_id(Packet& p) {
  return xcp::parse_header(p.xcp_shim()).header.next_bottleneck_id;
}

// H_feedback as it is on the wire now (after any in-place store).
inline int32_t wire_feedback(Packet& p) {
  return xcp::parse_header(p.xcp_shim()).header.feedback_bytes;
}

}  // namespace xcprouter::testutil
