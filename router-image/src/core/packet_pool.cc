#include "core/packet_pool.hh"

#include <new>
#include <vector>

namespace xcprouter {

namespace {

struct FreeList {
  std::vector<void*> blocks;
  uint64_t allocated = 0;
  ~FreeList() {
    for (void* b : blocks) ::operator delete(b, std::align_val_t{alignof(Packet)});
  }
};

FreeList& free_list() {
  thread_local FreeList list;
  return list;
}

}  // namespace

void* PacketPool::allocate() {
  FreeList& fl = free_list();
  if (!fl.blocks.empty()) {
    void* b = fl.blocks.back();
    fl.blocks.pop_back();
    return b;
  }
  ++fl.allocated;
  return ::operator new(sizeof(Packet), std::align_val_t{alignof(Packet)});
}

void PacketPool::release(void* block) noexcept {
  FreeList& fl = free_list();
  // push_back may allocate only when the list outgrows its past maximum,
  // which reserve() and steady state make rare; a failure here would leak
  // one buffer, never corrupt.
  try {
    fl.blocks.push_back(block);
  } catch (...) {
    ::operator delete(block, std::align_val_t{alignof(Packet)});
  }
}

void PacketPool::reserve(size_t n) {
  FreeList& fl = free_list();
  fl.blocks.reserve(fl.blocks.size() + n);
  std::vector<void*> fresh;
  fresh.reserve(n);
  for (size_t i = 0; i < n; ++i) fresh.push_back(allocate());
  for (void* b : fresh) release(b);
}

uint64_t PacketPool::allocated_blocks() { return free_list().allocated; }
size_t PacketPool::free_blocks() { return free_list().blocks.size(); }

void* Packet::operator new(std::size_t size) {
  if (size != sizeof(Packet)) return ::operator new(size);  // a derived class: not pooled
  return PacketPool::allocate();
}

void Packet::operator delete(void* p, std::size_t size) noexcept {
  if (p == nullptr) return;
  if (size != sizeof(Packet)) {
    ::operator delete(p);
    return;
  }
  PacketPool::release(p);
}

}  // namespace xcprouter
