// A PACKET_RX_RING (TPACKET_V2) on an AF_PACKET socket: the kernel writes
// received frames straight into a memory-mapped ring, so reading them costs
// no system call (epoll still signals readability). Must be attached before
// the socket is bound. Frames are copied out into pooled Packets, so a slot
// is handed back to the kernel at once and queues never pin ring memory.
// Each slot carries the kernel's receive time, the frame's arrival time.
//
// The ring is kernel memory, allocated and mapped whole when the socket is
// set up, for the whole run: 2048 slots are 4 MiB per port, which made a
// 1000-port engine 4 GiB and 17 s to start (issue 17). So each ring is sized
// from the rate of the port's link (slots_for): what arrives in
// kSizingWindow at that rate, in 1500 B frames, within the bound
// engine.rx_ring_slots (xcplab_contract/bounds.json). A frame that finds
// the ring full is dropped by the kernel and counted (PACKET_STATISTICS ->
// rx_socket_drops, a fidelity signal), never lost silently.
#pragma once

#include <linux/if_packet.h>

#include <atomic>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <optional>

#include "contract_bounds.hh"
#include "core/packet_pool.hh"
#include "xcp/units.hh"

namespace xcprouter {

class RxRing {
 public:
  static constexpr size_t kFrameSize = 2048;       // tpacket2 header + MTU frame fits
  static constexpr size_t kFramesPerBlock = 32;    // 64 KiB blocks
  static constexpr size_t kMinSlots = static_cast<size_t>(bounds::kEngineRxRingSlots.lo);
  static constexpr size_t kMaxSlots = static_cast<size_t>(bounds::kEngineRxRingSlots.hi);
  // How long the ring must hold the link's traffic while the engine is busy
  // elsewhere: the engine visits every port each loop pass (well under 1 ms);
  // 10 ms covers a descheduled engine on a loaded machine. Frames of 1500 B:
  // the link's packet rate when it is full; a burst of small frames (ACKs)
  // is held by the kMinSlots floor.
  static constexpr xcp::Duration kSizingWindow = xcp::Duration::milliseconds(10);
  static constexpr double kSizingFrameBytes = 1500;

  // Slots for a port whose link carries `rate` (zero: unknown, the largest
  // ring): frames of kSizingFrameBytes arriving in kSizingWindow, and at
  // least `hold_packets` (the emulated ingress queue's limit: a sender on a
  // host arrives at the veth's speed, not the link's, so a window's burst
  // reaches the ring at once, and a frame that queue would hold must not be
  // lost before it gets there — seed 000's fig2c lost 90-256 frames that way
  // on 2026-11-28), rounded up to whole 64 KiB blocks (kFramesPerBlock),
  // within [kMinSlots, kMaxSlots].
  static size_t slots_for(xcp::Rate rate, uint64_t hold_packets = 0);
  // The frames a queue limit holds, for slots_for's hold_packets: its packet
  // limit, or a byte limit counted in kSizingFrameBytes frames.
  static uint64_t frames_held(uint64_t limit_packets, uint64_t limit_bytes) {
    return limit_packets ? limit_packets
                         : static_cast<uint64_t>(std::ceil(static_cast<double>(limit_bytes) / kSizingFrameBytes));
  }

  // Throws SystemError when the kernel refuses (callers fall back to
  // recvmmsg); invalid_argument when `slots` is not a multiple of
  // kFramesPerBlock within [kMinSlots, kMaxSlots].
  RxRing(int fd, size_t slots);
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
  size_t slots() const { return slots_; }
  size_t bytes() const { return size_; }

 private:
  tpacket2_hdr* head() const { return reinterpret_cast<tpacket2_hdr*>(ring_ + head_ * kFrameSize); }
  void release(tpacket2_hdr* hdr) {
    __atomic_store_n(&hdr->tp_status, TP_STATUS_KERNEL, __ATOMIC_RELEASE);
    if (++head_ == slots_) head_ = 0;
  }

  uint8_t* ring_ = nullptr;
  size_t size_ = 0;
  size_t slots_ = 0;  // whole blocks
  size_t head_ = 0;
  uint64_t truncated_ = 0;
};

}  // namespace xcprouter
