// When U sends each probe of a chirp (pathChirp, Ribeiro et al., PAM 2003):
// N packets of P bytes whose gaps shrink by the spread factor γ, so gap k
// (between packets k and k+1) probes the instantaneous rate R_k = P/Δ_k =
// L·γ^k, from L up to at least H. Pure arithmetic on the config: the sender
// reads offsets() and schedules the packets on its own clock.
#pragma once

#include <cstdint>
#include <vector>

#include "xcp/units.hh"
#include "xcp/chirp_config.hh"

namespace xcp {

class ChirpSchedule {
 public:
  // Throws std::invalid_argument for a config validate() rejects.
  explicit ChirpSchedule(const ChirpConfig& config);

  uint32_t packets() const { return static_cast<uint32_t>(offsets_.size()); }
  // Send offsets from the chirp's first packet (offsets()[0] = 0) of the
  // undithered grid.
  const std::vector<xcp::Duration>& offsets() const { return offsets_; }
  // Rate probed by gap k of the undithered grid (k < packets() − 1).
  xcp::Rate gap_rate(uint32_t k) const;
  // Offset of the last packet: how long one chirp keeps the path busy.
  xcp::Duration duration() const { return offsets_.back(); }

  // Offsets of one dithered chirp: every rate multiplied by γ^−u (every gap
  // by γ^u). `u` in [0, 1) comes from the sender's seeded UniformRng; with
  // config.dither false, or u = 0, this is offsets().
  std::vector<xcp::Duration> dithered_offsets(double u) const;
  const ChirpConfig& config() const { return config_; }

  // Average probe rate this schedule puts on the path (bytes/s).
  xcp::Rate overhead() const { return config_.overhead(duration()); }

 private:
  ChirpConfig config_;
  std::vector<xcp::Duration> offsets_;
};

}  // namespace xcp

// The engine (namespace xcprouter) names these unqualified; they live here so the
// receiver host's virtual router (host-image/src/xcpi/) runs the same estimator.
namespace xcprouter {
using xcp::ChirpSchedule;
}  // namespace xcprouter
