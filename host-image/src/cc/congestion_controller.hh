// The congestion-control interface of the host stack. The transport owns
// sequence space, SACK, RTT estimation and timers; a controller owns only the
// window. One factory builds any of them by kind.
//
// Contract with the transport (host-image/CC.md has the reasoning):
// - cwnd_bytes() is in sequence-space (payload) bytes for every controller; the
//   transport sends while SackScoreboard::pipe() < cwnd_bytes(). Controllers
//   never inflate the window in recovery: pipe already falls as dupacks/SACKs
//   arrive (RFC 6675).
// - The transport owns the recovery point (RFC 6582 `recover`). Order for one
//   ACK: on_ack(ack) first (ack.in_recovery says whether recovery was in
//   progress when it arrived), then on_loss() if it triggers fast recovery, or
//   on_recovery_exit() if it covers `recover`. Controllers keep their own
//   recovery state (on_loss/on_timeout/on_recovery_exit); ack.in_recovery is
//   informative, so TCP controllers slow-start after an RTO even while the
//   transport still counts the repair as recovery.
// - on_timeout(): the RTO fired; the transport then retransmits from snd_una.
//   Calling on_recovery_exit() when the post-RTO retransmissions are ACKed
//   clears XCP's L flag; the first new cumulative ACK outside recovery also does.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string_view>

#include "xcp/header.hh"
#include "xcp/units.hh"

namespace xcphost {

enum class CcKind { kXcp, kNewReno, kHighSpeed };

// Parses "xcp" | "newreno" | "hstcp"; nullopt otherwise.
std::optional<CcKind> parse_cc_kind(std::string_view name);
std::string_view to_string(CcKind k);

struct CcConfig {
  uint32_t mss_bytes = 1448;          // payload per segment
  uint32_t packet_bytes = 1500;       // `s` of docs/protocol.md: IP + shim + transport + payload
  uint64_t initial_cwnd_bytes = 0;    // 0 = the controller's default
  // XCP: desired rate (docs/protocol.md §3); zero = unlimited (H_feedback = INT32_MAX).
  xcp::Rate desired_rate = xcp::Rate::zero();
  // iXCP (docs/protocol.md §5): id of the sender's access link. When set, the XCP
  // controller sends the B block, starting with bottleneck_id =
  // next_bottleneck_id = this id, then copies each echoed next_bottleneck_id
  // into bottleneck_id of later packets.
  std::optional<uint32_t> ixcp_access_link_id;
  // XCP-i (docs/protocol.md §4): when xcpi_ip_ttl != 0 the XCP controller sends the
  // I block with xcp_ttl = this (must equal the IP TTL the transport uses) and
  // last_xcp_router = xcpi_sender_ipv4 (host byte order).
  uint8_t xcpi_ip_ttl = 0;
  uint32_t xcpi_sender_ipv4 = 0;
  // XCP: apply H_reverse_feedback only from ACKs that acknowledge something new, as
  // ns-2.35's XcpAgent does (recv_newack_helper; a duplicate ACK's feedback is
  // dropped). false (the default): every ACK's feedback, duplicates included.
  bool feedback_on_new_acks_only = false;
};

// What the transport knows when an ACK arrives.
struct AckEvent {
  xcp::Timestamp now;
  uint64_t newly_acked_bytes = 0;     // cumulative + newly SACKed bytes
  bool duplicate = false;             // acked nothing new
  std::optional<xcp::Duration> rtt_sample;
  xcp::Duration srtt = xcp::Duration::zero();
  uint64_t bytes_in_flight = 0;
  bool in_recovery = false;           // fast recovery in progress
  // XCP: H_reverse_feedback carried by this ACK (bytes). Applied exactly once.
  int32_t reverse_feedback_bytes = 0;
  // iXCP: next_bottleneck_id echoed by the receiver on this ACK (B block present).
  std::optional<uint32_t> echoed_next_bottleneck_id;
};

class CongestionController {
 public:
  virtual ~CongestionController() = default;

  virtual std::string_view name() const = 0;
  virtual uint64_t cwnd_bytes() const = 0;
  virtual uint64_t ssthresh_bytes() const = 0;

  // Fills the congestion fields of an outgoing data packet's XCP header
  // (H_cwnd, H_rtt, H_feedback for XCP; TCP controllers leave them neutral).
  virtual void fill_header(xcp::XcpHeader& h, xcp::Duration srtt, bool app_limited) const = 0;
  virtual void on_ack(const AckEvent& ack) = 0;
  // Loss detected by duplicate ACKs / SACK: entering fast recovery.
  virtual void on_loss(xcp::Timestamp now, uint64_t bytes_in_flight) = 0;
  virtual void on_recovery_exit(xcp::Timestamp now) = 0;
  // Retransmission timeout fired.
  virtual void on_timeout(xcp::Timestamp now) = 0;
  // Optional: a data packet left (`bytes` payload, flight after sending).
  // Lets TCP controllers size ssthresh on a timeout from the true flight.
  virtual void on_packet_sent(xcp::Timestamp now, uint64_t bytes, uint64_t bytes_in_flight) {
    (void)now; (void)bytes; (void)bytes_in_flight;
  }
  // True between a loss response and its end (XCP's L flag; reported by xcpperf).
  virtual bool in_loss_fallback() const { return false; }
};

std::unique_ptr<CongestionController> make_congestion_controller(CcKind kind, const CcConfig& cfg);

}  // namespace xcphost
