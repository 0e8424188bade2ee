// The host stack's one OS handle for traffic: an IPv4 raw socket for IP
// protocol 253 (the XCP shim). The kernel writes the IPv4 header on send and
// hands every received protocol-253 packet (IPv4 header included) to every
// such socket on the host, so several processes can each own one and
// demultiplex by port.
//
// Without a filter every process on a host receives (and wakes up for, and
// copies, and parses) a copy of every XCP packet of the host: with tens of
// xcpperf processes on one host that alone starves them. set_port_filter()
// attaches a classic BPF program (SO_ATTACH_FILTER) so the kernel queues only
// the segments whose destination port the process owns, plus every Format 3
// (XCP-i control) message; the rest is dropped in the kernel before it is
// queued or copied.
#pragma once

#include <linux/filter.h>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "xcp/fd.hh"

namespace xcphost {

struct RawSocketConfig {
  // Socket buffers sized for high bandwidth-delay products (1 Gb/s x 200 ms
  // is 25 MB). Set with SO_*BUFFORCE when root, else capped by net.core.*mem_max.
  int buffer_bytes = 32 << 20;
  // IP TTL of sent packets; 0 keeps the kernel default (XCP-i needs it known).
  uint8_t ttl = 0;
};

// Inclusive range of transport ports (first <= last).
struct PortRange {
  uint16_t first = 0;
  uint16_t last = 0;
  bool operator==(const PortRange&) const = default;
};

// Bound on the ranges of one filter (2 BPF instructions each; jump offsets
// are 8 bits). A process needs one or two (a client's contiguous ports, a
// wrapped range), a server one.
inline constexpr size_t kMaxFilterPortRanges = 32;

// The classic BPF program set_port_filter() attaches, offsets from the IPv4
// header (what a raw IPv4 socket's filter sees). Accepts a packet when the
// shim is version 4 format 3 (control), or when its next_protocol is the
// transport and the segment's destination port — found after IHL*4 bytes of
// IP header and hdr_len bytes of shim, so the XCP-i and iXCP blocks are
// skipped — is in one of `ranges`. Anything shorter than what it reads is
// dropped by the kernel. Throws std::invalid_argument on no ranges, too many,
// or first > last.
std::vector<sock_filter> port_filter_program(std::span<const PortRange> ranges);

// The ranges covering `count` consecutive ports from `first` that wrap from
// 65535 to `wrap_to` (the client's and the object player's port choice).
std::vector<PortRange> consecutive_ports(uint16_t first, size_t count, uint16_t wrap_to);

class RawSocket {
 public:
  explicit RawSocket(const RawSocketConfig& cfg);
  int fd() const { return fd_.get(); }
  // Effective buffer sizes as the kernel reports them (bytes).
  int send_buffer_bytes() const { return sndbuf_; }
  int receive_buffer_bytes() const { return rcvbuf_; }

  // Attaches (or replaces) the kernel filter: see port_filter_program().
  // The first call discards what was queued before it (unfiltered copies of
  // other processes' packets), so call it before sending or listening.
  void set_port_filter(std::span<const PortRange> ranges);
  bool filtered() const { return filtered_; }
  uint64_t discarded_before_filter() const { return discarded_before_filter_; }

  // Packets the kernel dropped on this socket because its receive buffer was
  // full (sk_drops, /proc/net/raw's "drops" column for this socket's inode);
  // nullopt when that cannot be read. Packets the filter rejects are not drops.
  std::optional<uint64_t> kernel_drops() const;

 private:
  xcp::FileDescriptor fd_;
  int sndbuf_ = 0;
  int rcvbuf_ = 0;
  bool filtered_ = false;
  uint64_t discarded_before_filter_ = 0;
};

}  // namespace xcphost
