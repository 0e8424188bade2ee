// Where a connection writes its packets: a batch of raw-socket send buffers
// in production, a simulated channel in tests. The connection encodes the
// shim, segment header and payload directly into buffer() (no extra copy)
// and then commits the packet.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

namespace xcphost {

// Largest packet a connection builds (shim + segment + payload), bytes.
inline constexpr size_t kMaxPacketBytes = 9000;

class PacketWriter {
 public:
  virtual ~PacketWriter() = default;
  // Space for the next packet (at least kMaxPacketBytes). Valid until commit().
  virtual std::span<uint8_t> buffer() = 0;
  // Sends the first `len` bytes of buffer() to IPv4 `remote_addr` (host order).
  virtual void commit(uint32_t remote_addr, size_t len) = 0;
  // False while the writer cannot take another packet (socket buffer full):
  // the connection then stops sending and resumes on the next pump.
  virtual bool has_room() const = 0;
};

}  // namespace xcphost
