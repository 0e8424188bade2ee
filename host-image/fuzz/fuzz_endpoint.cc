// libFuzzer target: arbitrary packets into an Endpoint with a listener.
// Input: a sequence of records [len_hi, len_lo, src_last_octet, bytes...];
// each record is one packet from 10.0.0.<src> arriving 1 ms after the
// previous one; the input length modulo 3 picks the --loss-recovery mode.
// Asserts nothing beyond "no crash, no UB, bounded memory":
// every field of a received packet is attacker-controlled.
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "transport/endpoint.hh"

namespace {

class NullWriter final : public xcphost::PacketWriter {
 public:
  std::span<uint8_t> buffer() override { return buf_; }
  void commit(uint32_t, size_t) override {}
  bool has_room() const override { return true; }

 private:
  std::vector<uint8_t> buf_ = std::vector<uint8_t>(xcphost::kMaxPacketBytes);
};

class Echo final : public xcphost::ConnectionHandler {
  void on_peer_fin(xcphost::Connection& c) override { c.close(); }
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  NullWriter writer;
  Echo echo;
  xcphost::Endpoint ep(writer);
  xcphost::ConnectionConfig cfg;
  cfg.send_buffer_bytes = 64 * 1024;
  cfg.receive_window_bytes = 1 << 20;  // bounds what out-of-order data can hold
  // Every loss-recovery mode, chosen without changing the input format.
  constexpr xcphost::LossRecovery kModes[] = {xcphost::LossRecovery::kSack, xcphost::LossRecovery::kNewReno,
                                              xcphost::LossRecovery::kReno};
  cfg.loss_recovery = kModes[size % 3];
  ep.listen(5201, cfg, [&](xcphost::Connection&) { return &echo; });
  xcp::Timestamp now = xcp::Timestamp::zero() + xcp::Duration::seconds(1);
  size_t i = 0;
  while (i + 3 <= size) {
    const size_t len = (size_t{data[i]} << 8) | data[i + 1];
    const uint32_t src = 0x0a000000u | data[i + 2];
    i += 3;
    const size_t n = len < size - i ? len : size - i;
    ep.on_packet(src, std::span<const uint8_t>(data + i, n), now);
    i += n;
    now += xcp::Duration::milliseconds(1);
    ep.service(now);
  }
  ep.service(now + xcp::Duration::seconds(120));  // every timer path once
  return 0;
}
