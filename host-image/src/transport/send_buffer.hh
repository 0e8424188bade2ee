// Bytes written by the application and not yet acknowledged, addressed by
// stream offset. A fixed-capacity ring: no allocation after construction, and
// none of it initialised (pages a stream never fills are never touched: 1024
// streams of small transfers do not pay for their buffers' capacity).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>

namespace xcphost {

class SendBuffer {
 public:
  explicit SendBuffer(size_t capacity_bytes);

  // Appends as much of `data` as fits; returns the number of bytes taken.
  size_t append(std::span<const uint8_t> data);
  // Copies [offset, offset + out.size()) into `out`; the range must lie in
  // [base_offset(), end_offset()).
  void copy_out(uint64_t offset, std::span<uint8_t> out) const;
  // Forgets every byte below `offset` (acknowledged).
  void release_until(uint64_t offset);
  // Forgets every byte at or above `offset` (written but never to be sent).
  void truncate(uint64_t offset);

  uint64_t base_offset() const { return base_; }
  uint64_t end_offset() const { return base_ + size_; }
  size_t size() const { return size_; }
  size_t free_space() const { return cap_ - size_; }

 private:
  std::unique_ptr<uint8_t[]> ring_;
  size_t cap_;
  uint64_t base_ = 0;  // stream offset of the oldest byte held
  size_t size_ = 0;
};

}  // namespace xcphost
