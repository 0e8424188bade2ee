// Sending IPv4 packets below the IP layer: what a destination's frame needs
// (egress interface, both MAC addresses, source address, MTU) and how the
// IPv4 + Ethernet headers are written, for TxBatch's packet-socket path.
//
// Why: a raw IPv4 socket costs, per packet, a route lookup, ip_append_data's
// copy with a checksum nobody reads, and the IP output path; on a veth that
// was most of xcpperf's sending time (issue 22). A packet socket takes the
// finished frame and hands it to the device's queue (qdisc kept: no
// PACKET_QDISC_BYPASS). The frame is the one the kernel would have built:
// IHL 5, TOS 0, DF set, ID 0 (what a raw socket with IP_PMTUDISC_PROBE sends
// for DF packets), the socket's TTL, protocol 253.
//
// A destination is sent this way only when the kernel's main routing answer
// (RTM_GETROUTE) is a unicast route through one Ethernet interface and the
// next hop's neighbour entry is complete (xcplab hosts have permanent ones);
// anything else (local, multipath, no ARP yet, not Ethernet) stays on the
// raw socket, which does what it always did.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>

namespace xcphost {

inline constexpr size_t kEthHeaderBytes = 14;
inline constexpr size_t kIpv4HeaderBytes = 20;
inline constexpr size_t kLinkHeadroom = kEthHeaderBytes + kIpv4HeaderBytes;

struct LinkPath {
  int ifindex = 0;
  std::array<uint8_t, 6> src_mac{};
  std::array<uint8_t, 6> dst_mac{};  // the next hop's (gateway or destination)
  uint32_t src_addr = 0;             // host order
  uint32_t mtu = 0;                  // the interface's, IP bytes
};

// The path to IPv4 `dst` (host order) in the caller's network namespace, or
// nullopt when it must go through the IP layer (see above).
std::optional<LinkPath> resolve_link_path(uint32_t dst);

// The kernel's default IP TTL in this namespace (net.ipv4.ip_default_ttl), 64
// when unreadable.
uint8_t default_ip_ttl();

// Writes the Ethernet and IPv4 headers into the kLinkHeadroom bytes of
// `frame` before an IP payload of `ip_payload_bytes` (protocol 253).
void write_link_headers(const LinkPath& path, uint32_t dst, uint8_t ttl, size_t ip_payload_bytes,
                        std::span<uint8_t> frame);

// RFC 1071 checksum of an IPv4 header (the checksum field included: 0 when valid).
uint16_t ipv4_header_checksum(std::span<const uint8_t> header);

}  // namespace xcphost
