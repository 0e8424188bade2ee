// The congestion-control interface of the host stack. The transport owns
// sequence space, SACK, RTT estimation and timers; a controller owns only the
// window. One factory builds any of them by kind.
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
  uint32_t packet_bytes = 1500;       // `s` of PROTOCOL.md: IP + shim + transport + payload
  uint64_t initial_cwnd_bytes = 0;    // 0 = the controller's default
  // XCP: desired rate (PROTOCOL.md §3); zero = unlimited (H_feedback = INT32_MAX).
  xcp::Rate desired_rate = xcp::Rate::zero();
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
};

std::unique_ptr<CongestionController> make_congestion_controller(CcKind kind, const CcConfig& cfg);

}  // namespace xcphost
