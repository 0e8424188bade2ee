#include "core/rx_ring.hh"

#include <algorithm>

#include <sys/mman.h>
#include <sys/socket.h>

#include <cmath>
#include <stdexcept>
#include <string>

#include "xcp/fd.hh"

namespace xcprouter {

size_t RxRing::slots_for(xcp::Rate rate, uint64_t hold_packets) {
  if (rate.is_zero()) return kMaxSlots;
  const double frames = std::max(rate.bytes_per_s() * kSizingWindow.seconds_f() / kSizingFrameBytes,
                                 static_cast<double>(hold_packets));
  if (!(frames < static_cast<double>(kMaxSlots))) return kMaxSlots;  // also NaN/inf
  const size_t blocks = (static_cast<size_t>(std::ceil(frames)) + kFramesPerBlock - 1) / kFramesPerBlock;
  const size_t want = blocks * kFramesPerBlock;
  return want < kMinSlots ? kMinSlots : want;
}

RxRing::RxRing(int fd, size_t slots) : slots_(slots) {
  if (slots < kMinSlots || slots > kMaxSlots || slots % kFramesPerBlock != 0) {
    throw std::invalid_argument("rx ring of " + std::to_string(slots) + " slots: must be a multiple of " +
                                std::to_string(kFramesPerBlock) + " in [" +
                                std::to_string(kMinSlots) + ", " + std::to_string(kMaxSlots) + "] (" +
                                bounds::kEngineRxRingSlots.why + ")");
  }
  const int version = TPACKET_V2;
  xcp::check_syscall("setsockopt(PACKET_VERSION)", ::setsockopt(fd, SOL_PACKET, PACKET_VERSION, &version, sizeof version));
  tpacket_req req{};
  req.tp_block_size = static_cast<unsigned>(kFrameSize * kFramesPerBlock);
  req.tp_block_nr = static_cast<unsigned>(slots / kFramesPerBlock);
  req.tp_frame_size = static_cast<unsigned>(kFrameSize);
  req.tp_frame_nr = static_cast<unsigned>(slots);
  xcp::check_syscall("setsockopt(PACKET_RX_RING)", ::setsockopt(fd, SOL_PACKET, PACKET_RX_RING, &req, sizeof req));
  size_ = static_cast<size_t>(req.tp_block_size) * req.tp_block_nr;
  void* mem = ::mmap(nullptr, size_, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (mem == MAP_FAILED) throw xcp::SystemError("mmap(PACKET_RX_RING)", errno);
  ring_ = static_cast<uint8_t*>(mem);
}

RxRing::~RxRing() {
  if (ring_ != nullptr) ::munmap(ring_, size_);
}

}  // namespace xcprouter
