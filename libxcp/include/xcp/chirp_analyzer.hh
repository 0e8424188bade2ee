// Receiver side of the chirp estimator (pathChirp, Ribeiro et al., PAM
// 2003): reassembles the probes of each chirp from U and turns one chirp's
// queueing-delay signature into one available-bandwidth estimate.
//
// Per chirp: q_k = (arrival_k − send_offset_k), relative (U's and R's clocks
// need not agree: a constant offset cancels). An excursion starts at k when
// q rises (q_k < q_k+1) and ends at the first j where q_j − q_k falls below
// 1/F of its peak; excursions of at least `busy_period_threshold` packets are
// self-induced congestion, and their rising gaps get E_k = R_k. An excursion
// still open at the end of the chirp marks the rate R_l at its start l as the
// available bandwidth: every gap from l on, and every gap not otherwise
// marked, gets E_k = R_l (R_top when the last excursion ended). The chirp's
// estimate is D = Σ E_k·Δ_k / Σ Δ_k, clamped to high_rate. Excursions whose
// peak stays within delay_floor are taken as timestamp noise, and the open
// excursion starts where the delay last left that band.
//
// Loss, reordering and duplicates: probes are stored by index (duplicates and
// indices past the chirp are counted and ignored); a lost packet merges the
// two gaps around it into one (its rate is the bytes sent over the merged
// span), and the open excursion starts at the first such gap at the latest
// (a loss is a full buffer: congestion, even where the delay stayed flat). A chirp is analysed when its last index arrives, when no probe of
// it came for chirp_timeout, or when max_open_chirps newer chirps push it
// out; probes of a chirp already analysed are counted as stale.
//
// Time enters only through the arrival stamps and on_deadline(now), so tests
// drive it with simulated time.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "xcp/units.hh"
#include "xcp/chirp_config.hh"

namespace xcp {

// One probe as R received it.
struct ChirpProbe {
  uint32_t chirp_id = 0;            // U's chirp counter (wraps; serial order)
  uint32_t index = 0;               // 0 .. packets_per_chirp − 1
  xcp::Duration send_offset{};      // from the chirp's first packet, U's clock
  xcp::Timestamp arrival{};         // R's receive stamp (kernel, monotonic)
  uint32_t bytes = 0;               // wire size (IP bytes)
};

// The outcome of one chirp.
struct ChirpResult {
  uint32_t chirp_id = 0;
  std::optional<xcp::Rate> estimate;  // empty: unusable (loss, bad offsets)
  uint32_t received = 0;              // distinct probes that arrived
  xcp::Timestamp completed_at{};      // last index's arrival, or the timeout
};

struct ChirpAnalyzerCounters {
  uint64_t probes = 0;        // on_probe calls
  uint64_t duplicates = 0;    // index already held for that chirp
  uint64_t out_of_range = 0;  // index >= packets_per_chirp
  uint64_t stale = 0;         // chirp already analysed
  uint64_t completed = 0;     // chirps closed by their last index
  uint64_t timed_out = 0;     // chirps closed by chirp_timeout
  uint64_t evicted = 0;       // chirps closed to make room
  uint64_t unusable = 0;      // closed chirps without an estimate
};

class ChirpAnalyzer {
 public:
  // Throws std::invalid_argument for a config validate() rejects.
  explicit ChirpAnalyzer(const ChirpConfig& config);

  // Takes one probe; returns the chirps it closed (its own when it carries
  // the last index, an older one pushed out), oldest first. Usually empty.
  std::vector<ChirpResult> on_probe(const ChirpProbe& probe);
  // Closes the chirps whose timeout is at or before `now`.
  std::vector<ChirpResult> on_deadline(xcp::Timestamp now);
  // Earliest chirp timeout, if any chirp is open.
  std::optional<xcp::Timestamp> next_deadline() const;

  size_t open_chirps() const { return open_.size(); }
  const ChirpAnalyzerCounters& counters() const { return counters_; }

  // One received probe of a chirp, as the excursion analysis needs it.
  struct Sample {
    uint32_t index;
    xcp::Duration send_offset;
    xcp::Timestamp arrival;
    uint32_t bytes;
  };
  // The pathChirp estimate of one chirp from its received samples in index
  // order (gaps over lost indices merged); empty when fewer than three
  // samples or send offsets that do not increase. Pure.
  static std::optional<xcp::Rate> estimate(std::span<const Sample> samples,
                                           const ChirpConfig& config);

 private:
  struct OpenChirp {
    uint32_t id;
    xcp::Timestamp last_arrival;
    std::vector<Sample> samples;  // arrival order; sorted at close
  };

  ChirpResult close(OpenChirp& chirp, xcp::Timestamp at);
  bool is_stale(uint32_t id) const;

  ChirpConfig config_;
  uint32_t packets_;
  std::vector<OpenChirp> open_;  // at most max_open_chirps, oldest first
  std::optional<uint32_t> newest_closed_;
  ChirpAnalyzerCounters counters_;
};

}  // namespace xcp

// The engine (namespace xcprouter) names these unqualified; they live here so the
// receiver host's virtual router (host-image/src/xcpi/) runs the same estimator.
namespace xcprouter {
using xcp::ChirpProbe;
using xcp::ChirpResult;
using xcp::ChirpAnalyzerCounters;
using xcp::ChirpAnalyzer;
}  // namespace xcprouter
