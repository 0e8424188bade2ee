// Longest-prefix-match IPv4 routes. One hash table per prefix length in use,
// probed from the longest length down: O(number of distinct lengths) per
// lookup, independent of the number of routes.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <unordered_map>
#include <vector>

#include "util/net_address.hh"

namespace xcprouter {

struct NextHop {
  uint16_t port = 0;  // index into the router's ports
  MacAddress mac{};
};

class RouteTable {
 public:
  // Replaces an existing route for the same prefix.
  void add(Ipv4Prefix prefix, NextHop hop);
  // `dst` in host byte order.
  const NextHop* lookup(uint32_t dst) const;
  size_t size() const;

 private:
  std::array<std::unordered_map<uint32_t, NextHop>, 33> by_len_;
  std::vector<uint8_t> lengths_;  // lengths in use, longest first
};

}  // namespace xcprouter
