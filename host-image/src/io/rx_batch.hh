// Receives protocol-253 packets with recvmmsg() into a fixed array of
// buffers and hands each one, IPv4 header stripped, to a callback.
#pragma once

#include <netinet/in.h>
#include <sys/socket.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "io/raw_socket.hh"
#include "io/xdp_socket.hh"
#include "xcp/units.hh"

namespace xcphost {

struct RxStats {
  uint64_t packets = 0;
  uint64_t syscalls = 0;
  uint64_t bad_ip = 0;  // too short or inconsistent IPv4 header
  uint64_t xdp_packets = 0;  // of `packets`, taken from the AF_XDP socket
};

// One received packet with what the IPv4 header said (the XCP-i receiver
// duty needs the TTL, src/xcpi/receiver_xcpi.hh). `shim` is writable: a
// receiver's virtual router lowers H_feedback in place, as a router would.
struct RxPacket {
  uint32_t src = 0;  // IPv4 source, host order
  uint8_t ttl = 0;   // IP TTL as it arrived
  size_t ip_header_bytes = 0;
  std::span<uint8_t> shim;  // from the XCP shim onward
  // The kernel's receive stamp on CLOCK_MONOTONIC once enable_timestamps() was
  // called (the XCP-i receiver's chirp analysis needs the probes' spacing, not
  // when the loop got to them); zero otherwise.
  xcp::Timestamp arrival{};
};

class RxBatch {
 public:
  // (source IPv4 address host order, bytes from the XCP shim onward)
  using Handler = std::function<void(uint32_t, std::span<const uint8_t>)>;
  using PacketHandler = std::function<void(const RxPacket&)>;

  RxBatch(const RawSocket& sock, size_t batch_packets = 64);
  RxBatch(const RxBatch&) = delete;
  RxBatch& operator=(const RxBatch&) = delete;

  // One recvmmsg(); returns the number of packets received (0: none ready).
  size_t receive(const Handler& handler);
  // The same with the IPv4 header's TTL and a writable shim.
  size_t receive_packets(const PacketHandler& handler);
  const RxStats& stats() const { return stats_; }
  // Asks the kernel to stamp every packet (SO_TIMESTAMPNS) and fills
  // RxPacket::arrival from then on.
  void enable_timestamps();
  // Frames redirected to `xdp` (io/xdp_socket.hh), read by receive_xdp();
  // `xdp` outlives this batch.
  void attach_xdp(XdpSocket* xdp) { xdp_ = xdp; }
  XdpSocket* xdp() const { return xdp_; }
  // Up to one batch of frames from the AF_XDP socket (no system call).
  size_t receive_xdp(const PacketHandler& handler);
  size_t batch_packets() const { return msgs_.size(); }

 private:
  int fd_;
  std::vector<std::vector<uint8_t>> bufs_;
  std::vector<iovec> iovs_;
  std::vector<mmsghdr> msgs_;
  std::vector<std::vector<uint8_t>> cmsg_bufs_;  // one control buffer per message, when stamping
  bool timestamps_ = false;
  XdpSocket* xdp_ = nullptr;
  RxStats stats_;
};

}  // namespace xcphost
