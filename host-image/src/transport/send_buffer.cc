#include "transport/send_buffer.hh"

#include <algorithm>
#include <cstring>
#include <stdexcept>

namespace xcphost {

SendBuffer::SendBuffer(size_t capacity_bytes) : cap_(capacity_bytes) {
  if (capacity_bytes == 0) throw std::invalid_argument("SendBuffer: capacity must be > 0");
  ring_ = std::make_unique_for_overwrite<uint8_t[]>(capacity_bytes);
}

size_t SendBuffer::append(std::span<const uint8_t> data) {
  const size_t n = std::min(data.size(), free_space());
  const size_t cap = cap_;
  size_t pos = static_cast<size_t>((base_ + size_) % cap);
  const size_t first = std::min(n, cap - pos);
  std::memcpy(ring_.get() + pos, data.data(), first);
  std::memcpy(ring_.get(), data.data() + first, n - first);
  size_ += n;
  return n;
}

void SendBuffer::copy_out(uint64_t offset, std::span<uint8_t> out) const {
  if (offset < base_ || offset + out.size() > end_offset()) {
    throw std::out_of_range("SendBuffer::copy_out: range outside the buffered bytes");
  }
  const size_t cap = cap_;
  const size_t pos = static_cast<size_t>(offset % cap);
  const size_t first = std::min(out.size(), cap - pos);
  std::memcpy(out.data(), ring_.get() + pos, first);
  std::memcpy(out.data() + first, ring_.get(), out.size() - first);
}

void SendBuffer::release_until(uint64_t offset) {
  if (offset <= base_) return;
  const uint64_t n = std::min<uint64_t>(offset - base_, size_);
  base_ += n;
  size_ -= static_cast<size_t>(n);
  if (offset > base_) base_ = offset;  // acked past what we hold (FIN): keep offsets consistent
}

void SendBuffer::truncate(uint64_t offset) {
  if (offset >= end_offset()) return;
  size_ = offset <= base_ ? 0 : static_cast<size_t>(offset - base_);
}

}  // namespace xcphost
