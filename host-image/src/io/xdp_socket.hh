// An AF_XDP socket on one interface queue, with its UMEM, its four rings and
// the XDP program that steers this process's flows to it (io/xdp_program.hh):
// xcpperf --xdp's path around the kernel's per-packet IP work (issue 22,
// host-image/THROUGHPUT.md).
//
// Copy mode (veth has no zero-copy): the kernel copies a received frame into
// a UMEM frame and a sent frame out of one. Receiving costs no system call
// (the rx ring is read directly, poll(POLLIN) sleeps); sending writes finished
// Ethernet frames into UMEM frames and kicks the kernel once per batch
// (sendto; the generic transmit path takes at most 32 frames per kick).
//
// Clean-up: the program is attached through a bpf_link whose only reference
// is this object's fd, so it is detached when the object is destroyed and,
// just as well, when the process dies (kill -9 included): a crashed xcpperf
// leaves nothing that eats traffic.
#pragma once

#include <linux/bpf.h>
#include <linux/if_xdp.h>

#include <cstddef>
#include <cstdint>
#include <span>

#include "io/raw_socket.hh"
#include "io/xsk_ring.hh"
#include "xcp/fd.hh"

namespace xcphost {

struct XdpSocketConfig {
  int ifindex = 0;
  uint32_t queue = 0;       // receive queue to bind (veth has one unless created with more)
  uint32_t local_addr = 0;  // host order; frames to other addresses are passed (0: any)
  // Redirect every port from the start (xcpperf --no-port-filter). Otherwise no
  // port until set_ports(): between attach and the caller's set_ports() the
  // program must not take other processes' frames (they would be lost).
  bool all_ports = false;
};

struct XdpStats {
  uint64_t rx_packets = 0;
  uint64_t tx_packets = 0;
  uint64_t tx_kicks = 0;
  uint64_t tx_kick_errors = 0;
  int last_errno = 0;
};

class XdpSocket {
 public:
  // UMEM: kRxFrames frames of kFrameBytes for receiving (all in the fill
  // ring), then kTxFrames for sending; 20 MiB locked per process. The rx ring
  // holds every receive frame: a sender busy writing a window reads its ACKs
  // in bursts (2048 lost 10 % of a bulk transfer's ACKs on a veth).
  static constexpr uint32_t kFrameBytes = 2048;
  static constexpr uint32_t kRxFrames = 8192;
  static constexpr uint32_t kTxFrames = 2048;
  // The longest frame the program redirects: a UMEM frame less the kernel's
  // XDP headroom (copy mode puts the frame there).
  static constexpr uint32_t kMaxRxFrameBytes = kFrameBytes - XDP_PACKET_HEADROOM;

  explicit XdpSocket(const XdpSocketConfig& cfg);
  ~XdpSocket();
  XdpSocket(const XdpSocket&) = delete;
  XdpSocket& operator=(const XdpSocket&) = delete;

  int fd() const { return fd_.get(); }
  int ifindex() const { return ifindex_; }
  // The driver's XDP hook, or (the default, faster on veth) the generic skb hook.
  bool native() const { return native_; }
  // Only segments to these ports are redirected (all ports when empty; none
  // before the first call unless XdpSocketConfig::all_ports).
  void set_ports(std::span<const PortRange> ranges);

  // Sending: tx_frame() is the next frame (reserved until tx_commit(); empty
  // when no frame or ring slot is free until the kernel completes some).
  bool tx_room();
  std::span<uint8_t> tx_frame();
  void tx_commit(size_t frame_bytes);
  // Hands everything committed to the kernel; false when some is left (the
  // kernel refused a kick) — call again later.
  bool tx_flush();
  bool tx_pending() const { return tx_unkicked_; }

  // Receiving: up to `max` frames, each handed to `on_frame(std::span<uint8_t>)`
  // (the whole Ethernet frame, writable) and then given back to the kernel.
  template <typename F>
  size_t receive(F&& on_frame, uint32_t max = 64) {
    const uint32_t n = rx_.ready(max);
    if (n == 0) return 0;
    uint32_t fi = fill_.next_produce();
    for (uint32_t i = 0; i < n; ++i) {
      const xdp_desc& d = rx_.at(rx_.next_consume() + i);
      on_frame(std::span<uint8_t>(umem_ + d.addr, d.len));
      fill_.at(fi++) = d.addr & ~uint64_t{kFrameBytes - 1};
    }
    rx_.release(n);
    fill_.produce(n);  // the fill ring holds every receive frame: always room
    fill_.publish();
    stats_.rx_packets += n;
    return n;
  }

  const XdpStats& stats() const { return stats_; }
  // The kernel's counters (XDP_STATISTICS): frames dropped because the rx
  // ring was full or no fill frame was there, invalid descriptors.
  xdp_statistics kernel_stats() const;

 private:
  void reap_completions();
  void unmap();

  xcp::FileDescriptor fd_;
  int ifindex_ = 0;
  bool native_ = false;
  uint8_t* umem_ = nullptr;
  size_t umem_bytes_ = 0;
  struct Mapping {
    void* addr = nullptr;
    size_t bytes = 0;
  };
  Mapping maps_[4];
  XskRing<uint64_t> fill_, comp_;
  XskRing<xdp_desc> rx_, tx_;
  FramePool tx_frames_;
  bool tx_reserved_ = false;
  uint64_t tx_reserved_addr_ = 0;
  bool tx_unkicked_ = false;
  XdpStats stats_;
  xcp::FileDescriptor xsk_map_, port_map_, prog_;
  xcp::FileDescriptor link_;  // last: destroyed first, detaching the program
};

}  // namespace xcphost
