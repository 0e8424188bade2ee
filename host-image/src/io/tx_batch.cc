#include "io/tx_batch.hh"

#include <arpa/inet.h>
#include <cerrno>

namespace xcphost {

TxBatch::TxBatch(const RawSocket& sock, size_t batch_packets)
    : fd_(sock.fd()), slots_(batch_packets == 0 ? 1 : batch_packets), msgs_(slots_.size()) {
  for (size_t i = 0; i < slots_.size(); ++i) {
    slots_[i].bytes.resize(kMaxPacketBytes);
    slots_[i].addr.sin_family = AF_INET;
    msgs_[i].msg_hdr.msg_name = &slots_[i].addr;
    msgs_[i].msg_hdr.msg_namelen = sizeof(sockaddr_in);
    msgs_[i].msg_hdr.msg_iov = &slots_[i].iov;
    msgs_[i].msg_hdr.msg_iovlen = 1;
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
  s.iov.iov_base = s.bytes.data();
  s.iov.iov_len = len;
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
