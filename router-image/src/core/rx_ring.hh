// A PACKET_RX_RING (TPACKET_V2) on an AF_PACKET socket: the kernel writes
// received frames straight into a memory-mapped ring, so reading them costs
// no system call (epoll still signals readability). Must be attached before
// the socket is bound. Frames are copied out into pooled Packets, so a slot
// is handed back to the kernel at once and queues never pin ring memory.
// Each slot carries the kernel's receive time, the frame's arrival time.
#pragma once

#include <linux/if_packet.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <optional>

#include "core/packet_pool.hh"
#include "xcp/units.hh"

namespace xcprouter {

class RxRing {
 public:
  static constexpr size_t kFrameSize = 2048;       // tpacket2 header + MTU frame fits
  static constexpr size_t kFramesPerBlock = 32;    // 64 KiB blocks
  static constexpr size_t kBlocks = 64;            // 2048 slots, 4 MiB per port: ~5 ms at 400 kpps

  // Throws SystemError when the kernel refuses (callers fall back to recvmmsg).
  explicit RxRing(int fd);
  ~RxRing();
  RxRing(const RxRing&) = delete;
  RxRing& operator=(const RxRing&) = delete;

  // Kernel receive time (CLOCK_REALTIME, see ArrivalClock) of the next
  // ready slot, or nullopt when the kernel has not filled it yet: one
  // status-word load, so callers may look before every frame.
  std::optional<xcp::Timestamp> head_stamp() const {
    const tpacket2_hdr* hdr = head();
    if ((__atomic_load_n(&hdr->tp_status, __ATOMIC_ACQUIRE) & TP_STATUS_USER) == 0) return std::nullopt;
    return xcp::Timestamp::from_ns(static_cast<int64_t>(hdr->tp_sec) * 1'000'000'000 + hdr->tp_nsec);
  }

  // Consumes the head slot if it is ready and calls
  // handler(PacketPtr, bool for_us, Timestamp kernel_realtime) when it holds
  // a deliverable frame. Returns false when no slot was ready. Truncated
  // frames are counted, not delivered; frames the host sent
  // (PACKET_OUTGOING) are skipped.
  template <typename Handler>
  bool receive_one(Handler&& handler) {
    const std::optional<xcp::Timestamp> stamp = head_stamp();
    if (!stamp) return false;
    tpacket2_hdr* hdr = head();
    const auto* sll = reinterpret_cast<const sockaddr_ll*>(reinterpret_cast<const uint8_t*>(hdr) +
                                                            TPACKET_ALIGN(sizeof(tpacket2_hdr)));
    const uint8_t pkttype = sll->sll_pkttype;
    if (hdr->tp_snaplen < hdr->tp_len || hdr->tp_snaplen > Packet::kCapacity) {
      ++truncated_;
    } else if (pkttype != PACKET_OUTGOING) {
      PacketPtr p = PacketPool::acquire();
      __builtin_memcpy(p->data(), reinterpret_cast<const uint8_t*>(hdr) + hdr->tp_mac, hdr->tp_snaplen);
      p->frame_len = hdr->tp_snaplen;
      release(hdr);
      handler(std::move(p), pkttype == PACKET_HOST, *stamp);
      return true;
    }
    release(hdr);
    return true;
  }

  // receive_one() for up to `max` ready slots; returns how many were consumed.
  template <typename Handler>
  size_t receive(size_t max, Handler&& handler) {
    size_t n = 0;
    while (n < max && receive_one(handler)) ++n;
    return n;
  }

  uint64_t truncated() const { return truncated_; }

 private:
  tpacket2_hdr* head() const { return reinterpret_cast<tpacket2_hdr*>(ring_ + head_ * kFrameSize); }
  void release(tpacket2_hdr* hdr) {
    __atomic_store_n(&hdr->tp_status, TP_STATUS_KERNEL, __ATOMIC_RELEASE);
    head_ = (head_ + 1) % (kFramesPerBlock * kBlocks);
  }

  uint8_t* ring_ = nullptr;
  size_t size_ = 0;
  size_t head_ = 0;
  uint64_t truncated_ = 0;
};

}  // namespace xcprouter
