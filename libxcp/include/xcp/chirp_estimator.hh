// The available bandwidth of the path U->R that an XCP-i router R reports
// as BW_U (docs/protocol.md §4): chirp estimates (ChirpAnalyzer) smoothed over a
// window of the last chirps_per_estimate usable chirps, by mean (pathChirp)
// or median. No estimate until min_chirps usable chirps are in the window.
//
// Owns its analyzer: the owner feeds every probe from U to on_probe(), calls
// on_deadline() at next_deadline(), and reads estimate(). add() takes an
// already analysed chirp (tests; an owner with its own reassembly).
// One estimator per upstream U; reset() when U's session restarts.
#pragma once

#include <cstdint>
#include <deque>
#include <optional>

#include "xcp/units.hh"
#include "xcp/chirp_analyzer.hh"
#include "xcp/chirp_config.hh"

namespace xcp {

class ChirpEstimator {
 public:
  // Throws std::invalid_argument for a config validate() rejects.
  explicit ChirpEstimator(const ChirpConfig& config);

  void on_probe(const ChirpProbe& probe);
  void on_deadline(xcp::Timestamp now);
  std::optional<xcp::Timestamp> next_deadline() const { return analyzer_.next_deadline(); }
  void add(const ChirpResult& chirp);

  // Smoothed available bandwidth; empty before min_chirps usable chirps.
  std::optional<xcp::Rate> estimate() const;
  // Usable chirps behind estimate() (at most chirps_per_estimate).
  uint32_t chirps_used() const { return static_cast<uint32_t>(window_.size()); }
  // When estimate() first became available (completion time of the chirp
  // that made it so); empty before that. Survives nothing but reset().
  std::optional<xcp::Timestamp> first_estimate_at() const { return first_estimate_at_; }
  // Completion time of the newest usable chirp (the estimate's age).
  std::optional<xcp::Timestamp> last_chirp_at() const { return last_chirp_at_; }

  uint64_t chirps_seen() const { return chirps_seen_; }
  uint64_t chirps_unusable() const { return chirps_unusable_; }
  const ChirpAnalyzerCounters& analyzer_counters() const { return analyzer_.counters(); }

  // Forgets every chirp and the first-estimate time (new session with U).
  void reset();

 private:
  ChirpConfig config_;
  ChirpAnalyzer analyzer_;
  std::deque<double> window_;  // bytes/s, oldest first
  std::optional<xcp::Timestamp> first_estimate_at_;
  std::optional<xcp::Timestamp> last_chirp_at_;
  uint64_t chirps_seen_ = 0;
  uint64_t chirps_unusable_ = 0;
};

}  // namespace xcp

// The engine (namespace xcprouter) names these unqualified; they live here so the
// receiver host's virtual router (host-image/src/xcpi/) runs the same estimator.
namespace xcprouter {
using xcp::ChirpEstimator;
}  // namespace xcprouter
