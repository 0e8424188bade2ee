// Receiver-side store of out-of-order bytes. In-order bytes never enter it:
// the connection hands them straight to the application; this holds only
// what arrived above a hole, and produces the SACK blocks describing it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <span>
#include <vector>

#include "transport/segment.hh"

namespace xcphost {

class ReassemblyQueue {
 public:
  // Stores bytes [seq, seq + data.size()) that lie above the next expected
  // byte; overlapping parts already held are dropped.
  void insert(uint64_t seq, std::span<const uint8_t> data);
  // Delivers, in order, every held byte contiguous from `rcv_nxt` through
  // `deliver`; returns the new next expected byte.
  uint64_t drain(uint64_t rcv_nxt, const std::function<void(std::span<const uint8_t>)>& deliver);

  // Up to `max` SACK blocks (merged ranges), the block holding the most
  // recently inserted byte first (RFC 2018 §4), then ascending.
  size_t sack_blocks(std::span<SackBlock> out) const;

  size_t held_bytes() const { return held_; }
  bool empty() const { return segments_.empty(); }

 private:
  std::map<uint64_t, std::vector<uint8_t>> segments_;  // start -> bytes, non-overlapping
  size_t held_ = 0;
  uint64_t last_inserted_ = 0;
};

}  // namespace xcphost
