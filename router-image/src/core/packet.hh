// One frame inside the engine, from receive to transmit.
//
// Buffers are fixed-size and recycled through a PacketPool (no per-packet
// heap allocation on the forwarding path). The parser fills the offsets once
// on receive; queue disciplines read and rewrite the XCP shim in place
// through `xcp_shim()` with libxcp's store_* helpers.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>

#include "xcp/header.hh"
#include "xcp/units.hh"

namespace xcprouter {

// Identifies a transport flow for per-flow estimators (SRED zombie table).
struct FlowKey {
  uint32_t src = 0, dst = 0;
  uint16_t sport = 0, dport = 0;
  uint8_t proto = 0;
  bool operator==(const FlowKey&) const = default;
};

class Packet {
 public:
  static constexpr size_t kCapacity = 2048;  // > any MTU-sized Ethernet frame

  // Storage comes from PacketPool's free list (core/packet_pool.hh), so every
  // `new Packet` / make_unique<Packet>() and every destruction of a PacketPtr
  // (a queue drop included) recycles a buffer instead of calling malloc.
  static void* operator new(std::size_t size);
  static void operator delete(void* p, std::size_t size) noexcept;

  uint8_t* data() { return buf_.data(); }
  const uint8_t* data() const { return buf_.data(); }
  std::span<uint8_t> frame() { return {buf_.data(), frame_len}; }

  // Size on the wire as `s` in docs/protocol.md: IPv4 total length (IP header
  // included, Ethernet framing excluded).
  uint32_t wire_bytes() const { return ip_total_len; }

  bool has_xcp() const { return xcp_offset != 0; }
  std::span<uint8_t> xcp_shim() { return {buf_.data() + xcp_offset, frame_len - xcp_offset}; }

  // Filled by the receive path / parser.
  uint32_t frame_len = 0;         // bytes in buf_
  uint16_t ip_offset = 14;        // IPv4 header start
  uint16_t ip_total_len = 0;      // IPv4 total length
  uint16_t xcp_offset = 0;        // shim start, 0 = no (valid) XCP shim
  uint8_t ip_ttl_in = 0;          // TTL as received (before decrement)
  xcp::XcpHeader xcp{};           // decoded shim (valid when has_xcp())
  FlowKey flow{};
  uint16_t in_port = 0;
  xcp::Timestamp arrival{};       // when the router received it
  xcp::Timestamp enqueued{};      // when it entered the output queue

 private:
  // Left uninitialised by default-initialisation (`new Packet`): the receive
  // path overwrites what it uses; zeroing 2 KiB per packet would cost more
  // than the rest of the forwarding work.
  std::array<uint8_t, kCapacity> buf_;
};

using PacketPtr = std::unique_ptr<Packet>;

}  // namespace xcprouter
