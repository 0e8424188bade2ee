#include "transport/reassembly_queue.hh"

#include <algorithm>

namespace xcphost {

void ReassemblyQueue::insert(uint64_t seq, std::span<const uint8_t> data) {
  uint64_t start = seq;
  uint64_t end = seq + data.size();
  last_inserted_ = seq;  // RFC 2018: the first SACK block reports the latest arrival
  // Trim against the predecessor.
  auto it = segments_.upper_bound(start);
  if (it != segments_.begin()) {
    auto prev = std::prev(it);
    const uint64_t prev_end = prev->first + prev->second.size();
    if (prev_end >= end) return;  // fully held already
    start = std::max(start, prev_end);
  }
  // Insert the gaps between successors.
  while (start < end) {
    const uint64_t next_start = (it == segments_.end()) ? end : std::min(end, it->first);
    if (next_start > start) {
      const auto* from = data.data() + (start - seq);
      segments_.emplace_hint(it, start, std::vector<uint8_t>(from, from + (next_start - start)));
      held_ += next_start - start;
    }
    if (it == segments_.end() || it->first >= end) break;
    start = it->first + it->second.size();
    ++it;
  }
}

uint64_t ReassemblyQueue::drain(uint64_t rcv_nxt,
                                const std::function<void(std::span<const uint8_t>)>& deliver) {
  while (!segments_.empty()) {
    auto it = segments_.begin();
    const uint64_t end = it->first + it->second.size();
    if (it->first > rcv_nxt) break;
    if (end > rcv_nxt) {
      deliver(std::span<const uint8_t>(it->second).subspan(rcv_nxt - it->first));
      rcv_nxt = end;
    }
    held_ -= it->second.size();
    segments_.erase(it);
  }
  return rcv_nxt;
}

size_t ReassemblyQueue::sack_blocks(std::span<SackBlock> out) const {
  std::vector<SackBlock> merged;
  for (const auto& [start, bytes] : segments_) {
    const uint64_t end = start + bytes.size();
    if (!merged.empty() && merged.back().end == start) {
      merged.back().end = end;
    } else {
      merged.push_back({start, end});
    }
  }
  size_t n = 0;
  auto recent = std::find_if(merged.begin(), merged.end(), [&](const SackBlock& b) {
    return b.start <= last_inserted_ && last_inserted_ < b.end;
  });
  if (recent != merged.end() && n < out.size()) out[n++] = *recent;
  for (auto b = merged.begin(); b != merged.end() && n < out.size(); ++b) {
    if (b != recent) out[n++] = *b;
  }
  return n;
}

}  // namespace xcphost
