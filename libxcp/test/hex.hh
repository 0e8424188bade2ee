// Hex strings of the shared test vectors -> bytes.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace xcp::testing {

inline std::vector<uint8_t> from_hex(const std::string& hex) {
  std::vector<uint8_t> out;
  for (size_t i = 0; i + 1 < hex.size(); i += 2) out.push_back(static_cast<uint8_t>(std::stoul(hex.substr(i, 2), nullptr, 16)));
  return out;
}

}  // namespace xcp::testing
