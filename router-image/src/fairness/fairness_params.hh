// Parameters of the XCP–TCP fairness dropper (docs/protocol.md §6, seed 004:
// Lopez-Pacheco, Lefèvre, Pham), one typed struct parsed once at the edge
// (parse_fairness_params, from the XCP queue's flat `fairness_*` params;
// QUEUES.md "xcp", "tcp_fairness").
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace xcprouter {

class ParamReader;

// When p_drop moves (docs/protocol.md §6, choice 1). The seed says "at every control
// interval", but with factors 1.0001/0.9999 a tenfold change needs
// ln 10 / ln 1.0001 ≈ 23 000 updates: ~460 s at one update per 20 ms, while the
// seed's Fig. 3 reaches fairness ~10 s after TCP's slow start. One update per
// TCP packet (~30 000 pkt/s at 1 Gb/s) does it in ~0.8 s: the default.
enum class FairnessUpdate : uint8_t {
  kTcpPacket,  // every TCP-class arrival while active
  kInterval,   // once per XCP control interval while active (the seed's words)
};

std::string_view to_string(FairnessUpdate u);

struct FairnessParams {
  bool enabled = false;
  // SRED zombie table, per class (seed 004 §4.2: 1000 entries, δ = 0.25/1000).
  uint32_t zombie_entries = 1000;
  double delta = 0.00025;
  // Probability of overwriting the probed entry on a miss; nullopt = the
  // seed's choice for the inspection fraction: 0.25 when every packet is
  // inspected, 0.5 otherwise (seed 004 §6).
  std::optional<double> replacement;
  // Fraction of a class's packets that go through the zombie table (seed 004
  // §6: 1.0 or 0.5), drawn at random per packet.
  double inspect = 1.0;
  // p_drop controller (seed 004 §4.3, §5: p0 = 0.001, D = 0.9999, I = 1.0001).
  double p_drop_start = 0.001;
  double d_drop = 0.9999;
  double i_drop = 1.0001;
  // γ: the mechanism runs while the input rate exceeds threshold·C and both
  // classes sent during the interval (seed 004 §4.4: 97 % of capacity).
  double threshold = 0.97;
  FairnessUpdate update = FairnessUpdate::kTcpPacket;
  // The input and XCP rates that drive activation and p_drop are measured
  // over whole control intervals lasting together at least this long (s);
  // 0 = every control interval, the seed's reading. A scaled experiment
  // (1/k of the packet rate) gets the seed's packets per measurement back
  // with k intervals: at 100 Mb/s a 20 ms interval holds ~170 packets and its
  // input rate dips under 97 % of C by burstiness alone, resetting p_drop.
  double window_s = 0;

  double replacement_probability() const { return replacement.value_or(inspect < 1.0 ? 0.5 : 0.25); }
};

// Reads `tcp_fairness` and the `fairness_*` keys through `r` (only the keys
// given change `current`); throws std::invalid_argument naming the field.
FairnessParams parse_fairness_params(ParamReader& r, FairnessParams current);

}  // namespace xcprouter
