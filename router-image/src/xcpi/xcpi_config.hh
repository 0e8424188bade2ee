// Typed configuration of a router's XCP-i function (docs/protocol.md §4; JSON in
// CONFIG.md "xcpi"). Parsed once by control/config_loader; the numbers that
// docs/protocol.md §4 leaves to the implementation have their defaults and reasons here.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "xcp/estimation_session.hh"
#include "xcp/units.hh"
#include "xcp/chirp_config.hh"

namespace xcprouter {

enum class EstimatorKind : uint8_t {
  kOracle,  // true available bandwidth read from the cloud's own emulated links
  kChirp,   // measured by chirp probes U -> R (XCPI_ESTIMATOR.md)
};

// One emulated link direction, by router and port name.
struct LinkRef {
  std::string router;
  std::string port;
  bool ingress = false;
};

// The links a packet from `upstream` crosses before it reaches this router:
// the oracle's available bandwidth is min over them of (C - input rate).
struct OraclePath {
  uint32_t upstream = 0;  // IPv4 of U (its last_xcp_router value)
  std::vector<LinkRef> links;
};

struct OracleConfig {
  // Relative error injected into every estimate: BW·(1 + U[-error, +error]),
  // drawn from the router's own seeded stream (seed 000 Fig. 13: 0.1, 0.2).
  double error = 0.0;
  // Zero: a fresh value at every virtual-router control interval, as the
  // paper's ns-2 model ("the correct value at the end of each XCP control
  // interval"). Positive: the value is held for this long (a slow estimator).
  xcp::Duration period = xcp::Duration::zero();
  std::vector<OraclePath> paths;
};

// request_timeout, request_attempts, reestimate_period, broken_holdoff: the
// estimation protocol's timing (xcp/estimation_session.hh, shared with hosts).
struct XcpiConfig : xcp::EstimationTiming {
  EstimatorKind estimator = EstimatorKind::kOracle;
  // Upstream routers tracked at once. Each entry holds a virtual router and a
  // session (~1 KB); when full, packets from a new U are forwarded with the
  // port's XCP only and counted as `table_full` — never an unbounded table.
  uint32_t max_upstreams = 64;
  // An entry with no packet from U for this long is removed (paper: "stopped
  // after an inactivity period"); two seconds outlast any RTT the testbed runs.
  xcp::Duration idle_timeout = xcp::Duration::seconds(2.0);
  // An estimate older than this is not used (V is bypassed, counted).
  xcp::Duration estimate_max_age = xcp::Duration::seconds(3.0);
  // Chirps U sends per request (chirp estimator only).
  uint32_t chirps_per_request = 8;
  OracleConfig oracle;
  // Chirp estimator: add the cloud's standing queue, seen by the probes, to
  // V's Q (Q_V = Q_R + q_cloud·C_U). Seed 000 eq. (1) has R's Q only, which
  // cannot see a queue inside the cloud; with an estimate that errs high the
  // cloud's queue then grows until it drops (the paper's Fig. 13). q_cloud is
  // the least one-way delay of the latest chirp above the least ever seen
  // from U (clock offsets cancel), as XCP's own persistent queue is a minimum.
  bool cloud_queue = true;
  // Chirp probing (estimator kChirp). `chirp` is the template: per upstream,
  // R derives L, H and the period with ChirpConfig::for_path(H, overhead),
  // H being the capacity of R's port the cloud's packets came in on (the
  // available bandwidth cannot exceed the cloud's last hop), and sends H in
  // its request so U probes the same grid. A path-blind H (U's first hop, or
  // the fastest link of the run) put the floor L = H/20 at 40 % of a 10 Mb/s
  // cloud and the probes at 16 % of it.
  ChirpConfig chirp;
  double chirp_overhead = 0.02;  // mean probe rate as a fraction of H
};

}  // namespace xcprouter
