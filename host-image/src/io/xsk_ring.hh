// The index arithmetic of an AF_XDP ring (fill, completion, rx, tx) and the
// pool of UMEM frames the send side hands out, apart from the mmapped memory
// so that both are testable without a socket (test/xdp_socket_test.cc).
//
// A ring is single-producer single-consumer: `producer` and `consumer` are
// free-running u32 counters shared with the kernel (they wrap at 2^32, the
// ring's size is a power of two, so entry i lives at i & (size - 1)). The side
// that produces reads the other side's counter with acquire and publishes its
// own with release once the entries are written (<linux/if_xdp.h>, the
// kernel's xsk_queue.h).
#pragma once

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <vector>

namespace xcphost {

template <typename Entry>
class XskRing {
 public:
  XskRing() = default;
  // `size` entries (a power of two) at `entries`; the two shared counters.
  XskRing(uint32_t* producer, uint32_t* consumer, Entry* entries, uint32_t size)
      : producer_(producer), consumer_(consumer), entries_(entries), mask_(size - 1), size_(size) {
    if (size == 0 || (size & (size - 1)) != 0) throw std::invalid_argument("xsk ring: size not a power of two");
    cached_prod_ = load(producer_);
    cached_cons_ = load(consumer_);
  }

  uint32_t size() const { return size_; }
  Entry& at(uint32_t index) { return entries_[index & mask_]; }

  // Producer side: entries free for writing (refreshes the consumer's counter
  // only when the cached one says fewer than `want` are free).
  uint32_t free_entries(uint32_t want) {
    uint32_t free = size_ - (cached_prod_ - cached_cons_);
    if (free < want) {
      cached_cons_ = load(consumer_);
      free = size_ - (cached_prod_ - cached_cons_);
    }
    return free;
  }
  // The index of the next entry to write; write it with at(), then produce().
  uint32_t next_produce() const { return cached_prod_; }
  void produce(uint32_t n) { cached_prod_ += n; }
  // Makes everything produced so far visible to the consumer.
  void publish() { __atomic_store_n(producer_, cached_prod_, __ATOMIC_RELEASE); }
  // Produced (published or not) and not yet consumed, as last seen.
  uint32_t outstanding() {
    cached_cons_ = load(consumer_);
    return cached_prod_ - cached_cons_;
  }

  // Consumer side: entries ready to read (at most `max`), starting at next_consume().
  uint32_t ready(uint32_t max) {
    uint32_t n = cached_prod_ - cached_cons_;
    if (n == 0) {
      cached_prod_ = load(producer_);
      n = cached_prod_ - cached_cons_;
    }
    return n < max ? n : max;
  }
  uint32_t next_consume() const { return cached_cons_; }
  // Gives `n` read entries back to the producer.
  void release(uint32_t n) {
    cached_cons_ += n;
    __atomic_store_n(consumer_, cached_cons_, __ATOMIC_RELEASE);
  }

 private:
  static uint32_t load(const uint32_t* p) { return __atomic_load_n(p, __ATOMIC_ACQUIRE); }
  uint32_t* producer_ = nullptr;
  uint32_t* consumer_ = nullptr;
  Entry* entries_ = nullptr;
  uint32_t mask_ = 0;
  uint32_t size_ = 0;
  uint32_t cached_prod_ = 0;
  uint32_t cached_cons_ = 0;
};

// UMEM frames owned by the send side: handed out for a packet, back when the
// kernel's completion ring returns them. LIFO (the last freed frame is still
// in cache).
class FramePool {
 public:
  // Frames first, first + frame_bytes, ... (`count` of them).
  FramePool(uint64_t first, uint32_t frame_bytes, uint32_t count) {
    free_.reserve(count);
    for (uint32_t i = count; i > 0; --i) free_.push_back(first + uint64_t{i - 1} * frame_bytes);
    capacity_ = count;
  }
  bool empty() const { return free_.empty(); }
  size_t available() const { return free_.size(); }
  size_t capacity() const { return capacity_; }
  uint64_t take() {
    const uint64_t a = free_.back();
    free_.pop_back();
    return a;
  }
  // A frame comes back (completion ring, or an unused reservation).
  void give(uint64_t addr) {
    if (free_.size() >= capacity_) throw std::logic_error("frame pool: more frames returned than taken");
    free_.push_back(addr);
  }

 private:
  std::vector<uint64_t> free_;
  size_t capacity_ = 0;
};

}  // namespace xcphost
