// Reads on moved connections: the socketpair carries no reset, so the first
// end-of-file a program reads on one asks the daemon how the connection
// ended, and a reset (or a connection lost to timeouts) is reported as a
// kernel TCP socket reports it: -1 with ECONNRESET (ETIMEDOUT) once, then
// end-of-file. Everything else is the C library's own call.
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include <cerrno>

#include "preload/fd_table.hh"
#include "preload/real_calls.hh"
#include "socket/xcpsock.h"

namespace xcppreload {
namespace {

// `n`: what the real call returned for `asked` bytes on `fd`.
ssize_t after_read(int fd, ssize_t n, size_t asked) {
  if (n != 0 || asked == 0 || !fd_tracked(fd)) return n;
  auto info = fd_lookup(fd);
  if (!info || info->kind != FdKind::kStream || info->fate_asked || info->pending >= 0) return n;
  info->fate_asked = true;
  fd_store(fd, *info);
  const int saved = errno;
  const int err = xcpsock_fate(nullptr, &info->local, &info->peer);
  if (err > 0) {
    errno = err;
    return -1;
  }
  errno = saved;
  return n;
}

size_t iov_bytes(const iovec* iov, int n) {
  size_t t = 0;
  for (int i = 0; iov != nullptr && i < n; ++i) t += iov[i].iov_len;
  return t;
}

}  // namespace
}  // namespace xcppreload

using namespace xcppreload;

extern "C" {

ssize_t read(int fd, void* buf, size_t n) {
  XCPPRELOAD_REAL(read);
  return after_read(fd, real_read(fd, buf, n), n);
}

ssize_t recv(int fd, void* buf, size_t n, int flags) {
  XCPPRELOAD_REAL(recv);
  return after_read(fd, real_recv(fd, buf, n, flags), n);
}

ssize_t recvfrom(int fd, void* buf, size_t n, int flags, sockaddr* addr, socklen_t* len) {
  XCPPRELOAD_REAL(recvfrom);
  return after_read(fd, real_recvfrom(fd, buf, n, flags, addr, len), n);
}

ssize_t recvmsg(int fd, msghdr* msg, int flags) {
  XCPPRELOAD_REAL(recvmsg);
  const ssize_t r = real_recvmsg(fd, msg, flags);
  return msg == nullptr ? r : after_read(fd, r, iov_bytes(msg->msg_iov, static_cast<int>(msg->msg_iovlen)));
}

ssize_t readv(int fd, const iovec* iov, int n) {
  XCPPRELOAD_REAL(readv);
  return after_read(fd, real_readv(fd, iov, n), iov_bytes(iov, n));
}

// _FORTIFY_SOURCE builds (most distribution packages) call these instead.
ssize_t __read_chk(int fd, void* buf, size_t n, size_t buflen) {
  static const auto real_chk = real<ssize_t (*)(int, void*, size_t, size_t)>("__read_chk");
  return after_read(fd, real_chk(fd, buf, n, buflen), n);
}

ssize_t __recv_chk(int fd, void* buf, size_t n, size_t buflen, int flags) {
  static const auto real_chk = real<ssize_t (*)(int, void*, size_t, size_t, int)>("__recv_chk");
  return after_read(fd, real_chk(fd, buf, n, buflen, flags), n);
}

ssize_t __recvfrom_chk(int fd, void* buf, size_t n, size_t buflen, int flags, sockaddr* addr, socklen_t* len) {
  static const auto real_chk =
      real<ssize_t (*)(int, void*, size_t, size_t, int, sockaddr*, socklen_t*)>("__recvfrom_chk");
  return after_read(fd, real_chk(fd, buf, n, buflen, flags, addr, len), n);
}

}  // extern "C"
