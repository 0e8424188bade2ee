#include "core/frame_parser.hh"

#include <span>

#include "core/checksum.hh"

namespace xcprouter {

namespace {

constexpr uint8_t kProtoTcp = 6;
constexpr uint8_t kProtoUdp = 17;

uint16_t be16(const uint8_t* b) { return static_cast<uint16_t>(b[0] << 8 | b[1]); }
uint32_t be32(const uint8_t* b) {
  return static_cast<uint32_t>(b[0]) << 24 | static_cast<uint32_t>(b[1]) << 16 |
         static_cast<uint32_t>(b[2]) << 8 | b[3];
}

// Reads the 4 port bytes at `off` if they lie inside the IP payload.
void read_ports(const uint8_t* d, size_t off, size_t ip_end, FlowKey& key) {
  if (off + 4 > ip_end) return;
  key.sport = be16(d + off);
  key.dport = be16(d + off + 2);
}

}  // namespace

ParseOutcome parse_frame(Packet& p) {
  ParseOutcome out;
  const uint8_t* d = p.data();
  const size_t len = p.frame_len;
  p.xcp_offset = 0;
  p.flow = FlowKey{};
  if (len < kEthHeaderLen || len > Packet::kCapacity) return out;
  if (be16(d + 12) != kEtherTypeIpv4) {
    out.verdict = ParseVerdict::kNonIpv4;
    return out;
  }
  const size_t ip = kEthHeaderLen;
  p.ip_offset = static_cast<uint16_t>(ip);
  if (len < ip + 20) return out;
  const uint8_t* h = d + ip;
  if ((h[0] >> 4) != 4) return out;
  const size_t ihl = static_cast<size_t>(h[0] & 0x0F) * 4;
  const size_t total = be16(h + 2);
  // Ethernet pads short frames: the frame may be longer than the datagram, never shorter.
  if (ihl < 20 || total < ihl || ip + total > len) return out;
  if (internet_checksum(h, ihl) != 0) return out;

  p.ip_total_len = static_cast<uint16_t>(total);
  p.ip_ttl_in = h[8];
  FlowKey& key = p.flow;
  key.proto = h[9];
  key.src = be32(h + 12);
  key.dst = be32(h + 16);
  out.verdict = ParseVerdict::kIpv4;

  // Only a first fragment (offset 0) carries the transport header.
  const bool first_fragment = (be16(h + 6) & 0x1FFF) == 0;
  const size_t l4 = ip + ihl;
  const size_t ip_end = ip + total;
  if (key.proto == kProtoTcp || key.proto == kProtoUdp) {
    if (first_fragment) read_ports(d, l4, ip_end, key);
  } else if (key.proto == xcp::kIpProtoXcp && first_fragment) {
    const auto result = xcp::parse_header(std::span<const uint8_t>(d + l4, ip_end - l4));
    if (result.ok()) {
      p.xcp = result.header;
      p.xcp_offset = static_cast<uint16_t>(l4);
      read_ports(d, l4 + result.header.length(), ip_end, key);
    } else if (result.status == xcp::ParseStatus::kMalformed) {
      out.xcp_shim_malformed = true;
    }
  }
  return out;
}

}  // namespace xcprouter
