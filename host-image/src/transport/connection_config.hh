// Per-connection settings, parsed once at the edge (xcpperf options).
#pragma once

#include <cstddef>
#include <cstdint>

#include "cc/congestion_controller.hh"
#include "transport/rtt_estimator.hh"
#include "xcp/units.hh"

namespace xcphost {

// Bytes a data packet carries on the wire beyond its payload:
// IPv4 header 20 + XCP Standard shim 20 + segment header 36.
inline constexpr uint32_t kPacketOverheadBytes = 20 + 20 + 36;

struct ConnectionConfig {
  CcKind cc = CcKind::kNewReno;
  xcp::Rate desired_rate = xcp::Rate::zero();  // XCP request; zero = unlimited
  uint32_t mss_bytes = 1500 - kPacketOverheadBytes;  // payload per data segment (MTU 1500)
  size_t send_buffer_bytes = size_t{16} << 20;       // unacknowledged bytes held for retransmission
  uint32_t receive_window_bytes = uint32_t{64} << 20;  // advertised; only out-of-order bytes occupy it
  bool delayed_ack = true;                           // ACK every 2nd segment or after the timeout
  xcp::Duration delayed_ack_timeout = xcp::Duration::milliseconds(40);
  RttConfig rtt{};
  // No SYN-ACK within this time: connect failed.
  xcp::Duration connect_timeout = xcp::Duration::seconds(5);
  // This many consecutive retransmission timeouts without progress: connection lost.
  uint32_t max_consecutive_timeouts = 12;

  // `s` of PROTOCOL.md for a full data packet.
  uint32_t packet_bytes() const { return mss_bytes + kPacketOverheadBytes; }
  CcConfig cc_config() const {
    CcConfig c;
    c.mss_bytes = mss_bytes;
    c.packet_bytes = packet_bytes();
    c.desired_rate = desired_rate;
    return c;
  }
};

}  // namespace xcphost
