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

namespace xcphost {

struct RxStats {
  uint64_t packets = 0;
  uint64_t syscalls = 0;
  uint64_t bad_ip = 0;  // too short or inconsistent IPv4 header
};

class RxBatch {
 public:
  // (source IPv4 address host order, bytes from the XCP shim onward)
  using Handler = std::function<void(uint32_t, std::span<const uint8_t>)>;

  RxBatch(const RawSocket& sock, size_t batch_packets = 64);
  RxBatch(const RxBatch&) = delete;
  RxBatch& operator=(const RxBatch&) = delete;

  // One recvmmsg(); returns the number of packets received (0: none ready).
  size_t receive(const Handler& handler);
  const RxStats& stats() const { return stats_; }

 private:
  int fd_;
  std::vector<std::vector<uint8_t>> bufs_;
  std::vector<iovec> iovs_;
  std::vector<mmsghdr> msgs_;
  RxStats stats_;
};

}  // namespace xcphost
