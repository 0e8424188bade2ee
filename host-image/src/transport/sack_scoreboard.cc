#include "transport/sack_scoreboard.hh"

#include <algorithm>

namespace xcphost {

SackScoreboard::SackScoreboard(uint64_t initial_seq, uint32_t mss_bytes, uint32_t dup_thresh)
    : mss_(mss_bytes == 0 ? 1 : mss_bytes),
      dup_thresh_(dup_thresh == 0 ? 1 : dup_thresh),
      una_(initial_seq),
      nxt_(initial_seq),
      high_sacked_(initial_seq),
      retx_hint_(initial_seq) {}

// Adds (sign = +1) or removes (-1) one entry's share of the counters.
void SackScoreboard::account(const Segment& s, uint64_t len, int sign) {
  auto apply = [sign](uint64_t& counter, uint64_t v) { counter = sign > 0 ? counter + v : counter - v; };
  if (s.sacked) {
    apply(sacked_bytes_, len);
    apply(sacked_segments_, s.pieces);
    return;  // a SACKed byte is neither lost nor in flight
  }
  if (s.lost) apply(lost_bytes_, len);
  if (s.retransmitted) apply(retx_bytes_, len);
}

// The entry containing seq, or end() when seq is outside [una_, nxt_).
SackScoreboard::SegMap::iterator SackScoreboard::find(uint64_t seq) {
  if (seq < una_ || seq >= nxt_) return segs_.end();
  return std::prev(segs_.upper_bound(seq));
}
SackScoreboard::SegMap::const_iterator SackScoreboard::find(uint64_t seq) const {
  if (seq < una_ || seq >= nxt_) return segs_.end();
  return std::prev(segs_.upper_bound(seq));
}

// Makes `at` an entry boundary; returns the entry starting at `at` (end()
// when at == nxt_). A merged SACKed run split in two shares its pieces in
// proportion to bytes (each part keeps at least one).
SackScoreboard::SegMap::iterator SackScoreboard::split(uint64_t at) {
  auto it = find(at);
  if (it == segs_.end()) return segs_.lower_bound(at);
  if (it->first == at) return it;
  Segment lower = it->second;
  Segment upper = it->second;
  const uint64_t len = lower.end - it->first;
  const uint64_t lower_len = at - it->first;
  account(it->second, len, -1);
  lower.end = at;
  lower.pieces = static_cast<uint32_t>(std::max<uint64_t>(1, lower.pieces * lower_len / len));
  upper.pieces = std::max<uint32_t>(1, it->second.pieces - std::min(it->second.pieces, lower.pieces));
  it->second = lower;
  account(lower, lower_len, +1);
  account(upper, len - lower_len, +1);
  return segs_.emplace_hint(std::next(it), at, upper);
}

// Merges each run of adjacent SACKed entries in [first, last] into one.
void SackScoreboard::merge_sacked(SegMap::iterator first, SegMap::iterator last) {
  auto it = first;
  while (it != last && it != segs_.end()) {
    auto next = std::next(it);
    if (next == segs_.end()) break;
    if (it->second.sacked && next->second.sacked) {
      it->second.end = next->second.end;  // counters unchanged: same bytes, same pieces
      it->second.pieces += next->second.pieces;
      const bool was_last = next == last;
      segs_.erase(next);
      if (was_last) break;
    } else {
      it = next;
    }
  }
}

void SackScoreboard::mark_lost(SegMap::iterator it) {
  Segment& s = it->second;
  if (s.sacked || s.lost) return;
  account(s, s.end - it->first, -1);
  s.lost = true;
  account(s, s.end - it->first, +1);
  retx_hint_ = std::min(retx_hint_, it->first);
}

void SackScoreboard::on_sent(uint64_t seq, uint32_t len) {
  if (len == 0 || seq > nxt_) return;  // a gap cannot be sent; nothing to record
  const uint64_t end = seq + len;
  const uint64_t old_nxt = nxt_;
  if (end > old_nxt) {
    segs_.emplace_hint(segs_.end(), old_nxt, Segment{end, false, false, false, 1});
    nxt_ = end;
  }
  // Retransmitted part: [seq, old_nxt) ∩ [una, end).
  const uint64_t lo = std::max(seq, una_);
  const uint64_t hi = std::min(end, old_nxt);
  if (lo >= hi) return;
  auto it = split(lo);
  auto stop = split(hi);
  for (; it != stop; ++it) {
    Segment& s = it->second;
    if (s.sacked || s.retransmitted) continue;
    account(s, s.end - it->first, -1);
    s.retransmitted = true;
    account(s, s.end - it->first, +1);
  }
  if (lo <= retx_hint_) retx_hint_ = std::max(retx_hint_, hi);
}

// Drops everything below `ack`; returns bytes acknowledged that were not SACKed.
uint64_t SackScoreboard::advance_una(uint64_t ack) {
  uint64_t fresh = 0;
  auto stop = split(ack);
  for (auto it = segs_.begin(); it != stop;) {
    const uint64_t len = it->second.end - it->first;
    if (!it->second.sacked) fresh += len;
    account(it->second, len, -1);
    it = segs_.erase(it);
  }
  una_ = ack;
  retx_hint_ = std::max(retx_hint_, una_);
  high_sacked_ = std::max(high_sacked_, una_);
  return fresh;
}

// Marks [b.start, b.end) ∩ [una, nxt) SACKed; returns the newly SACKed bytes.
uint64_t SackScoreboard::apply_block(SackBlock b) {
  const uint64_t lo = std::max(b.start, una_);
  const uint64_t hi = std::min(b.end, nxt_);
  if (lo >= hi) return 0;  // D-SACK below una, or beyond anything sent
  high_sacked_ = std::max(high_sacked_, hi);
  // Fast path: already inside one SACKed run (the common repeated block).
  auto at = find(lo);
  if (at->second.sacked && at->second.end >= hi) return 0;
  uint64_t fresh = 0;
  auto it = at->second.sacked ? at : split(lo);
  auto hi_entry = find(hi - 1);
  auto stop = hi_entry->second.sacked ? std::next(hi_entry) : split(hi);
  auto first = it == segs_.begin() ? it : std::prev(it);
  for (; it != stop; ++it) {
    Segment& s = it->second;
    if (s.sacked) continue;
    const uint64_t len = s.end - it->first;
    account(s, len, -1);
    s.sacked = true;
    s.lost = false;
    s.retransmitted = false;
    account(s, len, +1);
    fresh += len;
  }
  merge_sacked(first, stop == segs_.end() ? std::prev(stop) : stop);
  return fresh;
}

// RFC 6675 IsLost for the un-SACKed entries: walking down from the highest
// SACKed byte, the first un-SACKed entry with dup_thresh SACKed segments or
// more than (dup_thresh−1)·mss SACKed bytes above it is lost, and so is every
// un-SACKed entry below it. Those already lost form a prefix (below any
// newly lost one), so marking stops at the first one found.
void SackScoreboard::detect_losses() {
  if (sacked_bytes_ == 0 || high_sacked_ <= una_) return;
  const uint64_t byte_limit = static_cast<uint64_t>(dup_thresh_ - 1) * mss_;
  uint64_t bytes_above = 0;
  uint64_t pieces_above = 0;
  auto it = find(high_sacked_ - 1);
  for (;;) {
    const Segment& s = it->second;
    if (s.sacked) {
      bytes_above += s.end - it->first;
      pieces_above += s.pieces;
    } else if (pieces_above >= dup_thresh_ || bytes_above > byte_limit) {
      break;
    }
    if (it == segs_.begin()) return;  // nothing un-SACKed qualifies
    --it;
  }
  for (;;) {
    if (!it->second.sacked) {
      if (it->second.lost) break;
      mark_lost(it);
    }
    if (it == segs_.begin()) break;
    --it;
  }
}

AckUpdate SackScoreboard::on_ack(uint64_t cumulative_ack, std::span<const SackBlock> blocks,
                                 bool carries_data) {
  AckUpdate u;
  if (cumulative_ack < una_ || cumulative_ack > nxt_) {
    u.stale = true;
    return u;
  }
  const bool had_outstanding = nxt_ > una_;
  const uint64_t advance = cumulative_ack - una_;
  uint64_t fresh = 0;
  if (advance > 0) {
    fresh = advance_una(cumulative_ack);
    dupacks_ = 0;
    // The advance covers the hole (one segment) plus segments the dupacks
    // already counted as delivered (Linux tcp_remove_reno_sacks).
    const uint64_t counted = advance > mss_ ? advance - mss_ : 0;
    dupack_delivered_bytes_ -= std::min(dupack_delivered_bytes_, counted);
  }
  for (const SackBlock& b : blocks) u.newly_sacked_bytes += apply_block(b);

  if (advance == 0 && had_outstanding && !carries_data) {
    u.duplicate = true;
    ++dupacks_;
    if (!sack_negotiated_ && blocks.empty() && sacked_bytes_ == 0) {
      // Peer does not SACK: each dupack means one more segment left the network.
      const uint64_t out = outstanding_bytes();
      const uint64_t cap = out > mss_ ? out - mss_ : 0;
      dupack_delivered_bytes_ = std::min(cap, dupack_delivered_bytes_ + mss_);
      if (dupacks_ >= dup_thresh_ && !segs_.empty()) mark_lost(segs_.begin());
    }
  }
  if (u.newly_sacked_bytes > 0) detect_losses();
  if (nxt_ == una_) {
    dupack_delivered_bytes_ = 0;
    high_sacked_ = una_;
  }
  u.cumulative_advance_bytes = advance;
  u.newly_acked_bytes = fresh + u.newly_sacked_bytes;
  return u;
}

void SackScoreboard::on_timeout() {
  // RFC 6675 §5.1 / RFC 2018: the receiver may have discarded SACKed data, so
  // forget it; everything outstanding is lost and goes again from snd_una.
  // Merged runs keep their extent; split() cuts them as they are resent.
  for (auto& [start, s] : segs_) s = Segment{s.end, false, true, false, s.pieces};
  sacked_bytes_ = 0;
  sacked_segments_ = 0;
  retx_bytes_ = 0;
  lost_bytes_ = outstanding_bytes();
  dupack_delivered_bytes_ = 0;
  dupacks_ = 0;
  high_sacked_ = una_;
  retx_hint_ = una_;
}

void SackScoreboard::mark_head_lost() {
  if (!segs_.empty()) mark_lost(segs_.begin());
}

bool SackScoreboard::is_lost(uint64_t seq) const {
  auto it = find(seq);
  return it != segs_.end() && it->second.lost && !it->second.sacked;
}

std::optional<SeqRange> SackScoreboard::next_segment_to_retransmit() const {
  // Lost entries form a prefix of the un-SACKed ones (detect_losses marks
  // everything below its boundary; a timeout marks all; mark_head_lost the
  // first), so the search ends at the first un-SACKed entry that is not lost.
  const uint64_t from = std::max(retx_hint_, una_);
  auto it = find(from);
  for (; it != segs_.end(); ++it) {
    const Segment& s = it->second;
    if (s.sacked) continue;
    if (!s.lost) break;
    if (s.retransmitted) continue;
    const uint64_t start = std::max(it->first, from);
    if (start >= s.end) continue;
    retx_hint_ = start;  // nothing below is a candidate: skip it next time
    return SeqRange{start, std::min(s.end, start + mss_)};
  }
  retx_hint_ = it == segs_.end() ? nxt_ : std::max(it->first, from);
  return std::nullopt;
}

uint64_t SackScoreboard::pipe_without_dupacks() const {
  const uint64_t out = outstanding_bytes() + retx_bytes_;
  const uint64_t gone = sacked_bytes_ + lost_bytes_;
  return out > gone ? out - gone : 0;
}

uint64_t SackScoreboard::pipe() const {
  const uint64_t out = outstanding_bytes() + retx_bytes_;
  const uint64_t gone = sacked_bytes_ + lost_bytes_ + dupack_delivered_bytes_;
  return out > gone ? out - gone : 0;
}

}  // namespace xcphost
