// A FIFO on a power-of-two ring that grows (doubling) but never shrinks, so a
// link's delay line reaches its working size once and then never allocates
// again (std::deque frees and reallocates chunks as it breathes).
#pragma once

#include <cstddef>
#include <utility>
#include <vector>

namespace xcprouter {

template <typename T>
class RingQueue {
 public:
  explicit RingQueue(size_t initial_capacity = 64) : slots_(round_up(initial_capacity)) {}

  bool empty() const { return size_ == 0; }
  size_t size() const { return size_; }
  T& front() { return slots_[head_]; }
  const T& front() const { return slots_[head_]; }

  void push_back(T v) {
    if (size_ == slots_.size()) grow();
    slots_[(head_ + size_) & (slots_.size() - 1)] = std::move(v);
    ++size_;
  }
  T pop_front() {
    T v = std::move(slots_[head_]);
    head_ = (head_ + 1) & (slots_.size() - 1);
    --size_;
    return v;
  }

 private:
  static size_t round_up(size_t n) {
    size_t c = 1;
    while (c < n) c <<= 1;
    return c;
  }
  void grow() {
    std::vector<T> bigger(slots_.size() * 2);
    for (size_t i = 0; i < size_; ++i) bigger[i] = std::move(slots_[(head_ + i) & (slots_.size() - 1)]);
    slots_ = std::move(bigger);
    head_ = 0;
  }

  std::vector<T> slots_;
  size_t head_ = 0;
  size_t size_ = 0;
};

}  // namespace xcprouter
