#include "fairness/zombie_table.hh"

#include <algorithm>

namespace xcprouter {

ZombieTable::ZombieTable(uint32_t entries, double replacement)
    : slots_(std::max<uint32_t>(entries, 1)), replacement_(replacement) {}

std::optional<bool> ZombieTable::probe(const FlowKey& key, UniformRng& rng) {
  if (filled_ < slots_.size()) {
    slots_[filled_++] = key;
    return std::nullopt;
  }
  // Multiply-shift maps 64 random bits onto [0, size) without division.
  const auto i = static_cast<size_t>(
      (static_cast<unsigned __int128>(rng.next_u64()) * slots_.size()) >> 64);
  if (slots_[i] == key) return true;
  if (rng.next() < replacement_) slots_[i] = key;
  return false;
}

}  // namespace xcprouter
