// Seeded U[0,1) source for per-packet random decisions (stochastic rounding
// of H_feedback, RED drops). xoshiro256** seeded through splitmix64: a few ns
// per draw and fully repeatable from the explicit seed (never random_device).
#pragma once

#include <cstdint>

namespace xcp {

class UniformRng {
 public:
  explicit UniformRng(uint64_t seed) {
    uint64_t x = seed;
    for (auto& w : s_) w = splitmix64(x);
  }
  // Uniform in [0, 1) with 53 random bits.
  double next() { return static_cast<double>(next_u64() >> 11) * 0x1.0p-53; }

  uint64_t next_u64() {
    const uint64_t result = rotl(s_[1] * 5, 7) * 9;
    const uint64_t t = s_[1] << 17;
    s_[2] ^= s_[0];
    s_[3] ^= s_[1];
    s_[1] ^= s_[2];
    s_[0] ^= s_[3];
    s_[2] ^= t;
    s_[3] = rotl(s_[3], 45);
    return result;
  }

 private:
  static uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  static uint64_t splitmix64(uint64_t& x) {
    uint64_t z = (x += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  uint64_t s_[4];
};

}  // namespace xcp

// The engine's code (namespace xcprouter) names these unqualified; they moved
// here so the host stack's receiver-side virtual router shares them.
namespace xcprouter {
using xcp::UniformRng;
}  // namespace xcprouter
