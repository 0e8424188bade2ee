#include "io/tx_batch.hh"

#include <arpa/inet.h>
#include <cerrno>
#include <cstring>

#include "xcp/header.hh"

namespace xcphost {

TxBatch::TxBatch(const RawSocket& sock, size_t batch_packets)
    : fd_(sock.fd()),
      header_included_(sock.header_included()),
      ttl_(sock.ttl()),
      slots_(batch_packets == 0 ? 1 : batch_packets),
      msgs_(slots_.size()) {
  for (size_t i = 0; i < slots_.size(); ++i) {
    Slot& s = slots_[i];
    s.bytes.resize(kMaxPacketBytes);
    s.addr.sin_family = AF_INET;
    // What the kernel would write (RawSocketConfig::header_included): version 4,
    // IHL 5, TOS 0, ID 0, DF, the socket's TTL, protocol 253; it fills the
    // total length, checksum and source address.
    s.ip = {0x45, 0, 0, 0, 0, 0, 0x40, 0, ttl_, static_cast<uint8_t>(xcp::kIpProtoXcp), 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
    s.iov[0] = iovec{s.ip.data(), s.ip.size()};
    msgs_[i].msg_hdr.msg_name = &s.addr;
    msgs_[i].msg_hdr.msg_namelen = sizeof(sockaddr_in);
    msgs_[i].msg_hdr.msg_iov = header_included_ ? s.iov.data() : &s.iov[1];
    msgs_[i].msg_hdr.msg_iovlen = header_included_ ? 2 : 1;
  }
}

std::span<uint8_t> TxBatch::buffer() {
  // A caller that ignored has_room(): make room by flushing, and if the
  // socket is still full reuse the last slot (that packet is dropped; the
  // transport recovers it like any loss). Counted as an error.
  if (count_ == slots_.size() && !flush()) {
    ++stats_.errors;
    --count_;
  }
  return slots_[count_].bytes;
}

void TxBatch::commit(uint32_t remote_addr, size_t len) {
  Slot& s = slots_[count_];
  s.addr.sin_addr.s_addr = htonl(remote_addr);
  s.iov[1] = iovec{s.bytes.data(), len};
  if (header_included_) {
    const size_t total = s.ip.size() + len;
    s.ip[2] = static_cast<uint8_t>(total >> 8);
    s.ip[3] = static_cast<uint8_t>(total);
    const uint32_t dst = htonl(remote_addr);
    std::memcpy(&s.ip[16], &dst, 4);
  }
  ++count_;
  if (count_ == slots_.size()) flush();
}

bool TxBatch::flush() {
  while (first_ < count_) {
    const int n = sendmmsg(fd_, &msgs_[first_], static_cast<unsigned>(count_ - first_), 0);
    ++stats_.syscalls;
    if (n < 0) {
      if (errno == EAGAIN || errno == EWOULDBLOCK || errno == ENOBUFS) {
        ++stats_.would_block;
        return false;
      }
      if (errno == EINTR) continue;
      // The first packet failed for good (unreachable, too big...): drop it
      // and carry on with the rest, remembering why.
      stats_.last_errno = errno;
      ++stats_.errors;
      ++first_;
      continue;
    }
    first_ += static_cast<size_t>(n);
    stats_.packets += static_cast<uint64_t>(n);
  }
  first_ = count_ = 0;
  return true;
}

}  // namespace xcphost
