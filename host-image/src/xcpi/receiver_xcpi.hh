// The receiver's XCP-i duty (docs/protocol.md §4 "Host duties", seed 000 §III-B,
// the mirror of Fig. 4): when a non-XCP cloud lies after the last XCP-i router U,
// no router is left to run V(U), so the receiver runs it. It sits between the
// raw socket and the endpoint, where a router's V sits before its output port:
//
//   on_packet(): a data packet whose shim shows xcp_ttl > IP TTL crossed a cloud
//     after U = last_xcp_router. One entry per U (bounded table, idle expiry):
//     the estimation session toward U (requests, U's acknowledgements, three
//     unanswered -> broken, periodic re-estimation: libxcp's EstimationSession,
//     the engine's own) and V(U). V lowers H_feedback in the packet's shim in
//     place, so the connection echoes min(routers', V's) to the sender.
//     U's acknowledgements of our requests are consumed here.
//   advance(): the sessions' timers, V's control intervals, expiry.
//
// The estimate (the oracle): the plan knows the cloud path's capacity C (min
// over the link directions from U to us); V uses S = C_U - y with C_U = C, y its
// own input, as the engine's V does with a capacity estimate (spare_bandwidth.hh).
// That is the true available bandwidth when the cloud carries no traffic that
// does not reach this receiver from U; cross traffic inside the cloud is not
// seen (docs/protocol.md §4 says what a probing estimator would add).
// Q: the cloud's standing queue from one-way delays (cloud_delay.hh).
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <unordered_map>

#include <nlohmann/json.hpp>

#include "transport/packet_writer.hh"
#include "xcp/estimation_session.hh"
#include "xcp/header.hh"
#include "xcp/uniform_rng.hh"
#include "xcp/units.hh"
#include "xcp/xcp_params.hh"
#include "xcpi/cloud_delay.hh"
#include "xcpi/virtual_router.hh"

namespace xcphost {

struct ReceiverXcpiConfig {
  // Capacity of the cloud path U -> this host, bits/s (the plan's oracle).
  xcp::Rate path_capacity = xcp::Rate::zero();
  // Upstream XCP-i routers tracked at once (each entry ~1 KB); a packet from a
  // new U when full passes without V and is counted (table_full). One flow's
  // receiver sees one U; 16 covers a server behind several clouds.
  uint32_t max_upstreams = 16;
  // An entry with no packet from U for this long is removed (the engine's 2 s).
  xcp::Duration idle_timeout = xcp::Duration::seconds(2.0);
  // Add the cloud's standing queue (one-way delay above its floor) to Q.
  bool cloud_queue = true;
  xcp::EstimationTiming timing;
  xcp::XcpParams params;
  uint64_t seed = 1;
};

struct ReceiverXcpiCounters {
  uint64_t clouds_detected = 0;  // data packets with xcp_ttl > IP TTL
  uint64_t lowered = 0;          // ... whose H_feedback V lowered
  uint64_t no_estimate = 0;      // ... passed without V (U not acknowledged yet, or broken)
  uint64_t table_full = 0;       // ... from a new U refused an entry
  uint64_t expired = 0;          // entries removed after idle_timeout
  uint64_t requests = 0;         // estimation requests sent
  uint64_t acks = 0;             // acknowledgements consumed (any attempt)
  uint64_t timeouts = 0;         // unanswered requests
  uint64_t broken = 0;           // times a path was declared broken
};

class ReceiverXcpi {
 public:
  struct Entry {
    Entry(uint32_t u, const ReceiverXcpiConfig& c, uint32_t session, uint64_t seed);
    uint32_t upstream;
    xcp::EstimationSession session;
    VirtualRouter v;
    CloudDelay delay;
    xcp::Timestamp v_last{};
    xcp::Timestamp v_next = xcp::Timestamp::max();
  };

  ReceiverXcpi(ReceiverXcpiConfig config, PacketWriter& writer);
  ReceiverXcpi(const ReceiverXcpi&) = delete;
  ReceiverXcpi& operator=(const ReceiverXcpi&) = delete;

  // One received packet: `shim` = the bytes after the IPv4 header (V may
  // rewrite H_feedback in them), `ip_ttl` = the IP TTL it arrived with.
  // True when the packet was an acknowledgement of ours and is consumed.
  bool on_packet(uint32_t src, uint8_t ip_ttl, std::span<uint8_t> shim, size_t ip_header_bytes,
                 xcp::Timestamp now);
  void advance(xcp::Timestamp now);
  xcp::Timestamp next_deadline() const { return next_deadline_; }

  const ReceiverXcpiCounters& counters() const { return counters_; }
  const ReceiverXcpiConfig& config() const { return config_; }
  size_t entries() const { return table_.size(); }
  const Entry* entry(uint32_t upstream) const;
  // Counters and, per upstream U, the session and V's latest interval.
  nlohmann::json report() const;

 private:
  void on_data(std::span<uint8_t> shim, const xcp::XcpHeader& h, size_t wire_bytes,
               xcp::Timestamp now);
  bool on_ack(std::span<const uint8_t> shim, xcp::Timestamp now);
  Entry* find_or_create(uint32_t upstream, xcp::Timestamp now);
  void send_request(uint32_t upstream, const xcp::EstimationSession::Request& r);
  void run_interval(Entry& e, xcp::Timestamp now);
  void recompute_deadline();
  double capacity_bytes_per_s() const { return config_.path_capacity.bytes_per_s(); }

  ReceiverXcpiConfig config_;
  PacketWriter& writer_;
  xcp::UniformRng rng_;
  std::unordered_map<uint32_t, std::unique_ptr<Entry>> table_;
  std::unordered_map<uint32_t, uint32_t> session_owner_;  // session id -> upstream
  xcp::Timestamp next_deadline_ = xcp::Timestamp::max();
  xcp::Timestamp next_expiry_scan_ = xcp::Timestamp::max();
  uint64_t created_ = 0;
  ReceiverXcpiCounters counters_;
};

}  // namespace xcphost
