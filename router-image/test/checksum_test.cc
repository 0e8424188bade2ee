#include "core/checksum.hh"

#include <gtest/gtest.h>

#include <random>
#include <vector>

namespace xcprouter {
namespace {

TEST(Checksum, Rfc1071Example) {
  // RFC 1071 §3 example bytes: sum 0xddf2, checksum ~0xddf2.
  const uint8_t data[] = {0x00, 0x01, 0xf2, 0x03, 0xf4, 0xf5, 0xf6, 0xf7};
  EXPECT_EQ(internet_checksum(data, sizeof data), static_cast<uint16_t>(~0xddf2));
}

TEST(Checksum, HeaderWithItsChecksumSumsToZero) {
  uint8_t h[20] = {0x45, 0, 0, 84, 0x12, 0x34, 0x40, 0, 64, 1, 0, 0, 10, 0, 0, 1, 10, 0, 1, 2};
  const uint16_t c = internet_checksum(h, 20);
  h[10] = static_cast<uint8_t>(c >> 8);
  h[11] = static_cast<uint8_t>(c);
  EXPECT_EQ(internet_checksum(h, 20), 0);
}

TEST(Checksum, OddLengthPadsWithZero) {
  const uint8_t odd[] = {0x12, 0x34, 0x56};
  const uint8_t even[] = {0x12, 0x34, 0x56, 0x00};
  EXPECT_EQ(internet_checksum(odd, 3), internet_checksum(even, 4));
}

// RFC 1624: the incremental update must equal a full recomputation for any
// word change, including the 0x0000/0xFFFF corner cases of RFC 1141.
TEST(Checksum, IncrementalUpdateMatchesFullRecompute) {
  std::mt19937_64 rng(7);
  for (int trial = 0; trial < 20000; ++trial) {
    uint8_t h[20];
    for (auto& b : h) b = static_cast<uint8_t>(rng());
    h[10] = h[11] = 0;
    const uint16_t c = internet_checksum(h, 20);
    h[10] = static_cast<uint8_t>(c >> 8);
    h[11] = static_cast<uint8_t>(c);
    const size_t w = (rng() % 9) * 2;  // any word but the checksum itself (offset 10)
    const size_t word = w >= 10 ? w + 2 : w;
    const uint16_t old_word = static_cast<uint16_t>(h[word] << 8 | h[word + 1]);
    const uint16_t new_word = trial % 7 == 0 ? 0xFFFF - old_word : static_cast<uint16_t>(rng());
    h[word] = static_cast<uint8_t>(new_word >> 8);
    h[word + 1] = static_cast<uint8_t>(new_word);
    const uint16_t updated = checksum_update(c, old_word, new_word);
    h[10] = static_cast<uint8_t>(updated >> 8);
    h[11] = static_cast<uint8_t>(updated);
    ASSERT_EQ(internet_checksum(h, 20), 0) << "trial " << trial;
  }
}

}  // namespace
}  // namespace xcprouter
