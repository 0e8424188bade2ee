#include "io/tx_batch.hh"

#include <arpa/inet.h>
#include <linux/if_ether.h>

#include <cerrno>
#include <cstring>

namespace xcphost {

TxBatch::TxBatch(const RawSocket& sock, size_t batch_packets)
    : fd_(sock.fd()), slots_(batch_packets == 0 ? 1 : batch_packets), msgs_(slots_.size()) {
  for (size_t i = 0; i < slots_.size(); ++i) {
    slots_[i].bytes.resize(kLinkHeadroom + kMaxPacketBytes);
    slots_[i].addr.sin_family = AF_INET;
    slots_[i].ll.sll_family = AF_PACKET;
    slots_[i].ll.sll_protocol = htons(ETH_P_IP);
    slots_[i].ll.sll_halen = 6;
    msgs_[i].msg_hdr.msg_iov = &slots_[i].iov;
    msgs_[i].msg_hdr.msg_iovlen = 1;
  }
}

bool TxBatch::enable_link_output(uint8_t ttl, int buffer_bytes) {
  const int fd = socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);  // protocol 0: receives nothing
  if (fd < 0) return false;
  link_fd_ = xcp::FileDescriptor(fd);
  if (setsockopt(fd, SOL_SOCKET, SO_SNDBUFFORCE, &buffer_bytes, sizeof buffer_bytes) != 0) {
    setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &buffer_bytes, sizeof buffer_bytes);
  }
  link_ttl_ = ttl != 0 ? ttl : default_ip_ttl();
  return true;
}

const LinkPath* TxBatch::link_path_to(uint32_t remote_addr) {
  auto it = destinations_.find(remote_addr);
  if (it == destinations_.end()) {
    if (destinations_.size() >= kMaxLinkDestinations) return nullptr;
    it = destinations_.emplace(remote_addr, Destination{resolve_link_path(remote_addr), {}}).first;
    if (!it->second.path) it->second.retry_at = std::chrono::steady_clock::now() + kLinkRetry;
  } else if (!it->second.path) {
    const auto now = std::chrono::steady_clock::now();
    if (now < it->second.retry_at) return nullptr;
    it->second.path = resolve_link_path(remote_addr);
    it->second.retry_at = now + kLinkRetry;
  }
  return it->second.path ? &*it->second.path : nullptr;
}

std::span<uint8_t> TxBatch::buffer() {
  if (xdp_ != nullptr) {
    const std::span<uint8_t> frame = xdp_->tx_frame();
    xdp_buffer_ = !frame.empty();
    if (xdp_buffer_) return frame.subspan(kLinkHeadroom);
  }
  return slot_buffer();
}

std::span<uint8_t> TxBatch::slot_buffer() {
  // A caller that ignored has_room(): make room by flushing, and if the
  // socket is still full reuse the last slot (that packet is dropped; the
  // transport recovers it like any loss). Counted as an error.
  if (count_ == slots_.size() && !flush_slots()) {
    ++stats_.errors;
    --count_;
  }
  return std::span<uint8_t>(slots_[count_].bytes).subspan(kLinkHeadroom);
}

void TxBatch::commit_xdp(uint32_t remote_addr, size_t len) {
  xdp_buffer_ = false;
  const std::span<uint8_t> frame = xdp_->tx_frame();  // the frame buffer() handed out
  const LinkPath* path = link_fd_.valid() ? link_path_to(remote_addr) : nullptr;
  if (path != nullptr && path->ifindex == xdp_->ifindex() && kIpv4HeaderBytes + len <= path->mtu &&
      kLinkHeadroom + len <= frame.size()) {
    if (first_ < count_) flush_slots();  // commit order
    write_link_headers(*path, remote_addr, link_ttl_, len, frame);
    xdp_->tx_commit(kLinkHeadroom + len);
    ++stats_.packets;
    ++stats_.xdp_packets;
    if (++xdp_batch_ >= slots_.size()) {
      xdp_->tx_flush();
      xdp_batch_ = 0;
    }
    return;
  }
  // Not for the XDP interface: the packet moves to a slot (the frame stays
  // reserved for the next buffer()).
  std::memcpy(slot_buffer().data(), frame.data() + kLinkHeadroom, len);
  commit(remote_addr, len);
}

void TxBatch::commit(uint32_t remote_addr, size_t len) {
  if (xdp_buffer_) {
    commit_xdp(remote_addr, len);
    return;
  }
  if (xdp_ != nullptr && xdp_->tx_pending()) {  // commit order
    xdp_->tx_flush();
    xdp_batch_ = 0;
  }
  Slot& s = slots_[count_];
  msghdr& h = msgs_[count_].msg_hdr;
  const LinkPath* path = link_fd_.valid() ? link_path_to(remote_addr) : nullptr;
  if (path != nullptr && kIpv4HeaderBytes + len <= path->mtu) {
    write_link_headers(*path, remote_addr, link_ttl_, len, s.bytes);
    s.ll.sll_ifindex = path->ifindex;
    std::memcpy(s.ll.sll_addr, path->dst_mac.data(), 6);
    h.msg_name = &s.ll;
    h.msg_namelen = sizeof(sockaddr_ll);
    s.iov.iov_base = s.bytes.data();
    s.iov.iov_len = kLinkHeadroom + len;
    s.link = true;
  } else {
    // Too large for the link (the raw socket reports EMSGSIZE as before) or
    // no link path: the IP layer builds the header.
    s.addr.sin_addr.s_addr = htonl(remote_addr);
    h.msg_name = &s.addr;
    h.msg_namelen = sizeof(sockaddr_in);
    s.iov.iov_base = s.bytes.data() + kLinkHeadroom;
    s.iov.iov_len = len;
    s.link = false;
  }
  ++count_;
  if (count_ == slots_.size()) flush_slots();
}

int TxBatch::pending_fd() const {
  if (first_ < count_) return slots_[first_].link ? link_fd_.get() : fd_;
  if (xdp_ != nullptr && xdp_->tx_pending()) return xdp_->fd();
  return -1;
}

bool TxBatch::flush() {
  bool done = true;
  if (xdp_ != nullptr) {
    done = xdp_->tx_flush();
    xdp_batch_ = 0;
  }
  return flush_slots() && done;
}

bool TxBatch::flush_slots() {
  while (first_ < count_) {
    // The longest run of queued packets for the same socket, in order.
    const bool link = slots_[first_].link;
    size_t end = first_ + 1;
    while (end < count_ && slots_[end].link == link) ++end;
    const int n = sendmmsg(link ? link_fd_.get() : fd_, &msgs_[first_], static_cast<unsigned>(end - first_), 0);
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
    if (link) stats_.link_packets += static_cast<uint64_t>(n);
  }
  first_ = count_ = 0;
  return true;
}

}  // namespace xcphost
