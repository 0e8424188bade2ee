// Which side of the XCP–TCP fairness dropper a packet is on (docs/protocol.md §6).
//
//  - XCP: a valid shim of Format Standard with H_cwnd > 0 — a data packet of
//    a sender that obeys XCP feedback (docs/protocol.md §3: cwnd ≥ s > 0, also
//    before its first RTT sample and in loss fallback).
//  - TCP: loss-based senders the router can only slow down by dropping:
//    kernel TCP (IPv4 protocol 6, any segment), and the userspace stack's
//    NewReno/HSTCP, which ride the shim (next_protocol 254) as Standard
//    packets with H_cwnd = 0 (host-image cc/newreno.cc fill_header): they
//    ignore the feedback, so for this router they are TCP.
//  - Other (never counted, never dropped): Minimal and Control shims (ACKs
//    and XCP-i messages carry no data of either class), UDP and everything
//    else. A UDP source does not answer a drop probability of 10⁻³ by slowing
//    down, so it is neither a TCP flow to pace nor a flow owed a share; it
//    only occupies capacity (it is in the input rate y).
#pragma once

#include <cstdint>

#include "core/packet.hh"

namespace xcprouter {

enum class FlowClass : uint8_t { kOther, kXcp, kTcp };

inline constexpr uint8_t kIpProtoTcp = 6;

inline FlowClass classify(const Packet& p) {
  if (p.has_xcp()) {
    if (p.xcp.format != xcp::Format::kStandard) return FlowClass::kOther;
    return p.xcp.cwnd_bytes > 0 ? FlowClass::kXcp : FlowClass::kTcp;
  }
  return p.flow.proto == kIpProtoTcp ? FlowClass::kTcp : FlowClass::kOther;
}

}  // namespace xcprouter
