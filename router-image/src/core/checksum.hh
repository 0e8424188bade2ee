// The Internet checksum (RFC 1071) and its incremental update (RFC 1624).
#pragma once

#include <cstddef>
#include <cstdint>

namespace xcprouter {

// One's-complement sum of `len` bytes folded to 16 bits, complemented: the
// value to store in a checksum field that was zero while summing. Over a
// header that includes a correct checksum the result is 0.
uint16_t internet_checksum(const uint8_t* data, size_t len);

// RFC 1624 eqn. 3: HC' = ~(~HC + ~m + m'), for one 16-bit word of the summed
// data changing from `old_word` to `new_word`. Values in host byte order of
// the big-endian words as they sit in the packet.
constexpr uint16_t checksum_update(uint16_t old_checksum, uint16_t old_word, uint16_t new_word) {
  uint32_t sum = static_cast<uint16_t>(~old_checksum);
  sum += static_cast<uint16_t>(~old_word);
  sum += new_word;
  sum = (sum & 0xFFFF) + (sum >> 16);
  sum = (sum & 0xFFFF) + (sum >> 16);
  return static_cast<uint16_t>(~sum);
}

}  // namespace xcprouter
