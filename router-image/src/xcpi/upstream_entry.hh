// What an XCP-i router R keeps per upstream XCP-i router U (docs/protocol.md §4):
// the estimation session, the virtual router V(U) — a full XCP controller
// whose spare bandwidth is the estimate BW_U — and the estimate itself.
// No per-flow state: one entry per cloud crossing, whatever the flows.
#pragma once

#include <array>
#include <cstdint>
#include <deque>
#include <limits>
#include <memory>

#include "xcp/spare_bandwidth.hh"
#include "xcp/units.hh"
#include "xcp/xcp_controller.hh"
#include "xcp/chirp_estimator.hh"
#include "xcp/estimation_session.hh"
#include "xcpi/xcpi_config.hh"
#include "xcpi/oracle_source.hh"

namespace xcprouter {

enum class EstimateSource : uint8_t { kNone, kOracle, kInjected, kChirp };

struct UpstreamCounters {
  uint64_t packets = 0;        // data packets from U that crossed the cloud
  uint64_t lowered = 0;        // ... whose H_feedback V lowered
  uint64_t no_estimate = 0;    // ... forwarded without V (no valid estimate yet / broken / stale)
  uint64_t estimates = 0;      // estimate updates received
};

struct UpstreamEntry {
  UpstreamEntry(uint32_t u, const XcpiConfig& config, const XcpParams& params, uint32_t session_id,
                uint64_t seed);
  UpstreamEntry(const UpstreamEntry&) = delete;
  UpstreamEntry& operator=(const UpstreamEntry&) = delete;

  // V may feed back: the path is not broken and the estimate is fresh.
  bool estimate_usable(xcp::Timestamp now, xcp::Duration max_age) const {
    return source != EstimateSource::kNone && session.state() != EstimationSession::State::kBroken &&
           now - estimate_at <= max_age;
  }
  // `bps`: the available bandwidth of the cloud path (bits/s), used as S
  // itself: right when it is fresh at every interval (the exact oracle).
  void set_estimate(double bps, EstimateSource from, xcp::Timestamp now) {
    note_estimate(bps, from, now);
    spare->set_estimate(bps / 8.0);
  }
  // A slow or erring estimate: `bps` (reported beside the truth) and the
  // capacity left for U's traffic that V tracks every interval
  // (spare_bandwidth.hh).
  void set_capacity_estimate(double bps, double capacity_for_u_bytes, EstimateSource from, xcp::Timestamp now) {
    note_estimate(bps, from, now);
    spare->set_capacity_for_upstream(capacity_for_u_bytes);
  }

  void note_estimate(double bps, EstimateSource from, xcp::Timestamp now) {
    estimate_bps = bps;
    source = from;
    estimate_at = now;
    ++counters.estimates;
  }

  uint32_t upstream;
  EstimationSession session;
  EstimatedSpareBandwidth* spare;  // owned by v
  XcpController v;
  // Bound whenever the plan gave a path: the truth beside any estimator.
  std::unique_ptr<OracleSource> oracle;
  // Estimator kChirp only: the analyzer closes chirps; the estimator smooths
  // their A for the report; c_u_window holds, per usable chirp, A plus U's
  // rate while that chirp crossed the cloud (the capacity left for U, measured
  // at one instant, so A and y never come from different windows).
  ChirpConfig chirp_config;  // this path's grid (H from R's ingress port)
  std::unique_ptr<ChirpAnalyzer> chirp_analyzer;
  std::unique_ptr<ChirpEstimator> chirp;
  std::deque<double> c_u_window;  // bytes/s, at most chirps_per_estimate
  xcp::Timestamp oracle_next{};

  EstimateSource source = EstimateSource::kNone;
  double estimate_bps = 0;
  double truth_bps = std::numeric_limits<double>::quiet_NaN();  // NaN: unknown (no oracle path)
  xcp::Timestamp estimate_at{};

  // Probe timing (chirp estimator): U stamps each probe with its send time
  // (U's clock). R keeps each recent chirp's first stamp (offsets within the
  // chirp), the least one-way delay ever seen (the empty cloud, clock offset
  // included) and the least of the current chirp; cloud_queue_s is the
  // standing queue the latest complete chirp found.
  struct ChirpBase {
    uint32_t chirp_id = 0;
    int64_t first_ns = 0;
    bool used = false;
  };
  std::array<ChirpBase, 8> chirp_bases{};
  int64_t owd_floor_ns = std::numeric_limits<int64_t>::max();
  uint32_t cur_chirp = 0;
  bool cur_chirp_valid = false;
  int64_t cur_chirp_min_owd_ns = std::numeric_limits<int64_t>::max();
  double cloud_queue_s = 0;
  bool v_started = false;
  xcp::Timestamp v_last_timeout{};
  xcp::Timestamp v_next_timeout = xcp::Timestamp::max();
  xcp::Timestamp created{};
  UpstreamCounters counters;
};

}  // namespace xcprouter
