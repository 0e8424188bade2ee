// A PacketWriter that gathers packets into a fixed array of buffers and sends
// them with one sendmmsg() per batch. When the socket buffer is full
// (EAGAIN) the unsent packets stay queued and has_room() turns false until a
// later flush() succeeds: the connection then simply waits, nothing is lost.
#pragma once

#include <netinet/in.h>
#include <sys/socket.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "io/raw_socket.hh"
#include "transport/packet_writer.hh"

namespace xcphost {

struct TxStats {
  uint64_t packets = 0;
  uint64_t syscalls = 0;
  uint64_t would_block = 0;    // flushes that hit a full socket buffer
  uint64_t errors = 0;         // packets dropped by a send error (e.g. EMSGSIZE)
  int last_errno = 0;
};

class TxBatch final : public PacketWriter {
 public:
  TxBatch(const RawSocket& sock, size_t batch_packets = 64);
  TxBatch(const TxBatch&) = delete;
  TxBatch& operator=(const TxBatch&) = delete;

  std::span<uint8_t> buffer() override;
  void commit(uint32_t remote_addr, size_t len) override;
  bool has_room() const override { return count_ < slots_.size(); }

  // Sends everything queued; returns true when nothing is left pending.
  bool flush();
  bool pending() const { return first_ < count_; }
  const TxStats& stats() const { return stats_; }

 private:
  struct Slot {
    std::vector<uint8_t> bytes;
    sockaddr_in addr{};
    iovec iov{};
  };
  int fd_;
  std::vector<Slot> slots_;
  std::vector<mmsghdr> msgs_;
  size_t first_ = 0;  // first queued, unsent slot
  size_t count_ = 0;  // slots in use
  TxStats stats_;
};

}  // namespace xcphost
