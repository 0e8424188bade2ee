// Per-connection settings, parsed once at the edge (xcpperf options).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>

#include "cc/congestion_controller.hh"
#include "transport/loss_recovery.hh"
#include "transport/rtt_estimator.hh"
#include "xcp/units.hh"

namespace xcphost {

// Bytes a data packet carries on the wire beyond its payload:
// IPv4 header 20 + XCP Standard shim 20 + segment header 36.
inline constexpr uint32_t kPacketOverheadBytes = 20 + 20 + 36;

struct ConnectionConfig {
  CcKind cc = CcKind::kNewReno;
  // Loss detection/repair (transport/loss_recovery.hh). SACK is used only when
  // both ends' SYNs permit it, so a non-SACK mode at either end turns it off.
  LossRecovery loss_recovery = LossRecovery::kSack;
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
  // Nothing received for this long after the SYN: the peer is gone (a killed
  // client leaves a server connection with nothing to retransmit). Zero = never.
  xcp::Duration idle_timeout = xcp::Duration::seconds(30);
  // XCP-i sender duty (docs/protocol.md §4): IP TTL the socket uses and our address.
  uint8_t xcpi_ip_ttl = 0;
  uint32_t xcpi_sender_ipv4 = 0;
  // iXCP sender duty (docs/protocol.md §5): id of our access link.
  std::optional<uint32_t> ixcp_access_link_id;
  // XCP: feedback from new ACKs only (CcConfig::feedback_on_new_acks_only, ns-2's XcpAgent).
  bool xcp_feedback_new_acks_only = false;

  // Shim blocks our data packets carry beyond the Standard shim (8 bytes each).
  uint32_t shim_block_bytes() const { return (xcpi_ip_ttl != 0 ? 8u : 0u) + (ixcp_access_link_id ? 8u : 0u); }
  // Payload that fills a 1500-byte packet with the blocks this flow sends.
  uint32_t mtu_payload_bytes() const { return 1500 - kPacketOverheadBytes - shim_block_bytes(); }
  // `s` of docs/protocol.md for a full data packet.
  uint32_t packet_bytes() const { return mss_bytes + kPacketOverheadBytes + shim_block_bytes(); }
  CcConfig cc_config() const {
    CcConfig c;
    c.mss_bytes = mss_bytes;
    c.packet_bytes = packet_bytes();
    c.desired_rate = desired_rate;
    c.xcpi_ip_ttl = xcpi_ip_ttl;
    c.xcpi_sender_ipv4 = xcpi_sender_ipv4;
    c.ixcp_access_link_id = ixcp_access_link_id;
    c.feedback_on_new_acks_only = xcp_feedback_new_acks_only;
    return c;
  }
};

}  // namespace xcphost
