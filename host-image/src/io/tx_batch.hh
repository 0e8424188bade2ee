// A PacketWriter that gathers packets into a fixed array of buffers and sends
// them with one sendmmsg() per batch. When the socket buffer is full
// (EAGAIN) the unsent packets stay queued and has_room() turns false until a
// later flush() succeeds: the connection then simply waits, nothing is lost.
//
// With enable_link_output() a packet whose destination has a link path
// (io/link_path.hh) leaves through a packet socket as a finished Ethernet
// frame instead of through the raw IPv4 socket: same bytes on the wire, none
// of the IP output path's per-packet work. Each buffer keeps kLinkHeadroom
// bytes in front of what buffer() returns for those headers, so the payload
// is still written once. Packets leave in commit order whichever socket
// carries them.
#pragma once

#include <linux/if_packet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "io/link_path.hh"
#include "io/raw_socket.hh"
#include "io/xdp_socket.hh"
#include "transport/packet_writer.hh"
#include "xcp/fd.hh"

namespace xcphost {

struct TxStats {
  uint64_t packets = 0;
  uint64_t link_packets = 0;   // of those, sent as frames through the packet socket
  uint64_t xdp_packets = 0;    // of those, sent through the AF_XDP socket
  uint64_t syscalls = 0;
  uint64_t would_block = 0;    // flushes that hit a full socket buffer
  uint64_t errors = 0;         // packets dropped by a send error (e.g. EMSGSIZE)
  int last_errno = 0;
};

class TxBatch final : public PacketWriter {
 public:
  // Destinations whose link path is remembered (each costs a netlink query
  // when first seen); packets to further ones go through the raw socket.
  static constexpr size_t kMaxLinkDestinations = 1024;
  // An unresolved destination (no neighbour entry yet...) is asked again
  // after this long (a netlink query and a read of /proc/net/arp, some tens
  // of microseconds); meanwhile its packets use the raw socket, whose first
  // packet makes the kernel resolve the neighbour.
  static constexpr std::chrono::milliseconds kLinkRetry{100};

  TxBatch(const RawSocket& sock, size_t batch_packets = 64);
  TxBatch(const TxBatch&) = delete;
  TxBatch& operator=(const TxBatch&) = delete;

  // Opens the packet socket (needs CAP_NET_RAW, as the raw socket does) and
  // sends through it from now on where a link path exists. `ttl`: the IP TTL
  // the raw socket uses (0: the namespace's default). Returns false, and
  // keeps the raw socket for everything, when the packet socket cannot be
  // opened.
  bool enable_link_output(uint8_t ttl, int buffer_bytes);
  bool link_output() const { return link_fd_.valid(); }
  // From now on buffer() hands out `xdp`'s UMEM frames while it has room, and
  // a packet whose link path leaves by xdp's interface is sent from there,
  // one kick per batch; a packet to elsewhere is copied to a slot and sent as
  // before. Needs link output (the link paths); `xdp` outlives this batch.
  void enable_xdp_output(XdpSocket* xdp) { xdp_ = xdp; }

  std::span<uint8_t> buffer() override;
  void commit(uint32_t remote_addr, size_t len) override;
  // A slot free, and with AF_XDP a frame too: a packet for the XDP interface
  // waits for the kernel's completions rather than spill to the packet
  // socket, and one for elsewhere (copied to a slot) never overruns the slots.
  bool has_room() const override { return count_ < slots_.size() && (xdp_ == nullptr || xdp_->tx_room()); }

  // Sends everything queued; returns true when nothing is left pending.
  bool flush();
  bool pending() const { return first_ < count_ || (xdp_ != nullptr && xdp_->tx_pending()); }
  // The socket the first queued packet waits for (POLLOUT), -1 when none.
  int pending_fd() const;
  const TxStats& stats() const { return stats_; }

 private:
  struct Slot {
    std::vector<uint8_t> bytes;  // kLinkHeadroom, then the IP payload
    sockaddr_in addr{};
    sockaddr_ll ll{};
    iovec iov{};
    bool link = false;
  };
  struct Destination {
    std::optional<LinkPath> path;
    std::chrono::steady_clock::time_point retry_at{};
  };
  const LinkPath* link_path_to(uint32_t remote_addr);
  bool flush_slots();
  // The next slot's payload area, flushing (or, when the socket stays full,
  // dropping the last queued packet, counted) to make room.
  std::span<uint8_t> slot_buffer();
  // commit() of a packet written into xdp_'s frame.
  void commit_xdp(uint32_t remote_addr, size_t len);

  int fd_;
  xcp::FileDescriptor link_fd_;
  uint8_t link_ttl_ = 64;
  std::unordered_map<uint32_t, Destination> destinations_;
  std::vector<Slot> slots_;
  std::vector<mmsghdr> msgs_;
  size_t first_ = 0;  // first queued, unsent slot
  size_t count_ = 0;  // slots in use
  XdpSocket* xdp_ = nullptr;
  bool xdp_buffer_ = false;  // the last buffer() was xdp_'s frame
  size_t xdp_batch_ = 0;     // frames committed since the last kick
  TxStats stats_;
};

}  // namespace xcphost
