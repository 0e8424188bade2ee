#include "app/pattern.hh"

#include <algorithm>

namespace xcphost {
namespace {

// splitmix64 of the 8-byte word index: cheap, and a shifted or repeated
// segment never matches the pattern by accident.
uint64_t word_at(uint64_t index) {
  uint64_t z = index + 0x9e3779b97f4a7c15ULL;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

uint8_t byte_at(uint64_t offset) { return static_cast<uint8_t>(word_at(offset >> 3) >> (8 * (offset & 7))); }

}  // namespace

void fill_pattern(uint64_t offset, std::span<uint8_t> out) {
  size_t i = 0;
  while (i < out.size() && ((offset + i) & 7) != 0) {
    out[i] = byte_at(offset + i);
    ++i;
  }
  for (; i + 8 <= out.size(); i += 8) {
    const uint64_t w = word_at((offset + i) >> 3);
    for (int k = 0; k < 8; ++k) out[i + k] = static_cast<uint8_t>(w >> (8 * k));
  }
  for (; i < out.size(); ++i) out[i] = byte_at(offset + i);
}

size_t first_pattern_mismatch(uint64_t offset, std::span<const uint8_t> data) {
  uint8_t chunk[4096];
  for (size_t done = 0; done < data.size();) {
    const size_t n = std::min(sizeof chunk, data.size() - done);
    fill_pattern(offset + done, std::span<uint8_t>(chunk, n));
    for (size_t i = 0; i < n; ++i) {
      if (chunk[i] != data[done + i]) return done + i;
    }
    done += n;
  }
  return data.size();
}

}  // namespace xcphost
