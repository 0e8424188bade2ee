#include "preload/fd_table.hh"

#include <atomic>
#include <mutex>
#include <unordered_map>

namespace xcppreload {
namespace {

// One byte per descriptor for the lock-free "is it ours" test that close()
// and every interposed call make; the details live in a map under a mutex.
std::atomic<uint8_t> g_kind[kMaxTrackedFd];
std::atomic<int8_t> g_pending_cc[kMaxTrackedFd];
std::atomic<uint32_t> g_pending_sndbuf[kMaxTrackedFd];

std::mutex& table_mutex() {
  static std::mutex m;
  return m;
}
std::unordered_map<int, FdInfo>& table() {
  static auto* t = new std::unordered_map<int, FdInfo>();  // never destroyed: used until exit
  return *t;
}

bool in_range(int fd) { return fd >= 0 && fd < kMaxTrackedFd; }

}  // namespace

bool fd_tracked(int fd) { return in_range(fd) && g_kind[fd].load(std::memory_order_acquire) != 0; }

std::optional<FdInfo> fd_lookup(int fd) {
  if (!fd_tracked(fd)) return std::nullopt;
  std::lock_guard lock(table_mutex());
  const auto it = table().find(fd);
  if (it == table().end()) return std::nullopt;
  return it->second;
}

void fd_store(int fd, const FdInfo& info) {
  if (!in_range(fd)) return;
  std::lock_guard lock(table_mutex());
  table()[fd] = info;
  g_kind[fd].store(static_cast<uint8_t>(info.kind), std::memory_order_release);
}

void fd_forget(int fd) {
  if (!in_range(fd)) return;
  g_pending_cc[fd].store(0, std::memory_order_relaxed);
  g_pending_sndbuf[fd].store(0, std::memory_order_relaxed);
  if (g_kind[fd].load(std::memory_order_acquire) == 0) return;
  std::lock_guard lock(table_mutex());
  table().erase(fd);
  g_kind[fd].store(0, std::memory_order_release);
}

void fd_set_pending_cc(int fd, int cc) {
  if (in_range(fd)) g_pending_cc[fd].store(static_cast<int8_t>(cc), std::memory_order_relaxed);
}

int fd_pending_cc(int fd) { return in_range(fd) ? g_pending_cc[fd].load(std::memory_order_relaxed) : 0; }

void fd_set_pending_sndbuf(int fd, uint32_t bytes) {
  if (in_range(fd)) g_pending_sndbuf[fd].store(bytes, std::memory_order_relaxed);
}

uint32_t fd_pending_sndbuf(int fd) {
  return in_range(fd) ? g_pending_sndbuf[fd].load(std::memory_order_relaxed) : 0;
}

}  // namespace xcppreload
