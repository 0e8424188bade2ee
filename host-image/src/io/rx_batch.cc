#include "io/rx_batch.hh"

#include <cerrno>

#include "transport/packet_writer.hh"
#include "xcp/fd.hh"

namespace xcphost {

RxBatch::RxBatch(const RawSocket& sock, size_t batch_packets)
    : fd_(sock.fd()),
      bufs_(batch_packets == 0 ? 1 : batch_packets, std::vector<uint8_t>(kMaxPacketBytes + 60)),
      iovs_(bufs_.size()),
      msgs_(bufs_.size()) {
  for (size_t i = 0; i < bufs_.size(); ++i) {
    iovs_[i].iov_base = bufs_[i].data();
    iovs_[i].iov_len = bufs_[i].size();
    msgs_[i].msg_hdr.msg_iov = &iovs_[i];
    msgs_[i].msg_hdr.msg_iovlen = 1;
  }
}

size_t RxBatch::receive(const Handler& handler) {
  return receive_packets([&handler](const RxPacket& p) { handler(p.src, p.shim); });
}

size_t RxBatch::receive_packets(const PacketHandler& handler) {
  const int n = recvmmsg(fd_, msgs_.data(), static_cast<unsigned>(msgs_.size()), MSG_DONTWAIT, nullptr);
  ++stats_.syscalls;
  if (n < 0) {
    if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) return 0;
    throw xcp::SystemError("recvmmsg on the raw socket", errno);
  }
  for (int i = 0; i < n; ++i) {
    uint8_t* p = bufs_[i].data();
    const size_t len = msgs_[i].msg_len;
    // Raw IPv4 sockets deliver the IP header; its length is IHL words.
    const size_t ihl = len >= 20 ? static_cast<size_t>(p[0] & 0x0f) * 4 : 0;
    if (len < 20 || (p[0] >> 4) != 4 || ihl < 20 || ihl > len) {
      ++stats_.bad_ip;
      continue;
    }
    const uint32_t src = (uint32_t{p[12]} << 24) | (uint32_t{p[13]} << 16) | (uint32_t{p[14]} << 8) | p[15];
    ++stats_.packets;
    handler(RxPacket{src, p[8], ihl, std::span<uint8_t>(p + ihl, len - ihl)});
  }
  return static_cast<size_t>(n);
}

}  // namespace xcphost
