// All connections of one process: demultiplexes arriving packets by
// (remote address, local port, remote port), accepts SYNs on listening
// ports, drives timers and sending. Several processes on one host each have
// an Endpoint on their own raw socket; every one sees every protocol-253
// packet and ignores ports it does not own.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <unordered_map>
#include <vector>

#include "transport/connection.hh"
#include "xcp/chirp_sender.hh"
#include "xcp/uniform_rng.hh"
#include "xcp/units.hh"

namespace xcphost {

struct FlowKeyHash {
  size_t operator()(const FlowKey& k) const {
    return std::hash<uint64_t>()((uint64_t{k.remote_addr} << 32) | (uint64_t{k.local_port} << 16) |
                                 k.remote_port);
  }
};

struct EndpointStats {
  uint64_t packets_in = 0;
  uint64_t not_ours = 0;     // other ports (other processes on this host)
  uint64_t malformed = 0;    // bad shim or segment header
  uint64_t resets_sent = 0;  // segments for a listening port without a connection
  // XCP-i (docs/protocol.md §4, sender duty): estimation requests of the first
  // XCP-i router behind a cloud on our side, acknowledged.
  uint64_t xcpi_requests_answered = 0;
  // ... and, when the request asks for chirps (the router's chirp estimator),
  // the probes this process sent toward it (U's chirps, libxcp ChirpSender).
  uint64_t xcpi_probes_sent = 0;
  uint64_t xcpi_probe_bytes = 0;
  uint64_t xcpi_probes_unsent = 0;  // due while the send batch was full (skipped)
  uint64_t xcpi_chirp_jobs_refused = 0;
};

class Endpoint {
 public:
  // Called for every accepted connection; returns its handler (may be null).
  using Acceptor = std::function<ConnectionHandler*(Connection&)>;

  explicit Endpoint(PacketWriter& writer) : writer_(writer) {}
  Endpoint(const Endpoint&) = delete;
  Endpoint& operator=(const Endpoint&) = delete;

  // Decides whether a SYN to a port nobody here listens on is answered with
  // RST (the client's connect then fails at once with "refused"), asked per
  // such SYN. Unset (the default): ignored, since another process's
  // endpoint on this host may own the port.
  using ResetPolicy = std::function<bool()>;
  void set_reset_unowned_syn(ResetPolicy p) { reset_unowned_ = std::move(p); }

  // Accepts connections to `port` with `cfg` (the client's SYN chooses nothing).
  void listen(uint16_t port, const ConnectionConfig& cfg, Acceptor acceptor);
  // New SYNs to `port` are no longer accepted; its connections carry on.
  void unlisten(uint16_t port) { listeners_.erase(port); }
  // Opens a connection and sends its SYN. The reference stays valid until
  // remove() (client connections are never reaped automatically).
  Connection& connect(FlowKey key, const ConnectionConfig& cfg, ConnectionHandler* handler,
                      xcp::Timestamp now);
  void remove(const Connection& c);

  // One received packet: `ip_payload` starts at the XCP shim.
  void on_packet(uint32_t src_addr, std::span<const uint8_t> ip_payload, xcp::Timestamp now);
  // Fires due timers, lets every connection send, and forgets finished
  // accepted connections.
  void service(xcp::Timestamp now);
  xcp::Timestamp next_deadline() const;

  size_t connection_count() const { return conns_.size(); }
  bool owns_port(uint16_t port) const;
  const EndpointStats& stats() const { return stats_; }

 private:
  void send_reset(uint32_t remote_addr, const SegmentHeader& in, xcp::Timestamp now);
  // A Format 3 message addressed to this host: a request is acknowledged,
  // and the chirps it asks for (aux > 0, the chirp estimator) are sent by
  // service() when this process sends XCP-i traffic (every process on the
  // host sees the request; only those whose packets made us U probe).
  void on_control(uint32_t src_addr, std::span<const uint8_t> ip_payload, xcp::Timestamp now);
  void send_chirps(xcp::Timestamp now);

  struct Listener {
    ConnectionConfig cfg;
    Acceptor acceptor;
  };
  struct Entry {
    std::unique_ptr<Connection> conn;
    bool accepted = false;
  };

  PacketWriter& writer_;
  std::unordered_map<uint16_t, Listener> listeners_;
  std::unordered_map<FlowKey, Entry, FlowKeyHash> conns_;
  std::unordered_map<uint16_t, uint32_t> client_ports_;  // local port -> connections
  EndpointStats stats_;
  ResetPolicy reset_unowned_;
  // XCP-i sender duty with the chirp estimator. Jobs are bounded (one per
  // requesting router and session, at most kMaxChirpJobs).
  static constexpr size_t kMaxChirpJobs = 16;
  bool sends_xcpi_ = false;  // a connection or listener here sends the XCP-i block
  xcp::UniformRng chirp_rng_{0x5843502D69ull};
  xcp::ChirpSender chirps_{xcp::ChirpConfig{}, 0.02, kMaxChirpJobs, chirp_rng_};
};

}  // namespace xcphost
