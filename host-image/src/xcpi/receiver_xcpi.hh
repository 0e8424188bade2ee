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
// The estimate, one of two (ReceiverEstimator, the estimator of U's own queue
// in the spec):
//  - capacity (the plan's oracle): the plan knows the cloud path's capacity C
//    (min over the link directions from U to us); V uses S = C_U - y with
//    C_U = C, y its own input, as the engine's V does with a capacity estimate
//    (spare_bandwidth.hh). That is the true available bandwidth when the cloud
//    carries no traffic that does not reach this receiver from U; cross traffic
//    inside the cloud is not seen.
//  - chirp (measured): the receiver is R of the probing protocol. Its requests
//    ask U for chirps (aux = chirps, value = H) and U sends them toward us
//    across the cloud, in the data's direction: the probes cross the same
//    queues as U's data, so they measure the available bandwidth of the path
//    V governs (probing the reverse path, or from us toward U, would measure
//    other links). The analysis is the engine's (libxcp's ChirpAnalyzer and
//    ChirpEstimator, router-image/XCPI_ESTIMATOR.md) on the kernel's receive
//    stamps (RxBatch::enable_timestamps); each usable chirp's A plus V's input
//    rate y is one sample of C_U, and V uses the mean of the window, as the
//    engine's R does (XcpiNode::on_chirps). H, the top of the probed rates, is
//    the receiver's own access link capacity (what its NIC can receive at;
//    the available bandwidth cannot exceed it), given by the plan.
// Q: the cloud's standing queue from one-way delays (cloud_delay.hh) times C_U.
#pragma once

#include <array>
#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <span>
#include <unordered_map>

#include <nlohmann/json.hpp>

#include "transport/packet_writer.hh"
#include "xcp/chirp_estimator.hh"
#include "xcp/control_message.hh"
#include "xcp/estimation_session.hh"
#include "xcp/header.hh"
#include "xcp/uniform_rng.hh"
#include "xcp/units.hh"
#include "xcp/xcp_params.hh"
#include "xcpi/cloud_delay.hh"
#include "xcpi/virtual_router.hh"

namespace xcphost {

enum class ReceiverEstimator : uint8_t {
  kCapacity,  // the plan's cloud-path capacity (oracle without cross traffic)
  kChirp,     // chirps from U analysed here (pathChirp)
};

struct ReceiverXcpiConfig {
  ReceiverEstimator estimator = ReceiverEstimator::kCapacity;
  // Capacity of the cloud path U -> this host, bits/s (the plan's oracle;
  // kCapacity only).
  xcp::Rate path_capacity = xcp::Rate::zero();
  // kChirp: H, the top of the probed rates (this host's access link); the
  // grid L = H/20 .. H and the period for a mean probe load of chirp_overhead
  // of H follow (ChirpConfig::for_rate), and H goes to U in every request.
  xcp::Rate chirp_high_rate = xcp::Rate::zero();
  double chirp_overhead = 0.02;
  // Chirps asked for per request (the engine's XcpiConfig default).
  uint32_t chirps_per_request = 8;
  // An estimate older than this is not used (V stands aside, counted as
  // no_estimate), as the engine's estimate_max_age.
  xcp::Duration estimate_max_age = xcp::Duration::seconds(3.0);
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
  uint64_t probes = 0;           // chirp probes analysed (kChirp)
  uint64_t probe_bytes = 0;      // ... their IP bytes (the estimator's overhead)
  uint64_t probes_unknown = 0;   // probes naming no session of ours
  uint64_t estimates = 0;        // C_U updates from closed chirps
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
    // kChirp: the analysis of U's probes, the C_U samples (A + y per usable
    // chirp, bytes/s) and each recent chirp's first send stamp (offsets
    // within a chirp; U's clock, a constant offset to ours cancels).
    std::unique_ptr<xcp::ChirpAnalyzer> analyzer;
    std::unique_ptr<xcp::ChirpEstimator> chirp;
    std::deque<double> c_u_window;
    std::optional<xcp::Timestamp> estimate_at;
    double estimate_bps = 0;
    struct ChirpBase {
      uint32_t chirp_id = 0;
      int64_t first_ns = 0;
      bool used = false;
    };
    std::array<ChirpBase, 8> chirp_bases{};
  };

  // Throws std::invalid_argument when the estimator has no rate to work with
  // (kCapacity: path_capacity; kChirp: chirp_high_rate) or a chirp grid the
  // analysis rejects.
  ReceiverXcpi(ReceiverXcpiConfig config, PacketWriter& writer);
  ReceiverXcpi(const ReceiverXcpi&) = delete;
  ReceiverXcpi& operator=(const ReceiverXcpi&) = delete;

  // One received packet: `shim` = the bytes after the IPv4 header (V may
  // rewrite H_feedback in them), `ip_ttl` = the IP TTL it arrived with,
  // `arrival` its receive stamp (a chirp probe's timing; zero: use now).
  // True when the packet was an acknowledgement or a probe of ours and is
  // consumed.
  bool on_packet(uint32_t src, uint8_t ip_ttl, std::span<uint8_t> shim, size_t ip_header_bytes,
                 xcp::Timestamp now, xcp::Timestamp arrival = {});
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
  bool on_control(std::span<const uint8_t> shim, size_t wire_bytes, xcp::Timestamp now, xcp::Timestamp arrival);
  void on_probe(Entry& e, const xcp::ControlMessage& m, size_t wire_bytes, xcp::Timestamp arrival);
  void on_chirps(Entry& e, const std::vector<xcp::ChirpResult>& done, xcp::Timestamp now);
  bool estimate_usable(const Entry& e, xcp::Timestamp now) const;
  Entry* find_or_create(uint32_t upstream, xcp::Timestamp now);
  void send_request(uint32_t upstream, const xcp::EstimationSession::Request& r);
  void run_interval(Entry& e, xcp::Timestamp now);
  void recompute_deadline();
  // C_U of V's latest interval: the plan's capacity, or the chirps' estimate.
  double capacity_bytes_per_s(const Entry& e) const;

  ReceiverXcpiConfig config_;
  xcp::ChirpConfig chirp_config_;  // kChirp: the grid for H
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
