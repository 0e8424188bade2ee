// One AF_PACKET socket bound to one interface, with batched I/O: frames are
// read from a memory-mapped PACKET_RX_RING (or, where the kernel refuses
// one, recvmmsg() fills up to kBatch pooled Packets per system call);
// sendmmsg() transmits up to kBatch frames per call. Received frames carry
// their arrival time (ArrivalClock). Frames the host itself sent
// (PACKET_OUTGOING) are never seen. The socket is opened in the network
// namespace current at construction (see NetnsGuard).
//
// The receive ring is sized from the rate of the port's link (RxRing::
// slots_for). Setting a ring up waits out one RCU grace period in the kernel
// (packet_set_ring -> synchronize_net, ~10 ms) whatever its size, so a
// thousand ports opened one after another take 10 s or more: open_many()
// opens them from a bounded pool of threads, whose waits overlap. Closing
// one waits out two more (packet_set_ring on close, packet_release): a
// 280-port engine took 7 s to exit, so close_many() closes them the same way.
#pragma once

#include <linux/if_packet.h>
#include <sys/socket.h>

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/arrival_clock.hh"
#include "core/packet_sink.hh"
#include "core/rx_ring.hh"
#include "util/net_address.hh"
#include "xcp/fd.hh"

namespace xcprouter {

struct PortIoCounters {
  uint64_t rx_syscalls = 0, tx_syscalls = 0;
  uint64_t rx_truncated = 0;  // frames longer than Packet::kCapacity (dropped)
  uint64_t tx_errors = 0;     // frames the kernel refused (dropped)
  uint64_t rx_socket_drops = 0;  // frames the kernel dropped before we saw them (ring/buffer full)
  uint64_t socket_errors = 0;    // asynchronous socket errors cleared (interface down...)
};

// One port to open: its interface, the namespace holding it (a path such as
// /run/netns/x; empty: the caller's) and its link's rate (zero: unknown,
// the largest ring).
struct PortRequest {
  std::string netns;
  std::string ifname;
  xcp::Rate link_rate = xcp::Rate::zero();
  uint64_t hold_packets = 0;  // frames the ring must hold at least (RxRing::slots_for)
};

class Port final : public PacketSink {
 public:
  static constexpr size_t kBatch = 64;
  // Threads of open_many(): the grace periods of this many ring set-ups
  // overlap; each thread is a short-lived stack of 8 MiB virtual memory.
  static constexpr size_t kOpenThreads = 32;

  explicit Port(const std::string& ifname, xcp::Rate link_rate = xcp::Rate::zero(),
                uint64_t hold_packets = 0);

  // Opens every request, up to kOpenThreads at a time, each in its own
  // namespace; the result is in request order. Rethrows the first failure
  // (in request order) as runtime_error naming the interface and namespace,
  // after every thread has finished (the ports opened are closed).
  static std::vector<std::unique_ptr<Port>> open_many(const std::vector<PortRequest>& requests);
  // Closes (destroys) every port, up to kCloseThreads at a time, and leaves
  // `ports` empty. Closing needs no namespace: any thread may do it.
  static void close_many(std::vector<std::unique_ptr<Port>>& ports);
  static constexpr size_t kCloseThreads = 64;
  Port(const Port&) = delete;
  Port& operator=(const Port&) = delete;

  int fd() const { return fd_.get(); }
  const std::string& ifname() const { return ifname_; }
  const MacAddress& mac() const { return mac_; }

  // Arrival time of the next ring frame if it arrived by `s` (on the
  // monotonic timeline, see ArrivalClock), nullopt otherwise or without a
  // ring. The engine merges ports by this before reading.
  std::optional<xcp::Timestamp> next_arrival(const ClockSample& s) const {
    if (!ring_) return std::nullopt;
    const std::optional<xcp::Timestamp> k = ring_->head_stamp();
    if (!k || *k > s.realtime) return std::nullopt;
    return arrival_.peek(*k, s);
  }

  // Reads one ring slot; handler(PacketPtr, bool for_us, Timestamp arrival)
  // for a deliverable frame. False when nothing was ready (or no ring).
  template <typename Handler>
  bool receive_one(const ClockSample& s, Handler&& handler) {
    if (!ring_) return false;
    return ring_->receive_one([&](PacketPtr p, bool for_us, xcp::Timestamp kernel) {
      handler(std::move(p), for_us, arrival_.stamp(kernel, s));
    });
  }

  // Reads what is waiting (at most one batch) and calls
  // handler(PacketPtr, bool for_us, Timestamp arrival) per frame. Returns
  // the number of frames. Ring frames carry the kernel's receive time; the
  // recvmmsg fallback stamps the whole batch with the sample time.
  template <typename Handler>
  size_t receive(const ClockSample& s, Handler&& handler) {
    if (ring_) {
      return ring_->receive(kBatch, [&](PacketPtr p, bool for_us, xcp::Timestamp kernel) {
        handler(std::move(p), for_us, arrival_.stamp(kernel, s));
      });
    }
    const int n = receive_batch();
    const xcp::Timestamp now = arrival_.stamp_now(s);
    for (int i = 0; i < n; ++i) {
      const size_t k = static_cast<size_t>(i);
      PacketPtr p = std::move(rx_[k]);
      // Belt and braces for kernels without PACKET_IGNORE_OUTGOING.
      if (addrs_[k].sll_pkttype == PACKET_OUTGOING) continue;
      if (msgs_[k].msg_hdr.msg_flags & MSG_TRUNC) {
        ++io_.rx_truncated;
        continue;
      }
      p->frame_len = msgs_[k].msg_len;
      handler(std::move(p), addrs_[k].sll_pkttype == PACKET_HOST, now);
    }
    return n > 0 ? static_cast<size_t>(n) : 0;
  }

  // Queues a frame for transmission; sends when a batch is full.
  void deliver(PacketPtr p, xcp::Timestamp at) override;
  // Sends what is queued.
  void flush();
  bool has_pending_tx() const { return tx_count_ > 0; }

  // Reads and clears a pending socket error (e.g. ENETDOWN after the
  // interface went down), which otherwise keeps epoll reporting the fd.
  int clear_error();
  // Folds the kernel's PACKET_STATISTICS (reset on every read) into the
  // counters; call at sampling time, not per packet.
  void update_socket_stats();
  PortIoCounters io_counters() const {
    PortIoCounters c = io_;
    if (ring_) c.rx_truncated += ring_->truncated();
    return c;
  }
  bool uses_rx_ring() const { return ring_ != nullptr; }
  // Bytes of the receive ring (0 without one): kernel memory for the run.
  size_t rx_ring_bytes() const { return ring_ ? ring_->bytes() : 0; }
  // Kernel stamps moved by the arrival clock's clamp (fidelity signal).
  uint64_t arrival_stamps_clamped() const { return arrival_.clamped(); }

 private:
  int receive_batch();

  std::string ifname_;
  xcp::FileDescriptor fd_;
  MacAddress mac_;
  PortIoCounters io_;
  std::unique_ptr<RxRing> ring_;  // null: recvmmsg fallback
  ArrivalClock arrival_;

  std::array<PacketPtr, kBatch> rx_;
  std::array<mmsghdr, kBatch> msgs_{};
  std::array<iovec, kBatch> rx_iov_{};
  std::array<sockaddr_ll, kBatch> addrs_{};

  std::array<PacketPtr, kBatch> tx_;
  std::array<mmsghdr, kBatch> tx_msgs_{};
  std::array<iovec, kBatch> tx_iov_{};
  size_t tx_count_ = 0;
};

}  // namespace xcprouter
