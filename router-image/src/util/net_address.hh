// MAC and IPv4 address/prefix value types with strict text parsing (config
// and control socket input). Parsing returns nullopt; callers name the field.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace xcprouter {

struct MacAddress {
  std::array<uint8_t, 6> bytes{};
  static std::optional<MacAddress> parse(std::string_view text);  // "02:00:00:aa:bb:cc"
  std::string to_string() const;
  bool operator==(const MacAddress&) const = default;
};

// IPv4 addresses are host byte order everywhere in the engine's tables.
std::optional<uint32_t> parse_ipv4(std::string_view text);  // "10.0.0.1"
std::string ipv4_to_string(uint32_t addr);

struct Ipv4Prefix {
  uint32_t addr = 0;  // host byte order
  uint8_t len = 0;
  // "10.0.0.0/24". With `allow_host_bits` an interface address like
  // "10.0.0.1/24" is accepted; otherwise host bits must be zero.
  static std::optional<Ipv4Prefix> parse(std::string_view text, bool allow_host_bits);
  uint32_t mask() const { return len == 0 ? 0 : ~uint32_t{0} << (32 - len); }
  bool contains(uint32_t a) const { return (a & mask()) == (addr & mask()); }
  std::string to_string() const;
};

}  // namespace xcprouter
