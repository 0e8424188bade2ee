// Ethernet / IPv4 / XCP-shim parsing of a received frame, in place.
//
// Never reads outside `frame_len` bytes; never throws. Fills the Packet's
// offsets, total length, TTL, flow key and (for protocol 253) the decoded
// shim. The IPv4 header must be complete and consistent (version 4, IHL ≥ 5,
// IHL ≤ total length ≤ frame, header checksum correct); a malformed XCP
// shim does not make the frame malformed: docs/protocol.md §1 says it is
// forwarded as non-XCP and counted.
#pragma once

#include <cstdint>

#include "core/packet.hh"

namespace xcprouter {

enum class ParseVerdict : uint8_t {
  kIpv4,       // forwardable IPv4
  kNonIpv4,    // EtherType other than IPv4 (ARP, IPv6, VLAN...)
  kMalformed,  // truncated or inconsistent Ethernet/IPv4 header, bad checksum
};

struct ParseOutcome {
  ParseVerdict verdict = ParseVerdict::kMalformed;
  bool xcp_shim_malformed = false;  // protocol 253 with a shim parse_header rejected
};

inline constexpr uint16_t kEtherTypeIpv4 = 0x0800;
inline constexpr size_t kEthHeaderLen = 14;

ParseOutcome parse_frame(Packet& p);

}  // namespace xcprouter
