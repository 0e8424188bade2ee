#include "core/route_table.hh"

#include <algorithm>
#include <functional>

namespace xcprouter {

void RouteTable::add(Ipv4Prefix prefix, NextHop hop) {
  by_len_[prefix.len][prefix.addr & prefix.mask()] = hop;
  if (std::find(lengths_.begin(), lengths_.end(), prefix.len) == lengths_.end()) {
    lengths_.push_back(prefix.len);
    std::sort(lengths_.begin(), lengths_.end(), std::greater<>());
  }
}

const NextHop* RouteTable::lookup(uint32_t dst) const {
  for (uint8_t len : lengths_) {
    const uint32_t mask = len == 0 ? 0 : ~uint32_t{0} << (32 - len);
    const auto& table = by_len_[len];
    auto it = table.find(dst & mask);
    if (it != table.end()) return &it->second;
  }
  return nullptr;
}

size_t RouteTable::size() const {
  size_t n = 0;
  for (const auto& t : by_len_) n += t.size();
  return n;
}

}  // namespace xcprouter
