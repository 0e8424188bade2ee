// The host stack's one OS handle for traffic: an IPv4 raw socket for IP
// protocol 253 (the XCP shim). The kernel writes the IPv4 header on send and
// hands every received protocol-253 packet (IPv4 header included) to every
// such socket on the host, so several processes can each own one and
// demultiplex by port.
#pragma once

#include <cstddef>
#include <cstdint>

#include "xcp/fd.hh"

namespace xcphost {

struct RawSocketConfig {
  // Socket buffers sized for high bandwidth-delay products (1 Gb/s x 200 ms
  // is 25 MB). Set with SO_*BUFFORCE when root, else capped by net.core.*mem_max.
  int buffer_bytes = 32 << 20;
  // IP TTL of sent packets; 0 keeps the kernel default (XCP-i needs it known).
  uint8_t ttl = 0;
};

class RawSocket {
 public:
  explicit RawSocket(const RawSocketConfig& cfg);
  int fd() const { return fd_.get(); }
  // Effective buffer sizes as the kernel reports them (bytes).
  int send_buffer_bytes() const { return sndbuf_; }
  int receive_buffer_bytes() const { return rcvbuf_; }

 private:
  xcp::FileDescriptor fd_;
  int sndbuf_ = 0;
  int rcvbuf_ = 0;
};

}  // namespace xcphost
