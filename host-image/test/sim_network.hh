// Test support: two Endpoints joined by a simulated path driven by a
// FakeClock. Each direction has a rate-limited drop-tail bottleneck, a
// propagation delay, and seeded random drop / duplication / reordering
// (reordered packets get extra delay). Header-only; used by *_test.cc.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <random>
#include <vector>

#include "transport/endpoint.hh"
#include "xcp/clock.hh"

namespace xcphost::test {

struct PathConfig {
  xcp::Rate rate = xcp::Rate::from_megabits_per_s(10);
  xcp::Duration delay = xcp::Duration::milliseconds(10);  // one way
  size_t queue_packets = 100;
  double drop = 0.0;       // probability per packet
  double duplicate = 0.0;  // probability per packet
  double reorder = 0.0;    // probability per packet of extra delay
  xcp::Duration reorder_extra = xcp::Duration::milliseconds(3);
};

class SimNetwork;

// One direction: what an Endpoint's packets go through.
class SimLink final : public PacketWriter {
 public:
  SimLink(SimNetwork& net, uint32_t src, PathConfig cfg, uint64_t seed)
      : net_(net), src_(src), cfg_(cfg), rng_(seed), staging_(kMaxPacketBytes) {}
  std::span<uint8_t> buffer() override { return staging_; }
  void commit(uint32_t remote_addr, size_t len) override;
  bool has_room() const override { return true; }

  // Statistics, so tests can assert the impairments really happened.
  uint64_t sent = 0, dropped_random = 0, dropped_queue = 0, duplicated = 0, reordered = 0;
  uint64_t wire_bytes = 0;
  PathConfig& config() { return cfg_; }
  // Optional hook run on every packet's bytes (shim onward) before it enters
  // the link: may inspect or edit them; returning false drops the packet.
  std::function<bool(std::vector<uint8_t>&)> filter;
  uint64_t dropped_filter = 0;

 private:
  SimNetwork& net_;
  uint32_t src_;
  PathConfig cfg_;
  std::mt19937_64 rng_;
  std::vector<uint8_t> staging_;
  xcp::Timestamp link_free_at_ = xcp::Timestamp::zero();
  std::deque<xcp::Timestamp> queue_departures_;
};

class SimNetwork {
 public:
  static constexpr uint32_t kAddrA = 0x0a000001;  // 10.0.0.1
  static constexpr uint32_t kAddrB = 0x0a000002;  // 10.0.0.2

  SimNetwork(PathConfig a_to_b, PathConfig b_to_a, uint64_t seed)
      : clock_(xcp::Timestamp::zero() + xcp::Duration::seconds(1)),
        link_ab_(*this, kAddrA, a_to_b, seed),
        link_ba_(*this, kAddrB, b_to_a, seed ^ 0x9e3779b97f4a7c15ULL),
        a_(link_ab_),
        b_(link_ba_) {}

  Endpoint& a() { return a_; }
  Endpoint& b() { return b_; }
  SimLink& a_to_b() { return link_ab_; }
  SimLink& b_to_a() { return link_ba_; }
  xcp::FakeClock& clock() { return clock_; }
  // Optional stage in front of B's endpoint (the XCP-i receiver duty,
  // src/xcpi/receiver_xcpi.hh): sees each packet for B first and may edit it;
  // true = consumed. Its timers run with the endpoints'.
  struct Stage {
    std::function<bool(uint32_t src, std::span<uint8_t> shim, xcp::Timestamp now)> on_packet;
    std::function<void(xcp::Timestamp)> advance;
    std::function<xcp::Timestamp()> next_deadline;
  };
  void set_b_stage(Stage s) { b_stage_ = std::move(s); }
  xcp::Timestamp now() const { return clock_.now(); }

  void schedule(xcp::Timestamp at, uint32_t src, uint32_t dst, std::vector<uint8_t> bytes) {
    in_flight_.emplace(std::make_pair(at, seq_++), Pending{src, dst, std::move(bytes)});
  }

  // Runs until `stop()` is true or simulated time passes `limit`.
  template <typename Stop>
  void run_until(Stop stop, xcp::Duration limit) {
    const xcp::Timestamp end = now() + limit;
    a_.service(now());
    b_.service(now());
    while (!stop() && now() < end) {
      xcp::Timestamp next = std::min(a_.next_deadline(), b_.next_deadline());
      if (b_stage_.advance) next = std::min(next, b_stage_.next_deadline());
      if (!in_flight_.empty()) next = std::min(next, in_flight_.begin()->first.first);
      if (next == xcp::Timestamp::max()) break;  // nothing can ever happen again
      if (next > now()) clock_.set(std::min(next, end));
      while (!in_flight_.empty() && in_flight_.begin()->first.first <= now()) {
        auto node = in_flight_.extract(in_flight_.begin());
        Pending& p = node.mapped();
        Endpoint& to = (p.dst == kAddrA) ? a_ : b_;
        if (&to == &b_ && b_stage_.on_packet && b_stage_.on_packet(p.src, p.bytes, now())) continue;
        to.on_packet(p.src, p.bytes, now());
      }
      a_.service(now());
      if (b_stage_.advance) b_stage_.advance(now());
      b_.service(now());
    }
  }

 private:
  struct Pending {
    uint32_t src;
    uint32_t dst;
    std::vector<uint8_t> bytes;
  };
  xcp::FakeClock clock_;
  SimLink link_ab_;
  SimLink link_ba_;
  Endpoint a_;
  Endpoint b_;
  Stage b_stage_;
  std::map<std::pair<xcp::Timestamp, uint64_t>, Pending> in_flight_;
  uint64_t seq_ = 0;
};

inline void SimLink::commit(uint32_t remote_addr, size_t len) {
  ++sent;
  const xcp::Timestamp now = net_.now();
  std::uniform_real_distribution<double> u(0.0, 1.0);
  while (!queue_departures_.empty() && queue_departures_.front() <= now) queue_departures_.pop_front();
  if (queue_departures_.size() >= cfg_.queue_packets) {
    ++dropped_queue;
    return;
  }
  // 20 bytes of IPv4 header count on the wire, as on a real link.
  const xcp::Timestamp start = std::max(now, link_free_at_);
  link_free_at_ = start + cfg_.rate.transfer_time(len + 20);
  queue_departures_.push_back(link_free_at_);
  wire_bytes += len + 20;
  if (u(rng_) < cfg_.drop) {
    ++dropped_random;
    return;
  }
  std::vector<uint8_t> bytes(staging_.begin(), staging_.begin() + static_cast<long>(len));
  if (filter && !filter(bytes)) {
    ++dropped_filter;
    return;
  }
  xcp::Timestamp arrive = link_free_at_ + cfg_.delay;
  if (u(rng_) < cfg_.reorder) {
    ++reordered;
    arrive += cfg_.reorder_extra;
  }
  if (u(rng_) < cfg_.duplicate) {
    ++duplicated;
    net_.schedule(arrive + xcp::Duration::microseconds(100), src_, remote_addr, bytes);
  }
  net_.schedule(arrive, src_, remote_addr, std::move(bytes));
}

}  // namespace xcphost::test
