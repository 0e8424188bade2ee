// Parameters of the chirp (pathChirp, Ribeiro et al., PAM 2003) available-
// bandwidth estimator an XCP-i router R runs on probes from an upstream U
// (router-image/XCPI_ESTIMATOR.md). One struct for sender and receiver: both sides must
// agree on packet size and rate range; the receiver alone uses the
// excursion and smoothing fields.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <stdexcept>

#include "xcp/units.hh"

namespace xcp {

enum class ChirpSmoothing : uint8_t {
  kMean,    // pathChirp's own choice: unbiased when the cross traffic is on-off
  kMedian,  // robust to single bad chirps, but picks one rate-grid value
};

struct ChirpConfig {
  // Probe size on the wire (IP bytes). One probe adds P/C of queueing at the
  // tight link; 1000 B is 0.8 ms at 10 Mb/s, far above timestamp noise, and
  // below every MTU of the testbed.
  uint32_t packet_bytes = 1000;
  // L: rate probed by the first gap. An available bandwidth below L reads as
  // about L (the chirp is above it from its first packet), so L is the floor
  // of the estimator. The chirp lasts about γ/(γ−1)·P/L, so lowering L costs
  // time linearly and packets only logarithmically.
  xcp::Rate low_rate = xcp::Rate::from_megabits_per_s(0.5);
  // H: the last gap probes at least this rate. Set it to the most the path
  // can carry (U's output capacity): chirp estimates are clamped to H (the
  // available bandwidth cannot exceed it; without the clamp an idle path
  // reads one or two grid steps high, +17 %), and gaps above U's own link
  // only queue at U.
  xcp::Rate high_rate = xcp::Rate::from_megabits_per_s(10);
  // γ: each gap is γ times shorter than the one before. The rate grid has
  // resolution γ; 1.2 is pathChirp's default (finer grids add packets,
  // coarser ones quantisation error).
  double spread_factor = 1.2;
  // Dither: every rate of a chirp is multiplied by γ^−u, u ~ U[0,1) drawn
  // per chirp (seeded, sender side), so that averaging chirps removes the
  // grid's quantisation instead of repeating it. Costs one more gap, which
  // keeps the top gap at or above H.
  bool dither = true;
  // F: an excursion ends when the queueing delay falls back below 1/F of its
  // peak above the excursion's start. 3 is the pathChirp ns-2 agent's value
  // (the 2.4 tool uses 1.5): with cross packets as large as the probes, a
  // single cross packet's bump ends an F = 1.5 excursion, so the open
  // excursion starts late and the estimate runs high (+25 % at 30 % CBR load
  // vs +14 % with F = 3, XCPI_ESTIMATOR.md).
  double decrease_factor = 3.0;
  // Excursions whose peak stays at or below this are timestamp noise, not
  // queueing: they neither mark rates nor count as the open excursion.
  // Without it, 50 µs of uniform stamp noise on an idle path reads as −31 %
  // (a noise dip opens an excursion that never ends). One probe adds P/C of
  // queueing (800 µs at the defaults); for_path() keeps the floor under a
  // quarter of that.
  xcp::Duration delay_floor = xcp::Duration::microseconds(50);
  // L (busy period threshold, packets): shorter excursions are taken as
  // cross-traffic bursts, not self-induced congestion. pathChirp default 5.
  uint32_t busy_period_threshold = 5;
  // Smoothing window, in usable chirps (pathChirp: 11 chirps, mean).
  uint32_t chirps_per_estimate = 11;
  // Usable chirps needed before the first estimate is reported. One chirp
  // is within ~±20 % under light load; three cut the spread noticeably.
  uint32_t min_chirps = 3;
  ChirpSmoothing smoothing = ChirpSmoothing::kMean;
  // Start-to-start period of chirps at the sender. Probe overhead is
  // packets_per_chirp()·P / max(period, chirp duration): see overhead().
  xcp::Duration chirp_period = xcp::Duration::milliseconds(500);
  // A chirp whose last packet never came is analysed this long after its
  // latest arrival: well above the longest gap P/L (16 ms at the defaults)
  // plus queueing jitter, well below the period.
  xcp::Duration chirp_timeout = xcp::Duration::milliseconds(200);
  // Chirps reassembled at once at the receiver (bounded memory under loss or
  // reordering across chirps). Opening one more closes the oldest.
  uint32_t max_open_chirps = 4;
  // A chirp that lost more than this fraction of its packets is unusable:
  // too few gaps are left to place the excursions.
  double max_loss_fraction = 0.5;

  // Defaults for a path whose largest possible rate is `max_rate` (U's output
  // capacity): L = max/20 (floor at 5 %, below the 10 % the seed experiments
  // reach), H = max, and the period chosen for an average probe overhead of
  // `overhead_fraction` of max_rate.
  static ChirpConfig for_path(xcp::Rate max_rate, double overhead_fraction = 0.02) {
    return ChirpConfig{}.for_rate(max_rate, overhead_fraction);
  }
  // This config (probe size, window, thresholds kept) with L, H, the delay
  // floor and the period derived for `max_rate` as for_path() does, the period
  // sized for this config's own probe size.
  ChirpConfig for_rate(xcp::Rate max_rate, double overhead_fraction) const {
    ChirpConfig c = *this;
    c.low_rate = max_rate * (1.0 / 20.0);
    c.high_rate = max_rate;
    c.delay_floor = std::min(ChirpConfig{}.delay_floor, max_rate.transfer_time(c.packet_bytes) / 4.0);
    const double bytes = static_cast<double>(c.packets_per_chirp()) * c.packet_bytes;
    c.chirp_period = xcp::Duration::seconds(bytes / (max_rate.bytes_per_s() * overhead_fraction));
    return c;
  }

  // Gaps G: enough that L·γ^(G−1) ≥ H, plus one when dithering (which lowers
  // the grid by up to γ) so that the top gap still reaches H.
  uint32_t gaps_per_chirp() const {
    const double steps = std::log(high_rate.bytes_per_s() / low_rate.bytes_per_s()) /
                         std::log(spread_factor);
    // The epsilon keeps an exact ratio (H = L·γ^k) from gaining a gap to rounding.
    return 1 + static_cast<uint32_t>(std::ceil(steps - 1e-9)) + (dither ? 1 : 0);
  }
  uint32_t packets_per_chirp() const { return gaps_per_chirp() + 1; }

  // Average probe rate (bytes/s): N·P per period, or back to back when the
  // chirp itself lasts longer than the period.
  xcp::Rate overhead(xcp::Duration chirp_duration) const {
    const xcp::Duration span = std::max(chirp_period, chirp_duration);
    return xcp::Rate::from_bytes_per_s(
        static_cast<double>(packets_per_chirp()) * packet_bytes / span.seconds_f());
  }

  // Rejects a configuration the algorithm cannot run with (called once, at
  // the edge, by ChirpSchedule and ChirpAnalyzer constructors).
  void validate() const {
    if (packet_bytes == 0) throw std::invalid_argument("chirp: packet_bytes must be > 0");
    if (low_rate.is_zero() || high_rate < low_rate)
      throw std::invalid_argument("chirp: need 0 < low_rate <= high_rate");
    if (!(spread_factor > 1.0)) throw std::invalid_argument("chirp: spread_factor must be > 1");
    if (!(decrease_factor > 1.0)) throw std::invalid_argument("chirp: decrease_factor must be > 1");
    if (packets_per_chirp() > kMaxPackets)
      throw std::invalid_argument("chirp: more than 1000 packets per chirp (lower H/L or raise γ)");
    if (chirps_per_estimate == 0 || min_chirps == 0 || min_chirps > chirps_per_estimate)
      throw std::invalid_argument("chirp: need 0 < min_chirps <= chirps_per_estimate");
    if (max_open_chirps == 0) throw std::invalid_argument("chirp: max_open_chirps must be > 0");
    if (!(max_loss_fraction >= 0.0 && max_loss_fraction < 1.0))
      throw std::invalid_argument("chirp: max_loss_fraction must be in [0, 1)");
  }

  // Bounds the receiver's per-chirp memory (and the index field's range).
  static constexpr uint32_t kMaxPackets = 1000;
};

}  // namespace xcp

// The engine (namespace xcprouter) names these unqualified; they live here so the
// receiver host's virtual router (host-image/src/xcpi/) runs the same estimator.
namespace xcprouter {
using xcp::ChirpSmoothing;
using xcp::ChirpConfig;
}  // namespace xcprouter
