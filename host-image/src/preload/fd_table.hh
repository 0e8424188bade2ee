// What the interposer knows about each descriptor it moved to the XCP stack:
// listener or connection, the family the program created the socket with
// (an AF_INET6 socket sees IPv4-mapped addresses) and the addresses.
// fork() copies it with the process; exec() loses it (docs/socket-stack.md).
#pragma once

#include <netinet/in.h>

#include <cstdint>
#include <optional>

namespace xcppreload {

enum class FdKind : uint8_t { kNone = 0, kStream = 1, kListener = 2 };

struct FdInfo {
  FdKind kind = FdKind::kNone;
  int family = AF_INET;
  sockaddr_in local{};
  sockaddr_in peer{};
  int cc = 0;  // XCPSOCK_CC_*
  bool keepalive = false;
  bool reuseaddr = false;
  // A non-blocking connect() in progress: where its outcome arrives
  // (xcpsock_connect_result); -1 once it was read.
  int pending = -1;
  int conn_err = 0;  // its error (errno value) until SO_ERROR reports it
  bool fate_asked = false;  // read EOF once: the daemon was asked how it ended
};

// Descriptors up to this bound are tracked (higher ones stay on the kernel).
inline constexpr int kMaxTrackedFd = 1 << 16;

// Thread-safe; lookups of untracked descriptors take no lock.
std::optional<FdInfo> fd_lookup(int fd);
bool fd_tracked(int fd);
void fd_store(int fd, const FdInfo& info);
void fd_forget(int fd);
// TCP_CONGESTION chosen on a socket before it was moved (0 = none).
void fd_set_pending_cc(int fd, int cc);
int fd_pending_cc(int fd);
// SO_SNDBUF set on a socket before it was moved, as the kernel stored it (0 = none).
void fd_set_pending_sndbuf(int fd, uint32_t bytes);
uint32_t fd_pending_sndbuf(int fd);

}  // namespace xcppreload
