// The oracle estimator (docs/protocol.md §4 "Estimation"): the true available
// bandwidth of the cloud path U->R, as the paper's ns-2 model gives it —
// bottleneck capacity minus its input load — read from the engine's own
// emulation of the cloud's links: min over the path's links of (C − y), with
// y = bytes offered to the link (dropped ones included) over the sampling
// interval. An injected relative error ±k (uniform, seeded) models an
// imperfect estimator (seed 000 Fig. 13); the owner decides what it scales
// (XCPI.md §12: the capacity left for U, not the spare bandwidth).
#pragma once

#include <optional>
#include <vector>

#include "core/link.hh"
#include "xcp/uniform_rng.hh"
#include "xcp/units.hh"

namespace xcprouter {

struct OracleSample {
  double truth_bps = 0;     // min(C - y) over the path, bits/s (may be negative: overload)
  double error_factor = 1;  // 1 + U[-error, +error], drawn per sample
};

class OracleSource {
 public:
  OracleSource(std::vector<const Link*> links, double error, uint64_t seed);

  // Measures over the time since the previous call. nullopt on the first call
  // (no interval measured yet) and when no time has passed.
  std::optional<OracleSample> sample(xcp::Timestamp now);
  size_t link_count() const { return links_.size(); }

 private:
  std::vector<const Link*> links_;
  std::vector<uint64_t> last_in_bytes_;
  double error_;
  UniformRng rng_;
  bool started_ = false;
  xcp::Timestamp last_{};
};

}  // namespace xcprouter
