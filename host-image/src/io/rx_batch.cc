#include "io/rx_batch.hh"

#include <time.h>

#include <cerrno>
#include <cstring>

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

void RxBatch::enable_timestamps() {
  const int on = 1;
  if (setsockopt(fd_, SOL_SOCKET, SO_TIMESTAMPNS, &on, sizeof on) < 0)
    throw xcp::SystemError("setsockopt(SO_TIMESTAMPNS) on the raw socket", errno);
  cmsg_bufs_.assign(msgs_.size(), std::vector<uint8_t>(CMSG_SPACE(sizeof(timespec))));
  timestamps_ = true;
}

namespace {
int64_t ns_of(const timespec& t) { return static_cast<int64_t>(t.tv_sec) * 1'000'000'000 + t.tv_nsec; }
}  // namespace

size_t RxBatch::receive_xdp(const PacketHandler& handler) {
  if (xdp_ == nullptr) return 0;
  return xdp_->receive(
      [&](std::span<uint8_t> frame) {
        // The program passed only IPv4 frames without options; the IP total
        // length bounds the packet (a frame may carry padding).
        constexpr size_t kEth = 14;
        uint8_t* p = frame.data() + kEth;
        const size_t avail = frame.size() > kEth ? frame.size() - kEth : 0;
        const size_t total = avail >= 20 ? (size_t{p[2]} << 8 | p[3]) : 0;
        if (avail < 20 || (p[0] >> 4) != 4 || (p[0] & 0x0f) != 5 || total < 20 || total > avail) {
          ++stats_.bad_ip;
          return;
        }
        const uint32_t src = (uint32_t{p[12]} << 24) | (uint32_t{p[13]} << 16) | (uint32_t{p[14]} << 8) | p[15];
        ++stats_.packets;
        ++stats_.xdp_packets;
        handler(RxPacket{src, p[8], 20, std::span<uint8_t>(p + 20, total - 20)});
      },
      static_cast<uint32_t>(msgs_.size()));
}

size_t RxBatch::receive(const Handler& handler) {
  return receive_packets([&handler](const RxPacket& p) { handler(p.src, p.shim); });
}

size_t RxBatch::receive_packets(const PacketHandler& handler) {
  if (timestamps_) {
    for (size_t i = 0; i < msgs_.size(); ++i) {
      msgs_[i].msg_hdr.msg_control = cmsg_bufs_[i].data();
      msgs_[i].msg_hdr.msg_controllen = cmsg_bufs_[i].size();
    }
  }
  const int n = recvmmsg(fd_, msgs_.data(), static_cast<unsigned>(msgs_.size()), MSG_DONTWAIT, nullptr);
  ++stats_.syscalls;
  if (n < 0) {
    if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) return 0;
    throw xcp::SystemError("recvmmsg on the raw socket", errno);
  }
  // The kernel stamps on CLOCK_REALTIME; the stack runs on CLOCK_MONOTONIC.
  // One reading of both per batch maps the stamps (a step of the wall clock
  // inside a batch shifts its stamps alike; spacing is kept).
  int64_t real_to_mono = 0;
  if (timestamps_ && n > 0) {
    timespec real{}, mono{};
    clock_gettime(CLOCK_REALTIME, &real);
    clock_gettime(CLOCK_MONOTONIC, &mono);
    real_to_mono = ns_of(mono) - ns_of(real);
  }
  const auto monotonic_arrival = [real_to_mono](const msghdr& h) {
    for (cmsghdr* c = CMSG_FIRSTHDR(&h); c != nullptr; c = CMSG_NXTHDR(const_cast<msghdr*>(&h), c)) {
      if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_TIMESTAMPNS) {
        timespec t{};
        std::memcpy(&t, CMSG_DATA(c), sizeof t);
        return xcp::Timestamp::from_ns(ns_of(t) + real_to_mono);
      }
    }
    return xcp::Timestamp{};
  };
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
    RxPacket rp{src, p[8], ihl, std::span<uint8_t>(p + ihl, len - ihl)};
    if (timestamps_) rp.arrival = monotonic_arrival(msgs_[i].msg_hdr);
    handler(rp);
  }
  return static_cast<size_t>(n);
}

}  // namespace xcphost
