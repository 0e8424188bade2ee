#include "core/rx_ring.hh"

#include <sys/mman.h>
#include <sys/socket.h>

#include "xcp/fd.hh"

namespace xcprouter {

RxRing::RxRing(int fd) {
  const int version = TPACKET_V2;
  xcp::check_syscall("setsockopt(PACKET_VERSION)", ::setsockopt(fd, SOL_PACKET, PACKET_VERSION, &version, sizeof version));
  tpacket_req req{};
  req.tp_block_size = static_cast<unsigned>(kFrameSize * kFramesPerBlock);
  req.tp_block_nr = static_cast<unsigned>(kBlocks);
  req.tp_frame_size = static_cast<unsigned>(kFrameSize);
  req.tp_frame_nr = static_cast<unsigned>(kFramesPerBlock * kBlocks);
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
