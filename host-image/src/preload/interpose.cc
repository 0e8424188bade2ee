// LD_PRELOAD=libxcpsock_preload.so: moves a program's TCP stream sockets that
// match the environment (socket/match_config.hh) to xcp-stackd. A matching
// connect() or listen() replaces the socket's descriptor, in place (dup3), by
// the stack's descriptor: an AF_UNIX socketpair end for a connection, the
// daemon's SEQPACKET channel for a listener. Everything else the program
// does with the descriptor (read, write, poll, epoll, select, sendfile,
// fcntl, shutdown, fork) is the kernel's own handling of that descriptor.
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "preload/fd_table.hh"
#include "preload/real_calls.hh"
#include "socket/unix_channel.hh"
#include "socket/xcpsock.h"

namespace xcppreload {
namespace {

XCPPRELOAD_REAL(close);
XCPPRELOAD_REAL(dup3);

// A TCP stream socket of the kernel (the only kind the interposer moves).
bool is_tcp_stream(int fd, int& family) {
  int type = 0, proto = 0;
  socklen_t len = sizeof type;
  if (getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &len) != 0 || type != SOCK_STREAM) return false;
  len = sizeof family;
  if (getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &family, &len) != 0) return false;
  len = sizeof proto;
  if (getsockopt(fd, SOL_SOCKET, SO_PROTOCOL, &proto, &len) != 0) return false;
  return (family == AF_INET || family == AF_INET6) && proto == IPPROTO_TCP;
}

// Puts `stack_fd` in place of `fd`, keeping FD_CLOEXEC and O_NONBLOCK.
int replace_fd(int fd, int stack_fd) {
  const int fdfl = fcntl(fd, F_GETFD);
  const int fl = fcntl(fd, F_GETFL);
  if (fdfl < 0 || fl < 0 || real_dup3(stack_fd, fd, (fdfl & FD_CLOEXEC) ? O_CLOEXEC : 0) < 0) {
    const int e = errno;
    real_close(stack_fd);
    errno = e;
    return -1;
  }
  real_close(stack_fd);
  if ((fl & O_NONBLOCK) && fcntl(fd, F_SETFL, O_NONBLOCK) != 0) return -1;
  return 0;
}

void warn_no_daemon(int err) {
  static bool warned = false;
  if (warned || (err != ENOENT && err != ECONNREFUSED)) return;
  warned = true;
  std::fprintf(stderr, "xcpsock: cannot reach xcp-stackd at %s: %s\n", xcpsock::stackd_address(nullptr),
               std::strerror(err));
}

// A duplicated descriptor: the original keeps a pending connect's outcome.
FdInfo copy_of(FdInfo info) {
  info.pending = -1;
  return info;
}

// The stack's descriptor `s` (or its failure, s < 0) becomes the program's `fd`.
int adopt(int fd, int s, const FdInfo& info) {
  if (s < 0) {
    warn_no_daemon(errno);
    return -1;
  }
  if (replace_fd(fd, s) != 0) return -1;
  fd_store(fd, info);
  return 0;
}

xcpsock_options options_for(int fd) {
  xcpsock_options o;
  xcpsock_options_init(&o);
  o.cc = fd_pending_cc(fd) != 0 ? fd_pending_cc(fd) : config().cc;
  o.rate_bps = config().rate_bps;
  o.sndbuf_bytes = fd_pending_sndbuf(fd);
  return o;
}

}  // namespace
}  // namespace xcppreload

using namespace xcppreload;

extern "C" {

int connect(int fd, const sockaddr* addr, socklen_t len) {
  XCPPRELOAD_REAL(connect);
  if (fd_tracked(fd)) {
    // Again while a non-blocking connect runs: EALREADY, as the kernel says;
    // after it ended: its error once, else EISCONN.
    auto info = fd_settle(fd);
    if (info && info->pending >= 0) {
      errno = EALREADY;
    } else if (info && info->conn_err != 0) {
      errno = info->conn_err;
      info->conn_err = 0;
      fd_store(fd, *info);
    } else {
      errno = EISCONN;
    }
    return -1;
  }
  sockaddr_in dst{};
  int family = 0;
  if (!config().enabled() || !ipv4_of(addr, len, dst) ||
      !config().matches_connect(ntohl(dst.sin_addr.s_addr), ntohs(dst.sin_port)) || !is_tcp_stream(fd, family)) {
    return real_connect(fd, addr, len);
  }
  const xcpsock_options o = options_for(fd);
  sockaddr_in local{};
  const int fl = fcntl(fd, F_GETFL);
  if (fl >= 0 && (fl & O_NONBLOCK)) {
    // EINPROGRESS: the descriptor turns writable when the handshake ends;
    // getsockopt(SO_ERROR) then tells how (sockopt.cc).
    int pending = -1;
    const int s = xcpsock_connect_start(nullptr, &dst, &o, &pending, &local);
    FdInfo info{FdKind::kStream, family, local, dst, o.cc};
    info.pending = pending;
    if (adopt(fd, s, info) != 0) {
      if (pending >= 0) real_close(pending);
      return -1;
    }
    errno = EINPROGRESS;
    return -1;
  }
  const int s = xcpsock_connect(nullptr, &dst, &o, &local);
  return adopt(fd, s, FdInfo{FdKind::kStream, family, local, dst, o.cc});
}

int listen(int fd, int backlog) {
  XCPPRELOAD_REAL(listen);
  if (fd_tracked(fd)) return 0;  // listen() again on a listener: nothing to change
  sockaddr_storage ss{};
  socklen_t len = sizeof ss;
  sockaddr_in local{};
  int family = 0;
  if (!config().enabled() || getsockname(fd, reinterpret_cast<sockaddr*>(&ss), &len) != 0 ||
      !ipv4_of(reinterpret_cast<sockaddr*>(&ss), len, local) || local.sin_port == 0 ||
      !config().matches_listen(ntohl(local.sin_addr.s_addr), ntohs(local.sin_port)) || !is_tcp_stream(fd, family)) {
    return real_listen(fd, backlog);
  }
  const xcpsock_options o = options_for(fd);
  const int s = xcpsock_listen(nullptr, &local, &o, backlog);
  return adopt(fd, s, FdInfo{FdKind::kListener, family, local, sockaddr_in{}, o.cc});
}

int accept4(int fd, sockaddr* addr, socklen_t* len, int flags) {
  XCPPRELOAD_REAL(accept4);
  const auto l = fd_lookup(fd);
  if (!l || l->kind != FdKind::kListener) return real_accept4(fd, addr, len, flags);
  sockaddr_in peer{}, local{};
  const int s = xcpsock_accept(fd, &peer, &local, flags);
  if (s < 0) return -1;
  if (local.sin_addr.s_addr == 0) local.sin_addr = l->local.sin_addr;
  fd_store(s, FdInfo{FdKind::kStream, l->family, local, peer, l->cc});
  if (addr != nullptr && len != nullptr) write_address(peer, l->family, addr, len);
  return s;
}

int accept(int fd, sockaddr* addr, socklen_t* len) { return accept4(fd, addr, len, 0); }

int close(int fd) {
  if (const auto info = fd_lookup(fd); info && info->pending >= 0) real_close(info->pending);
  fd_forget(fd);
  return real_close(fd);
}

int dup3(int oldfd, int newfd, int flags) {
  const auto info = fd_lookup(oldfd);
  const int r = real_dup3(oldfd, newfd, flags);
  if (r >= 0) {
    fd_forget(r);
    if (info) fd_store(r, copy_of(*info));
  }
  return r;
}

int dup2(int oldfd, int newfd) {
  XCPPRELOAD_REAL(dup2);
  const auto info = fd_lookup(oldfd);
  const int r = real_dup2(oldfd, newfd);
  if (r >= 0 && r != oldfd) {
    fd_forget(r);
    if (info) fd_store(r, copy_of(*info));
  }
  return r;
}

int dup(int oldfd) {
  XCPPRELOAD_REAL(dup);
  const auto info = fd_lookup(oldfd);
  const int r = real_dup(oldfd);
  if (r >= 0 && info) fd_store(r, copy_of(*info));
  return r;
}

}  // extern "C"
