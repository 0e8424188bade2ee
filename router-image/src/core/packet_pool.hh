// Recycles Packet buffers: a per-thread free list behind Packet's
// class-specific operator new/delete. Steady-state forwarding therefore never
// reaches malloc, even though packets are owned by plain unique_ptrs and
// queue disciplines drop them by letting the pointer go.
#pragma once

#include <cstddef>
#include <cstdint>

#include "core/packet.hh"

namespace xcprouter {

class PacketPool {
 public:
  // A packet with default-initialised (unzeroed) buffer and reset metadata.
  static PacketPtr acquire() { return PacketPtr(new Packet); }
  // Pre-allocates `n` buffers onto the free list (start-up, not per packet).
  static void reserve(size_t n);

  static void* allocate();
  static void release(void* block) noexcept;

  // Buffers ever taken from the heap / sitting on the free list (this thread).
  static uint64_t allocated_blocks();
  static size_t free_blocks();
};

}  // namespace xcprouter
