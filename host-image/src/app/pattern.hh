// The deterministic payload of `xcpperf --verify`: byte i of a stream is a
// pure function of i, so the server checks every byte without any state
// shared with the client beyond the stream offset.
#pragma once

#include <cstdint>
#include <span>

namespace xcphost {

// Writes bytes [offset, offset + out.size()) of the pattern into `out`.
void fill_pattern(uint64_t offset, std::span<uint8_t> out);
// Returns the index in `data` of the first byte differing from the pattern
// at `offset`, or data.size() when all match.
size_t first_pattern_mismatch(uint64_t offset, std::span<const uint8_t> data);

}  // namespace xcphost
