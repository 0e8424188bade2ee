// The XCP-i function of one router (docs/protocol.md §4), at router level because
// a cloud lies *before* the router: every packet from U that crossed the cloud
// passes V(U) whatever output port it then takes (a fork after the cloud must
// not let each port hand out BW_U again).
//
// Data path, called by Router::forward for Standard XCP packets with the I
// block, after the TTL decrement:
//   on_data(): cloud detection (xcp_ttl > received IP TTL), V(U) sums and
//              feedback (V only lowers H_feedback, so the port's XCP that
//              follows yields min(own, V)), then xcp_ttl := outgoing TTL and
//              last_xcp_router := this router.
// Control path: on_control() for Format 3 messages addressed to this router
// (as R: acknowledgements and probes; as U: requests, answered at once).
// Time: advance()/next_deadline() run the sessions, V's control intervals,
// the oracle samples and the expiry of idle entries.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <unordered_map>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/packet.hh"
#include "xcp/control_message.hh"
#include "xcp/uniform_rng.hh"
#include "xcp/xcp_params.hh"
#include "xcp/chirp_sender.hh"
#include "xcpi/upstream_entry.hh"
#include "xcpi/xcpi_config.hh"

namespace xcprouter {

struct XcpiCounters {
  uint64_t clouds_detected = 0;   // data packets that showed xcp_ttl > IP TTL
  uint64_t rewritten = 0;         // data packets whose I block this router rewrote
  uint64_t table_full = 0;        // packets from a new U refused an entry (table full)
  uint64_t expired = 0;           // entries removed after idle_timeout
  uint64_t requests_answered = 0; // as U: requests acknowledged
  uint64_t control_invalid = 0;   // Format 3 packets to us that did not parse
  uint64_t control_unknown = 0;   // acks/probes for no entry of ours
  uint64_t probes_received = 0;   // as R: chirp packets analysed
  // As U, in chirp_sender(): probes_sent, probe_bytes, jobs_refused.
};

class XcpiNode {
 public:
  // Sends a control message from this router to `dst`, padded to
  // `ip_payload_bytes` after the IPv4 header.
  using ControlSender = std::function<void(uint32_t dst, const xcp::ControlMessage&, size_t ip_payload_bytes,
                                           xcp::Timestamp at)>;
  // R's persistent queue Q for V's efficiency controller (bytes).
  using QueueProbe = std::function<double()>;
  // Capacity (bits/s) of the router's port `i`: H of the chirps from clouds
  // arriving on it.
  using PortRate = std::function<double(uint16_t)>;

  XcpiNode(XcpiConfig config, uint32_t self, XcpParams v_params, uint64_t seed, ControlSender send,
           QueueProbe queue, PortRate port_rate = {});

  // Resolved oracle links per upstream (the engine resolves config names).
  void bind_oracle(uint32_t upstream, std::vector<const Link*> links);

  void on_data(Packet& p, xcp::Timestamp now);
  void on_control(const Packet& p, xcp::Timestamp now);
  // Control socket: an estimate computed elsewhere (an oracle fed by an
  // agent, or a test). Creates no entry: returns false when U is unknown.
  bool inject_estimate(uint32_t upstream, double bw_bps, double truth_bps, xcp::Timestamp now);

  void advance(xcp::Timestamp now);
  xcp::Timestamp next_deadline() const { return next_deadline_; }

  size_t entries() const { return table_.size(); }
  const UpstreamEntry* entry(uint32_t upstream) const;
  const XcpiCounters& counters() const { return counters_; }
  // As U: the chirps downstream routers asked for (shared with sender hosts).
  const xcp::ChirpSender& chirp_sender() const { return chirps_; }
  const XcpiConfig& config() const { return config_; }
  void report(nlohmann::json& out, xcp::Timestamp now) const;

 private:
  // The template with L, H and the period derived for a path of rate `h_bps`.
  ChirpConfig chirp_for(double h_bps) const;
  void on_probe(const xcp::ControlMessage& m, const Packet& p, xcp::Timestamp now);
  // Chirps the analyzer closed: each usable one adds A + y (now) to C_U's window.
  void on_chirps(UpstreamEntry& e, const std::vector<ChirpResult>& done, xcp::Timestamp now);

  UpstreamEntry* find_or_create(uint32_t upstream, uint16_t in_port, xcp::Timestamp now);
  // The entry whose session id is `session` (acks and probes name it).
  UpstreamEntry* entry_by_session(uint32_t session);
  void send_request(UpstreamEntry& e, const EstimationSession::Request& r, xcp::Timestamp now);
  void run_v_timeout(UpstreamEntry& e, xcp::Timestamp now);
  void apply_oracle(UpstreamEntry& e, const OracleSample& s, double elapsed, xcp::Timestamp now);
  void recompute_deadline();

  XcpiConfig config_;
  uint32_t self_;
  XcpParams v_params_;
  uint64_t seed_;
  ControlSender send_;
  QueueProbe queue_;
  PortRate port_rate_;
  UniformRng rng_;
  std::unordered_map<uint32_t, std::unique_ptr<UpstreamEntry>> table_;
  std::unordered_map<uint32_t, std::vector<const Link*>> oracle_links_;
  std::unordered_map<uint32_t, uint32_t> session_owner_;  // session id -> upstream
  xcp::Timestamp next_deadline_ = xcp::Timestamp::max();
  xcp::Timestamp next_expiry_scan_ = xcp::Timestamp::max();
  uint64_t entries_created_ = 0;
  XcpiCounters counters_;
  xcp::ChirpSender chirps_;  // as U: at most max_upstreams jobs
};

}  // namespace xcprouter
