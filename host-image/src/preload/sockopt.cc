// The interposer's answers about moved sockets: names, and the socket
// options real programs ask for, answered from what the stack does (honest
// values) or refused with ENOPROTOOPT (docs/socket-stack.md lists them).
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "preload/fd_table.hh"
#include "preload/real_calls.hh"
#include "socket/xcpsock.h"
#include "socket/stackd_protocol.hh"

namespace xcppreload {

const xcpsock::MatchConfig& config() {
  static const xcpsock::MatchConfig cfg = [] {
    const auto parsed = xcpsock::match_config_from_env();
    if (!parsed.config) {
      std::fprintf(stderr, "xcpsock: %s\n", parsed.error.c_str());
      std::_Exit(2);
    }
    return *parsed.config;
  }();
  return cfg;
}

void write_address(const sockaddr_in& addr, int family, sockaddr* out, socklen_t* len) {
  if (family == AF_INET6) {
    sockaddr_in6 a{};
    a.sin6_family = AF_INET6;
    a.sin6_port = addr.sin_port;
    a.sin6_addr.s6_addr[10] = 0xff;
    a.sin6_addr.s6_addr[11] = 0xff;
    std::memcpy(&a.sin6_addr.s6_addr[12], &addr.sin_addr, 4);
    std::memcpy(out, &a, std::min<size_t>(*len, sizeof a));
    *len = sizeof a;
    return;
  }
  std::memcpy(out, &addr, std::min<size_t>(*len, sizeof addr));
  *len = sizeof addr;
}

bool ipv4_of(const sockaddr* addr, socklen_t len, sockaddr_in& out) {
  if (addr == nullptr) return false;
  if (addr->sa_family == AF_INET && len >= sizeof(sockaddr_in)) {
    std::memcpy(&out, addr, sizeof out);
    return true;
  }
  if (addr->sa_family == AF_INET6 && len >= sizeof(sockaddr_in6)) {
    sockaddr_in6 a;
    std::memcpy(&a, addr, sizeof a);
    const uint8_t* b = a.sin6_addr.s6_addr;
    const bool any = std::all_of(b, b + 16, [](uint8_t x) { return x == 0; });
    const bool mapped = std::all_of(b, b + 10, [](uint8_t x) { return x == 0; }) && b[10] == 0xff && b[11] == 0xff;
    if (!any && !mapped) return false;  // a real IPv6 address stays on the kernel
    out = sockaddr_in{};
    out.sin_family = AF_INET;
    out.sin_port = a.sin6_port;
    if (mapped) std::memcpy(&out.sin_addr, b + 12, 4);
    return true;
  }
  return false;
}

std::optional<FdInfo> fd_settle(int fd) {
  XCPPRELOAD_REAL(close);
  auto info = fd_lookup(fd);
  if (!info || info->pending < 0) return info;
  sockaddr_in local{};
  if (xcpsock_connect_result(info->pending, 0, &local) == 0) {
    info->local = local;
  } else if (errno == EINPROGRESS) {
    return info;
  } else {
    info->conn_err = errno;
  }
  real_close(info->pending);
  info->pending = -1;
  fd_store(fd, *info);
  return info;
}

namespace {

int put_int(void* val, socklen_t* len, int v) {
  if (val == nullptr || len == nullptr || *len < sizeof(int)) {
    errno = EINVAL;
    return -1;
  }
  std::memcpy(val, &v, sizeof v);
  *len = sizeof v;
  return 0;
}

int refuse() {
  errno = ENOPROTOOPT;
  return -1;
}

// TCP_INFO from the daemon's view of the connection (cwnd, srtt, retransmits).
int tcp_info_of(const FdInfo& info, void* val, socklen_t* len) {
  struct xcpsock_info x{};
  if (xcpsock_info(nullptr, &info.local, &info.peer, &x) != 0) return -1;
  tcp_info t{};
  const uint32_t mss = xcpsock::kMssBytes;
  t.tcpi_state = x.state == 1 ? 1 /* TCP_ESTABLISHED */ : 7 /* TCP_CLOSE */;
  t.tcpi_snd_mss = mss;
  t.tcpi_rcv_mss = mss;
  t.tcpi_snd_cwnd = x.cwnd_bytes / mss;
  t.tcpi_rtt = x.srtt_us;
  t.tcpi_total_retrans = static_cast<uint32_t>(x.retransmits);
  std::memcpy(val, &t, std::min<size_t>(*len, sizeof t));
  *len = std::min<socklen_t>(*len, sizeof t);
  return 0;
}

// The connection's controller: the one the program chose, else what the
// daemon gave it (its --cc); listeners answer with their own choice.
int actual_cc(const FdInfo& info) {
  if (info.cc != XCPSOCK_CC_DEFAULT || info.kind != FdKind::kStream) return info.cc;
  struct xcpsock_info x{};
  return xcpsock_info(nullptr, &info.local, &info.peer, &x) == 0 ? x.cc : info.cc;
}

// TCP_CONGESTION on a moved socket: the stack cannot switch a live
// connection's controller, so only its own name is accepted (iperf3 -C sets
// it after connect(); XCP_SOCKET_CC or a setsockopt before connect chooses).
int set_congestion(const FdInfo& info, const void* val, socklen_t len) {
  char n[16] = {};
  std::memcpy(n, val, std::min<size_t>(len, sizeof n - 1));
  const int cc = xcpsock_cc_from_name(n);
  if (cc < 0) {
    errno = ENOENT;  // what the kernel says for an algorithm it does not have
    return -1;
  }
  if (cc == actual_cc(info)) return 0;
  errno = EOPNOTSUPP;
  return -1;
}

}  // namespace
}  // namespace xcppreload

using namespace xcppreload;

extern "C" {

int getsockname(int fd, sockaddr* addr, socklen_t* len) {
  XCPPRELOAD_REAL(getsockname);
  const auto info = fd_settle(fd);
  if (!info) return real_getsockname(fd, addr, len);
  write_address(info->local, info->family, addr, len);
  return 0;
}

int getpeername(int fd, sockaddr* addr, socklen_t* len) {
  XCPPRELOAD_REAL(getpeername);
  const auto info = fd_lookup(fd);
  if (!info) return real_getpeername(fd, addr, len);
  if (info->kind != FdKind::kStream) {
    errno = ENOTCONN;
    return -1;
  }
  write_address(info->peer, info->family, addr, len);
  return 0;
}

int getsockopt(int fd, int level, int name, void* val, socklen_t* len) {
  XCPPRELOAD_REAL(getsockopt);
  auto info = fd_settle(fd);
  if (!info) return real_getsockopt(fd, level, name, val, len);
  if (level == SOL_SOCKET && name == SO_ERROR && (info->conn_err != 0 || info->pending >= 0)) {
    // A non-blocking connect's outcome (0 while it runs), reported once.
    // The socketpair's own error (a reset when the daemon dropped the
    // connection) is read too, so that it is not reported a second time.
    int own = 0;
    socklen_t own_len = sizeof own;
    real_getsockopt(fd, SOL_SOCKET, SO_ERROR, &own, &own_len);
    const int err = info->conn_err;
    info->conn_err = 0;
    fd_store(fd, *info);
    return put_int(val, len, err);
  }
  if (level == SOL_SOCKET) {
    switch (name) {
      case SO_TYPE: return put_int(val, len, SOCK_STREAM);
      case SO_DOMAIN: return put_int(val, len, info->family);
      case SO_PROTOCOL: return put_int(val, len, IPPROTO_TCP);
      case SO_ACCEPTCONN: return put_int(val, len, info->kind == FdKind::kListener);
      case SO_KEEPALIVE: return put_int(val, len, info->keepalive);
      case SO_REUSEADDR: return put_int(val, len, info->reuseaddr);
      case SO_ERROR:  // a blocking connect's errors were connect()'s; the stream's are the socketpair's
      case SO_SNDBUF:
      case SO_RCVBUF: return real_getsockopt(fd, level, name, val, len);
      default: return refuse();
    }
  }
  if (level == IPPROTO_TCP) {
    switch (name) {
      case TCP_NODELAY: return put_int(val, len, 1);  // the stack never delays small writes
      case TCP_MAXSEG: return put_int(val, len, static_cast<int>(xcpsock::kMssBytes));
      case TCP_CONGESTION: {
        const char* n = xcpsock_cc_name(actual_cc(*info));
        if (val == nullptr || len == nullptr) return refuse();
        std::strncpy(static_cast<char*>(val), n, *len);
        *len = static_cast<socklen_t>(std::min<size_t>(*len, std::strlen(n) + 1));
        return 0;
      }
      case TCP_INFO:
        if (info->kind != FdKind::kStream || val == nullptr || len == nullptr) return refuse();
        return tcp_info_of(*info, val, len);
      default: return refuse();
    }
  }
  return refuse();
}

int setsockopt(int fd, int level, int name, const void* val, socklen_t len) {
  XCPPRELOAD_REAL(setsockopt);
  XCPPRELOAD_REAL(getsockopt);
  // A controller of the stack named on a socket before it connects or
  // listens: remembered for the stack (the kernel knows no "xcp").
  if (level == IPPROTO_TCP && name == TCP_CONGESTION && val != nullptr && config().enabled() && !fd_tracked(fd)) {
    char n[16] = {};
    std::memcpy(n, val, std::min<size_t>(len, sizeof n - 1));
    const int cc = xcpsock_cc_from_name(n);
    if (cc > 0) {
      fd_set_pending_cc(fd, cc);
      return 0;
    }
  }
  if (level == SOL_SOCKET && name == SO_SNDBUF && config().enabled() && !fd_tracked(fd)) {
    // Remembered for the stack in case the socket moves (as the kernel stored it).
    const int rc = real_setsockopt(fd, level, name, val, len);
    int stored = 0;
    socklen_t sl = sizeof stored;
    if (rc == 0 && getsockopt(fd, SOL_SOCKET, SO_SNDBUF, &stored, &sl) == 0 && stored > 0) {
      fd_set_pending_sndbuf(fd, static_cast<uint32_t>(stored));
    }
    return rc;
  }
  auto info = fd_lookup(fd);
  if (!info) return real_setsockopt(fd, level, name, val, len);
  int v = 0;
  if (val != nullptr && len >= sizeof(int)) std::memcpy(&v, val, sizeof v);
  if (level == SOL_SOCKET) {
    switch (name) {
      case SO_SNDBUF: {
        // The socketpair's buffer, and the stack's limit on what the
        // connection holds unacknowledged (the value the kernel stored:
        // doubled, within net.core.wmem_max, as for a TCP socket).
        if (real_setsockopt(fd, level, name, val, len) != 0) return -1;
        int stored = 0;
        socklen_t sl = sizeof stored;
        if (info->kind != FdKind::kStream || real_getsockopt(fd, SOL_SOCKET, SO_SNDBUF, &stored, &sl) != 0) return 0;
        // While a non-blocking connect runs the connection has no address
        // yet: the stack's limit stays automatic.
        if (const auto settled = fd_settle(fd); settled && settled->pending >= 0) return 0;
        return xcpsock_set_sndbuf(nullptr, &info->local, &info->peer, static_cast<uint32_t>(stored)) == 0 || errno == ENOTCONN
                   ? 0
                   : -1;
      }
      case SO_RCVBUF: return real_setsockopt(fd, level, name, val, len);  // the socketpair's buffer
      case SO_KEEPALIVE: info->keepalive = v != 0; fd_store(fd, *info); return 0;  // idle timeout instead (docs)
      case SO_REUSEADDR: info->reuseaddr = v != 0; fd_store(fd, *info); return 0;
      default: return refuse();
    }
  }
  if (level == IPPROTO_TCP && name == TCP_NODELAY) return 0;  // always on
  if (level == IPPROTO_TCP && name == TCP_CONGESTION && val != nullptr) return set_congestion(*info, val, len);
  return refuse();
}

}  // extern "C"
