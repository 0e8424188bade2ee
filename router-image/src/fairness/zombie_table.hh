// SRED's zombie list (Ott, Lakshman, Wong 1999; seed 004 §4.2): a table of
// recently seen flow ids. Each probe compares the packet's flow with one
// entry drawn at random: a hit when equal; on a miss the entry is
// overwritten with probability `replacement`. The first `entries` probes only
// fill the table. With N flows sending alike, a probe hits with
// probability 1/N (the HitRate averages that).
//
// Random numbers come from the caller's seeded generator (one per port).
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "core/packet.hh"
#include "xcp/uniform_rng.hh"

namespace xcprouter {

class ZombieTable {
 public:
  ZombieTable(uint32_t entries, double replacement);

  // nullopt while the table is still filling (the key was stored), else hit.
  std::optional<bool> probe(const FlowKey& key, UniformRng& rng);

  void set_replacement(double r) { replacement_ = r; }
  uint32_t entries() const { return static_cast<uint32_t>(slots_.size()); }
  uint32_t filled() const { return filled_; }

 private:
  std::vector<FlowKey> slots_;
  uint32_t filled_ = 0;
  double replacement_;
};

}  // namespace xcprouter
