// Parameters of the XCP control law (docs/protocol.md §2). The defaults are the
// constants of Katabi/Handley/Rohrs SIGCOMM 2002; experiments may override
// alpha/beta/gamma live (XcpQdisc::configure) to study stability.
#pragma once

#include "xcp/units.hh"

namespace xcp {

// Efficiency-controller gain on spare bandwidth: phi = α·d·S − β·Q.
// Dimensionless; SIGCOMM'02 §3.5 proves stability for 0 < α < π/(4√2) and
// picks α = 0.4.
inline constexpr double kXcpAlpha = 0.4;
// Efficiency-controller gain on the persistent queue (dimensionless);
// β = α²·√2 = 0.226 (SIGCOMM'02 §3.5).
inline constexpr double kXcpBeta = 0.226;
// Shuffling fraction of the input traffic per interval (dimensionless);
// SIGCOMM'02 §3.5 uses γ = 0.1 (10 % of traffic re-distributed each d).
inline constexpr double kXcpGamma = 0.1;

struct XcpParams {
  double alpha = kXcpAlpha;
  double beta = kXcpBeta;
  double gamma = kXcpGamma;
  // d when no flow gave an RTT sample (SA = 0) — docs/protocol.md §2.
  xcp::Duration fallback_interval = xcp::Duration::milliseconds(50);
  // Bounds of the control timer period d = clamp(d_new, ...) — docs/protocol.md §2.
  xcp::Duration min_interval = xcp::Duration::milliseconds(1);
  xcp::Duration max_interval = xcp::Duration::seconds(1.0);
  // r = min(H_rtt, rtt_cap): one absurd RTT must not dominate SB/SA.
  xcp::Duration rtt_cap = xcp::Duration::seconds(1.0);
  // Lower bound of the persistent-queue window Tq (docs/protocol.md §2, ns-2.35).
  xcp::Duration min_queue_window = xcp::Duration::milliseconds(2);
};

}  // namespace xcp

// The engine's code (namespace xcprouter) names these unqualified; they moved
// here so the host stack's receiver-side virtual router shares them.
namespace xcprouter {
using xcp::kXcpAlpha;
using xcp::kXcpBeta;
using xcp::kXcpGamma;
using xcp::XcpParams;
}  // namespace xcprouter
