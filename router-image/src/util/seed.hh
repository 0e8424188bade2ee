// Derivation of independent random streams from the one config seed.
#pragma once

#include <cstdint>

namespace xcprouter {

// splitmix64 (Steele, Lea, Flood 2014): turns nearby integers (seed + k) into
// well-separated 64-bit seeds for std::mt19937_64, whose state would otherwise
// start nearly identical for consecutive seeds.
constexpr uint64_t splitmix64(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

// Stream numbers as CONFIG.md states them: link k = 2*port_index + (ingress?1:0);
// the loss model uses stream 2k, the qdisc stream 2k+1.
constexpr uint64_t link_number(uint64_t global_port_index, bool ingress) {
  return 2 * global_port_index + (ingress ? 1 : 0);
}
constexpr uint64_t loss_seed(uint64_t seed, uint64_t link) { return splitmix64(seed + 2 * link); }
constexpr uint64_t qdisc_seed(uint64_t seed, uint64_t link) { return splitmix64(seed + 2 * link + 1); }

}  // namespace xcprouter
