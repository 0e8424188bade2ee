// Frame builders and sinks for the engine's datapath tests: real Ethernet +
// IPv4 (+ optional XCP shim) bytes with a correct header checksum, and a
// PacketSink that records what reached it and when.
#pragma once

#include <cstdint>
#include <cstring>
#include <utility>
#include <vector>

#include "core/checksum.hh"
#include "core/packet.hh"
#include "core/packet_pool.hh"
#include "core/packet_sink.hh"
#include "xcp/header.hh"

namespace xcprouter::enginetest {

struct FrameSpec {
  uint8_t dst_mac[6] = {0x02, 0, 0, 0, 0, 0x02};
  uint8_t src_mac[6] = {0x02, 0, 0, 0, 0, 0x01};
  uint16_t ethertype = 0x0800;
  uint32_t src = 0x0A000001;  // 10.0.0.1
  uint32_t dst = 0x0A000102;  // 10.0.1.2
  uint8_t ttl = 64;
  uint8_t proto = 17;
  uint16_t sport = 1234, dport = 5678;
  uint16_t ip_total_len = 100;  // IPv4 total length (the packet's wire size)
  bool with_xcp = false;
  xcp::XcpHeader xcp{};
};

inline void put16(uint8_t* b, uint16_t v) {
  b[0] = static_cast<uint8_t>(v >> 8);
  b[1] = static_cast<uint8_t>(v);
}
inline void put32(uint8_t* b, uint32_t v) {
  put16(b, static_cast<uint16_t>(v >> 16));
  put16(b + 2, static_cast<uint16_t>(v));
}
inline uint16_t get16(const uint8_t* b) { return static_cast<uint16_t>(b[0] << 8 | b[1]); }

inline PacketPtr make_frame(const FrameSpec& s) {
  PacketPtr p = PacketPool::acquire();
  uint8_t* d = p->data();
  std::memset(d, 0, 14 + s.ip_total_len);
  std::memcpy(d, s.dst_mac, 6);
  std::memcpy(d + 6, s.src_mac, 6);
  put16(d + 12, s.ethertype);
  uint8_t* ip = d + 14;
  ip[0] = 0x45;
  put16(ip + 2, s.ip_total_len);
  ip[8] = s.ttl;
  ip[9] = s.with_xcp ? xcp::kIpProtoXcp : s.proto;
  put32(ip + 12, s.src);
  put32(ip + 16, s.dst);
  size_t l4 = 20;
  if (s.with_xcp) {
    xcp::XcpHeader h = s.xcp;
    h.next_protocol = s.proto;
    l4 += xcp::write_header(h, {ip + 20, static_cast<size_t>(s.ip_total_len - 20)});
  }
  if (l4 + 4 <= s.ip_total_len) {
    put16(ip + l4, s.sport);
    put16(ip + l4 + 2, s.dport);
  }
  put16(ip + 10, internet_checksum(ip, 20));
  p->frame_len = 14u + s.ip_total_len;
  return p;
}

// A frame already "parsed": only the fields links and qdiscs read.
inline PacketPtr make_sized(uint16_t wire_bytes) {
  FrameSpec s;
  s.ip_total_len = wire_bytes;
  PacketPtr p = make_frame(s);
  p->ip_total_len = wire_bytes;
  return p;
}

struct Delivery {
  PacketPtr packet;
  xcp::Timestamp at;
};

class CollectingSink final : public PacketSink {
 public:
  void deliver(PacketPtr p, xcp::Timestamp at) override { got.push_back({std::move(p), at}); }
  uint64_t bytes() const {
    uint64_t b = 0;
    for (const auto& d : got) b += d.packet->wire_bytes();
    return b;
  }
  std::vector<Delivery> got;
};

}  // namespace xcprouter::enginetest
