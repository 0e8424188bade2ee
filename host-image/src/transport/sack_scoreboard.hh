// Sender-side SACK scoreboard (RFC 2018 blocks, RFC 6675 loss detection and
// pipe). Sequence space is 64-bit byte offsets of the stream (no wrap).
//
// Usage by the transport:
//   on_sent(seq, len)           every transmission (new data or retransmission)
//   on_ack(cum, blocks)         every ACK; returns what it newly acknowledged
//   while (pipe() < cwnd):      send next_segment_to_retransmit() if any, else new data
//   on_timeout()                RTO: forget SACK state, everything outstanding is lost
//   mark_head_lost()            NewReno partial ACK without SACK: retransmit the head
// The recovery point (RFC 6582 `recover`) and dupack → fast-retransmit entry are
// the transport's; `AckUpdate::duplicate` and `dupacks()` give it what it needs.
//
// No reneging: once SACKed, a range stays SACKed until on_timeout().
// When SACK was not negotiated, each duplicate ACK is taken as one MSS
// delivered (as Linux's NewReno mode does), so pipe() falls during recovery and
// controllers never need RFC 5681 window inflation; after dup_thresh duplicate
// ACKs the head segment counts as lost. The transport forgets that estimate
// whenever snd_una advances outside fast recovery (forget_dupack_estimate).
// When SACK was negotiated, only SACK blocks lower pipe: our receiver puts
// blocks on every pure ACK while it holds out-of-order data, so a duplicate
// ACK without them acknowledges a duplicate segment (or is a window update).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <span>

#include "transport/segment.hh"  // SackBlock: half-open [start, end) byte range

namespace xcphost {

struct SeqRange {
  uint64_t start = 0;
  uint64_t end = 0;
  uint64_t length() const { return end - start; }
  bool operator==(const SeqRange&) const = default;
};

struct AckUpdate {
  uint64_t cumulative_advance_bytes = 0;  // snd_una moved by this much
  uint64_t newly_sacked_bytes = 0;        // above snd_una, SACKed for the first time
  // Bytes this ACK reports delivered for the first time: the part of the
  // cumulative advance not SACKed before, plus newly SACKed bytes.
  uint64_t newly_acked_bytes = 0;
  // RFC 5681 duplicate ACK: data outstanding, cumulative ACK did not advance,
  // no data on the segment.
  bool duplicate = false;
  // The ACK was ignored: cumulative ACK below snd_una or above snd_nxt.
  bool stale = false;
};

class SackScoreboard {
 public:
  explicit SackScoreboard(uint64_t initial_seq, uint32_t mss_bytes, uint32_t dup_thresh = 3);

  // The peer reports out-of-order data in SACK blocks (negotiated on the SYNs).
  // Until then duplicate ACKs without blocks feed the no-SACK estimate.
  void set_sack_negotiated(bool on) { sack_negotiated_ = on; }
  // Drops the no-SACK estimate of segments delivered past a hole. Called when
  // snd_una advances outside fast recovery (Linux tcp_reset_reno_sack): those
  // duplicate ACKs were reordering or duplicates, and kept would lower pipe
  // for good, since each later ACK advances snd_una by one segment only.
  void forget_dupack_estimate() { dupack_delivered_bytes_ = 0; }

  // Records a transmission of [seq, seq+len). seq == snd_nxt() is new data;
  // seq < snd_nxt() is a retransmission (marks the range retransmitted).
  void on_sent(uint64_t seq, uint32_t len);
  // `carries_data`: the ACK came on a segment with payload, SYN or FIN. RFC
  // 5681 (and Linux's FLAG_NOT_DUP) never takes such a segment for a duplicate
  // ACK: the peer sent it for its own data, not because ours arrived.
  AckUpdate on_ack(uint64_t cumulative_ack, std::span<const SackBlock> blocks, bool carries_data = false);
  void on_timeout();
  // Marks the segment at snd_una lost (NewReno partial ACK, no-SACK entry).
  void mark_head_lost();

  // RFC 6675 IsLost: dup_thresh SACKed segments, or more than
  // (dup_thresh-1)·mss SACKed bytes, above seq; or marked lost.
  bool is_lost(uint64_t seq) const;
  // First lost, un-SACKed, not yet retransmitted range (RFC 6675 NextSeg
  // rule 1), at most one MSS long.
  std::optional<SeqRange> next_segment_to_retransmit() const;
  // RFC 6675 pipe: outstanding − SACKed − lost + retransmitted (bytes).
  uint64_t pipe() const;
  // pipe() without the no-SACK duplicate-ACK estimate: what a Reno sender
  // counts in flight outside fast recovery, where dupacks open no window.
  uint64_t pipe_without_dupacks() const;

  uint64_t snd_una() const { return una_; }
  uint64_t snd_nxt() const { return nxt_; }
  uint64_t outstanding_bytes() const { return nxt_ - una_; }
  uint64_t sacked_bytes() const { return sacked_bytes_; }
  uint64_t lost_bytes() const { return lost_bytes_; }
  uint64_t retransmitted_bytes() const { return retx_bytes_; }
  uint32_t dupacks() const { return dupacks_; }  // consecutive, reset on cumulative advance
  uint64_t highest_sacked() const { return high_sacked_; }  // una when nothing SACKed

 private:
  struct Segment {
    uint64_t end = 0;
    bool sacked = false;
    bool lost = false;
    bool retransmitted = false;
    // Segments as sent that this entry stands for: adjacent SACKed entries are
    // merged into one run so recovery does not walk a window of entries.
    uint32_t pieces = 1;
  };
  using SegMap = std::map<uint64_t, Segment>;

  SegMap::iterator find(uint64_t seq);
  SegMap::const_iterator find(uint64_t seq) const;
  SegMap::iterator split(uint64_t at);
  void merge_sacked(SegMap::iterator first, SegMap::iterator last);
  void account(const Segment& s, uint64_t len, int sign);
  void mark_lost(SegMap::iterator it);
  uint64_t advance_una(uint64_t ack);
  uint64_t apply_block(SackBlock b);
  void detect_losses();

  uint32_t mss_;
  uint32_t dup_thresh_;
  uint64_t una_;
  uint64_t nxt_;
  SegMap segs_;  // covers [una_, nxt_) exactly, keyed by start
  uint64_t sacked_bytes_ = 0;
  uint64_t sacked_segments_ = 0;  // sum of pieces of SACKed entries
  uint64_t lost_bytes_ = 0;   // lost and not SACKed
  uint64_t retx_bytes_ = 0;   // retransmitted and not SACKed
  uint64_t dupack_delivered_bytes_ = 0;  // no-SACK estimate of bytes past a hole
  uint64_t high_sacked_ = 0;
  // No retransmission candidate starts below this; a search cache, lowered
  // whenever something is marked lost, so const lookups may advance it.
  mutable uint64_t retx_hint_ = 0;
  uint32_t dupacks_ = 0;
  bool sack_negotiated_ = false;
};

}  // namespace xcphost
